// Package policy holds the guard rails of an agent run that the game client
// enforces (issue 11 item 3; spec arc.md "The agent loop": "RESET only by
// the controller", "every real action predicted"). The controller of
// evident/arc/agent writes WORKSPACE/agent/policy.json when it starts a run;
// evident/arc/client reads it before every command it would send and, while
// it exists, refuses:
//
//   - RESET unless the controller sends it (client.MoveOptions.Via
//     "controller");
//   - an action sent directly (`client.py move`, not through the plan
//     executor) beyond the level's exploration budget (default 3 on level
//     1, 0 on later levels);
//   - any action once the level holds MaxLevelActions actions (counted as
//     the client counts them).
//
// Every refusal is appended to the run's transcript
// (WORKSPACE/agent/transcript.jsonl) as a "refusal" entry. It is a leaf
// package (standard library only) so that the client can import it.
//
// # Decisions where the spec is silent
//
//   - No policy file, no agent run: the client behaves as before.
//   - Direct moves are counted in WORKSPACE/agent/direct_moves.json (level →
//     count), written by the client under its lock before the action is
//     sent: a direct move that the server then rejects still spends the
//     budget.
//   - The policy is a guard rail against an agent's habits, not a sandbox:
//     the files are the agent's to read (and, with effort, to change); the
//     transcript records every refusal so an auditor sees attempts.
package policy

import (
	"encoding/json"
	"errors"
	"evident/internal/file"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Paths inside the workspace.
const (
	File        = "agent/policy.json"
	UsageFile   = "agent/direct_moves.json"
	Transcript  = "agent/transcript.jsonl"
	maxFileSize = 1 << 16
)

// Via values: who sends a command (client.MoveOptions.Via).
const (
	ViaDirect     = ""
	ViaPlanExec   = "plan-exec"
	ViaController = "controller"
)

// DefaultExploration is the direct-move budget of level 1 when the
// controller sets none (issue 11 item 3: "say 3 on level 1").
const DefaultExploration = 3

// Policy is agent/policy.json.
type Policy struct {
	// Exploration maps a level ("1") to its budget of direct moves; levels
	// not named get DefaultBudget.
	Exploration   map[string]int `json:"exploration"`
	DefaultBudget int            `json:"default_budget"`
	// MaxLevelActions caps the actions of one level (0: the client's own
	// 1,500 only).
	MaxLevelActions int `json:"max_level_actions,omitempty"`
	// Iteration is the controller's current iteration, copied into refusal
	// entries.
	Iteration int `json:"iteration"`
}

// Default is the policy of a run without options: 3 direct moves on level
// 1, none later, no cap below the client's.
func Default() Policy {
	return Policy{Exploration: map[string]int{"1": DefaultExploration}}
}

// Budget is the direct-move budget of level.
func (p Policy) Budget(level int) int {
	if n, ok := p.Exploration[strconv.Itoa(level)]; ok {
		return n
	}
	return p.DefaultBudget
}

// Write writes p to WS/agent/policy.json (atomically).
func Write(ws string, p Policy) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return file.WriteAtomic(filepath.Join(ws, File), append(b, '\n'))
}

// Remove deletes the policy file (the end of an agent run).
func Remove(ws string) error {
	err := os.Remove(filepath.Join(ws, File))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Read reads WS/agent/policy.json; ok is false when there is none. A file
// over 64 KiB or not the JSON of a Policy is an error naming it.
func Read(ws string) (p Policy, ok bool, err error) {
	path := filepath.Join(ws, File)
	b, err := file.ReadCapped(path, maxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, false, fmt.Errorf("%s: %w", path, err)
	}
	return p, true, nil
}

// ErrRefused is wrapped by every refusal of the policy.
var ErrRefused = errors.New("refused by the agent-run policy")

// Refusal is one command the policy refused: What (the command, e.g.
// "move RESET"), Why (the rule, for the agent and the auditor).
type Refusal struct {
	What, Why string
}

// Error is "agent run: WHAT refused: WHY".
func (r *Refusal) Error() string { return "agent run: " + r.What + " refused: " + r.Why }

// Unwrap returns ErrRefused.
func (r *Refusal) Unwrap() error { return ErrRefused }

// Command is what the client is about to send.
type Command struct {
	// Action is the action name ("RESET", "ACTION1"…), Text how to show it
	// ("ACTION6 x=15 y=47").
	Action, Text string
	// Via is who sends it (ViaDirect, ViaPlanExec, ViaController).
	Via string
	// Level is the current level (1-based) and LevelActions the actions
	// it holds so far (the client's count).
	Level, LevelActions int
}

// Check applies the policy of workspace ws to c; it returns nil when there
// is no policy or c is allowed. A direct move within budget is counted in
// UsageFile. A refusal is appended to the transcript (best effort: an error
// writing it is joined to the refusal) and returned as a *Refusal. now
// stamps the entry (nil: time.Now).
func Check(ws string, c Command, now func() time.Time) error {
	p, ok, err := Read(ws)
	if err != nil || !ok {
		return err
	}
	if c.Via == ViaController {
		return nil
	}
	what := "move " + c.Text
	if c.Via == ViaPlanExec {
		what = "plan_executor " + c.Text
	}
	refuse := func(why string) error {
		r := &Refusal{What: what, Why: why}
		if err := AppendRefusal(ws, p.Iteration, r.What, r.Why, now); err != nil {
			return errors.Join(r, err)
		}
		return r
	}
	if c.Action == "RESET" {
		return refuse("RESET is sent only by the controller in an agent run; report GAME_OVER and end your turn")
	}
	if p.MaxLevelActions > 0 && c.LevelActions >= p.MaxLevelActions {
		return refuse(fmt.Sprintf("level %d holds %d actions, the run's cap is %d", c.Level, c.LevelActions, p.MaxLevelActions))
	}
	if c.Via == ViaPlanExec {
		return nil
	}
	used, err := readUsage(ws)
	if err != nil {
		return err
	}
	key := strconv.Itoa(c.Level)
	if b := p.Budget(c.Level); used[key] >= b {
		return refuse(fmt.Sprintf("direct moves are limited to %d on level %d and %d were sent; send actions through plan_executor.py so that the world model predicts each one", b, c.Level, used[key]))
	}
	used[key]++
	b, _ := json.MarshalIndent(used, "", "  ")
	return file.WriteAtomic(filepath.Join(ws, UsageFile), append(b, '\n'))
}

// DirectMoves returns the direct moves counted per level ("1" → n).
func DirectMoves(ws string) (map[string]int, error) { return readUsage(ws) }

func readUsage(ws string) (map[string]int, error) {
	path := filepath.Join(ws, UsageFile)
	used := map[string]int{}
	b, err := file.ReadCapped(path, maxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return used, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &used); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return used, nil
}

// AppendRefusal appends one refusal entry to WS/agent/transcript.jsonl, in
// the transcript's format (evident/arc/agent Entry: time, iteration, kind
// "refusal", what, why), with one write on a file opened O_APPEND.
func AppendRefusal(ws string, iteration int, what, why string, now func() time.Time) error {
	if now == nil {
		now = time.Now
	}
	b, err := json.Marshal(map[string]any{
		"time": now().UTC().Format(time.RFC3339Nano), "iteration": iteration, "kind": "refusal", "what": what, "why": why,
	})
	if err != nil {
		return err
	}
	path := filepath.Join(ws, Transcript)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
