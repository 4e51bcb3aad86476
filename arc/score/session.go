package score

import (
	"errors"
	"fmt"
	"sort"

	"evident/arc/session"
)

// record is one recorded response: the metadata and where it came from.
type record struct {
	path string
	m    session.Metadata
}

// SessionUpdates replays a recorded session as the scorecard's updates, in
// step_index order (spec arc.md "Compatibility facts": step_index counts
// every command, RESETs included, 0 for the opening RESET). The responses
// are the initial metadata of attempts opened by a RESET and every step;
// the initial metadata of an attempt opened by the step that completed the
// previous level repeats that step and is skipped.
//
// The session does not record full_reset, so it is inferred as the server
// decides it (evident/arc/games; arcengine resets the whole game the same
// way): a RESET is a full reset when it is the first response, when no
// action was taken since the level began (the previous RESET or level
// completion), after a win, or when it brought levels_completed back to 0
// from more; one that leaves levels_completed above 0 is a level reset.
// The session has no guid: updates carry "".
//
// Errors: a session without responses, a response without action_input or
// with an unknown action id, two responses with the same step_index (the
// files are named), a first response that is not a RESET.
func SessionUpdates(s *session.Session) ([]Update, error) {
	var recs []record
	for _, l := range s.Levels {
		for _, a := range l.Attempts {
			if ai := a.InitialMetadata.ActionInput; ai != nil && ai.ID.Code == 0 {
				recs = append(recs, record{a.InitialMetadataPath, a.InitialMetadata})
			}
			for _, st := range a.Steps {
				recs = append(recs, record{st.MetadataPath, st.Metadata})
			}
		}
	}
	if len(recs) == 0 {
		return nil, errors.New("score: the session records no RESET or step")
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].m.StepIndex < recs[j].m.StepIndex })
	var out []Update
	acted, prevState, prevLC := false, "", 0
	for i, r := range recs {
		if i > 0 && r.m.StepIndex == recs[i-1].m.StepIndex {
			return nil, fmt.Errorf("score: %s and %s: both have step_index %d; the order of the commands is lost", recs[i-1].path, r.path, r.m.StepIndex)
		}
		ai := r.m.ActionInput
		if ai == nil || !ai.ID.Known() {
			return nil, fmt.Errorf("score: %s: want action_input with a RESET or ACTION1..ACTION7 id", r.path)
		}
		u := Update{Action: ai.ID.Code, State: r.m.State, LevelsCompleted: r.m.LevelsCompleted}
		if i == 0 && u.Action != 0 {
			return nil, fmt.Errorf("score: %s: the first recorded response (step_index %d) is %s, not the opening RESET", r.path, r.m.StepIndex, ai.ID.Name)
		}
		if u.Action == 0 {
			u.FullReset = (i == 0 || !acted || prevState == StateWin || prevLC > 0) && u.LevelsCompleted == 0
			acted = false
		} else {
			acted = u.LevelsCompleted <= prevLC
		}
		prevState, prevLC = u.State, u.LevelsCompleted
		out = append(out, u)
	}
	return out, nil
}

// Replay applies updates to a new Card of gameID.
func Replay(gameID string, updates []Update) Card {
	c := Card{GameID: gameID}
	for _, u := range updates {
		c.Update(u)
	}
	return c
}
