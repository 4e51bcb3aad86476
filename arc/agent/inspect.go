package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"

	"evident/arc/session"
	"evident/internal/file"
)

// Inspection is what the controller knows about the game after a turn: it
// reads only WORKSPACE/client/session (spec arc.md "The controller,
// exactly"; baseline1 session_inspector.py inspect_sessions).
type Inspection struct {
	// Level is the highest level folder (1-based); 0 when the session has
	// no attempt folder (the controller then stops).
	Level int
	// Attempt is the latest attempt of Level (its highest number).
	Attempt int
	// StepsTotal counts the step metadata files of every attempt (RESETs
	// are initial_metadata.json, not steps, so they are excluded).
	StepsTotal int
	// StepsLevel counts those of Level's attempts; StepsAttempt those of
	// the latest attempt.
	StepsLevel, StepsAttempt int
	// WinLevels is the latest attempt's initial_metadata win_levels.
	WinLevels int
	// Status is the latest attempt's status by its last step (RUNNING
	// without steps): GAME_OVER if its state is GAME_OVER, LEVEL_COMPLETED
	// if levels_completed ≥ Level, else RUNNING.
	Status session.Status
	// Solved: the latest attempt's level equals WinLevels and it ended
	// LEVEL_COMPLETED. GameOver: it ended GAME_OVER.
	Solved, GameOver bool
	// AttemptsPerLevel maps each level to its number of attempt folders.
	AttemptsPerLevel map[int]int
}

var stepMetadataRE = regexp.MustCompile(`^step_(\d{4})_metadata\.json$`)

// maxMetadataBytes caps one metadata file read by Inspect (1 MiB).
const maxMetadataBytes = 1 << 20

// Inspect reads the session under root (WORKSPACE/client/session). A missing
// session folder, or one without attempt folders, is the zero Inspection
// (Level 0), as baseline1's inspector returns. Attempt folders match
// ^level_(\d+)_attempt_(\d+)$ (session.ParseAttemptDirName), step metadata
// files ^step_(\d{4})_metadata\.json$ (spec arc.md "Compatibility facts").
// Errors name the file: an unreadable folder, a metadata file over 1 MiB or
// that does not parse (session.ParseMetadata), a missing
// initial_metadata.json.
func Inspect(root string) (Inspection, error) {
	in := Inspection{Status: session.Running, AttemptsPerLevel: map[int]int{}}
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return in, nil
	}
	if err != nil {
		return in, fmt.Errorf("inspect %s: %w", root, err)
	}
	type att struct {
		level, attempt int
		dir            string
		steps          []int
	}
	var atts []att
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		l, a, ok := session.ParseAttemptDirName(e.Name())
		if !ok {
			continue
		}
		dir := filepath.Join(root, e.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			return in, fmt.Errorf("inspect %s: %w", dir, err)
		}
		x := att{level: l, attempt: a, dir: dir}
		for _, f := range files {
			if m := stepMetadataRE.FindStringSubmatch(f.Name()); m != nil && !f.IsDir() {
				n, _ := strconv.Atoi(m[1])
				x.steps = append(x.steps, n)
			}
		}
		sort.Ints(x.steps)
		atts = append(atts, x)
	}
	if len(atts) == 0 {
		return in, nil
	}
	sort.Slice(atts, func(i, j int) bool {
		if atts[i].level != atts[j].level {
			return atts[i].level < atts[j].level
		}
		return atts[i].attempt < atts[j].attempt
	})
	last := atts[len(atts)-1]
	in.Level, in.Attempt = last.level, last.attempt
	for _, a := range atts {
		in.StepsTotal += len(a.steps)
		in.AttemptsPerLevel[a.level]++
		if a.level == in.Level {
			in.StepsLevel += len(a.steps)
		}
	}
	in.StepsAttempt = len(last.steps)
	init, err := readMetadata(filepath.Join(last.dir, session.InitialMetadataFile))
	if err != nil {
		return in, err
	}
	in.WinLevels = init.WinLevels
	if len(last.steps) > 0 {
		m, err := readMetadata(filepath.Join(last.dir, session.StepMetadataFile(last.steps[len(last.steps)-1])))
		if err != nil {
			return in, err
		}
		in.Status = session.ObservedStatus(m, in.Level)
	}
	in.GameOver = in.Status == session.GameOver
	in.Solved = in.Level == in.WinLevels && in.Status == session.LevelCompleted
	return in, nil
}

// readMetadata reads and parses one metadata file, capped at 1 MiB.
func readMetadata(path string) (session.Metadata, error) {
	b, err := file.ReadCapped(path, maxMetadataBytes)
	if err != nil {
		return session.Metadata{}, fmt.Errorf("inspect: %w", err)
	}
	m, err := session.ParseMetadata(b)
	if err != nil {
		return m, fmt.Errorf("inspect %s: %w", path, err)
	}
	return m, nil
}
