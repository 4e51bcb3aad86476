package client

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"evident/arc/session"
	"evident/internal/file"
)

// actionSemantics is the hint baseline1's client prints after each
// available action (client.py ACTION_SEMANTICS).
var actionSemantics = map[int]string{
	1: "usual semantics: up",
	2: "usual semantics: down",
	3: "usual semantics: left",
	4: "usual semantics: right",
	5: "usual semantics: primary interaction",
	6: "usual semantics: coordinate action",
	7: "usual semantics: undo",
}

// StatusHeader is the line baseline1's client prints before the summary
// of `status` (client.py status_command).
const StatusHeader = "Last step information:"

// WriteSummary writes res as baseline1's client prints one command
// (twma_v1.6 client.py print_step_summary), line for line:
//
//	step: 7
//	state: NOT_FINISHED
//	level: 2 / 3 (completed: 1)
//	action: ACTION4
//	available_actions_next: [1(ACTION1, usual semantics: up), 6(ACTION6, usual semantics: coordinate action)]
//	path: /abs/ws/client/session/level_02_attempt_01
//	files:
//	  step_0003_metadata.json
//	  step_0003_final.png
//	  step_0003_final.txt
//
// step, state, the level numbers and available_actions_next come from
// res.Metadata (the metadata recorded for the response); the level is
// min(levels_completed+1, win_levels), or levels_completed+1 when
// win_levels is 0; action is res.Action's name (the name of the metadata's
// action_input.id when res.Action is empty, else "UNKNOWN"). res.Files are
// grouped by folder in their order, one "path:"/"files:" block per folder:
// a step that completes a level has two (the step, then the next level's
// initial_* files). Status is printed with StatusHeader before it. The
// error is w's.
func WriteSummary(w io.Writer, res *Result) error {
	m := res.Metadata
	bw := bufio.NewWriter(w)
	level := m.LevelsCompleted + 1
	if m.WinLevels != 0 {
		level = min(level, m.WinLevels)
	}
	action := res.Action.Name
	if action == "" && m.ActionInput != nil && m.ActionInput.ID.Name != "" {
		action = m.ActionInput.ID.Name
	}
	if action == "" {
		action = "UNKNOWN"
	}
	acts := make([]string, len(m.AvailableActions))
	for i, a := range m.AvailableActions {
		sem, ok := actionSemantics[a]
		if !ok {
			sem = "usual semantics: unknown"
		}
		acts[i] = fmt.Sprintf("%d(ACTION%d, %s)", a, a, sem)
	}
	fmt.Fprintf(bw, "step: %d\n", m.StepIndex)
	fmt.Fprintf(bw, "state: %s\n", m.State)
	fmt.Fprintf(bw, "level: %d / %d (completed: %d)\n", level, m.WinLevels, m.LevelsCompleted)
	fmt.Fprintf(bw, "action: %s\n", action)
	fmt.Fprintf(bw, "available_actions_next: [%s]\n", strings.Join(acts, ", "))
	var dirs []string
	byDir := map[string][]string{}
	for _, p := range res.Files {
		d := filepath.Dir(p)
		if _, ok := byDir[d]; !ok {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], filepath.Base(p))
	}
	for _, d := range dirs {
		fmt.Fprintf(bw, "path: %s\n", d)
		fmt.Fprintln(bw, "files:")
		for _, f := range byDir[d] {
			fmt.Fprintf(bw, "  %s\n", f)
		}
	}
	return bw.Flush()
}

// initialFiles lists an attempt's initial_* files that exist, in
// baseline1's order: metadata, PNG, text.
func initialFiles(dir string) []string {
	return existing(dir, session.InitialMetadataFile, session.InitialPNGFile, session.InitialFrameFile)
}

// stepFiles lists the files of step k in dir that exist, in baseline1's
// order (client.py save_step_artifacts): the metadata, then every frame in
// response order, PNG before text — the intermediates by number, the final
// frame last. Intermediates are found on disk, whatever their numbering.
func stepFiles(dir string, k int) ([]string, error) {
	out := existing(dir, session.StepMetadataFile(k))
	prefix := strings.TrimSuffix(session.StepIntermediateFile(k, 0), "00.txt")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	var nums []int
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		digits, ok := strings.CutSuffix(rest, ".txt")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(digits); err == nil && n >= 0 && digits == fmt.Sprintf("%02d", n) {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	for _, n := range nums {
		out = append(out, existing(dir, session.StepIntermediatePNGFile(k, n), session.StepIntermediateFile(k, n))...)
	}
	return append(out, existing(dir, session.StepFinalPNGFile(k), session.StepFinalFile(k))...), nil
}

// existing returns dir/name for the names that exist.
func existing(dir string, names ...string) []string {
	var out []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// LastStep returns the latest recorded command as a Result, read from the
// session only (it sends nothing): what baseline1's `status` summarises
// (client.py status_command). At the start of an attempt (after a RESET or
// a completed level) that is the attempt's initial_metadata.json and
// initial_* files; else the latest step's metadata and files. Action is
// the metadata's action_input.id by name (empty when it has none). It
// fails with ErrNotStarted, when the session has no attempt, or when the
// metadata cannot be read (the error names the file).
func (c *Client) LastStep() (*Result, error) {
	st, err := c.ReadState()
	if err != nil {
		return nil, err
	}
	rec, err := session.OpenRecorder(c.SessionRoot())
	if err != nil {
		return nil, err
	}
	p := rec.Position()
	if p.Dir == "" {
		return nil, errors.New("client: the session has no attempt yet (" + c.SessionRoot() + ")")
	}
	res := &Result{State: *st, Recorded: p, Next: p, Status: session.Running}
	name := session.InitialMetadataFile
	if p.Step > 0 {
		name = session.StepMetadataFile(p.Step)
		if res.Files, err = stepFiles(p.Dir, p.Step); err != nil {
			return nil, err
		}
	} else {
		res.Files = initialFiles(p.Dir)
	}
	m, err := readMetadata(filepath.Join(p.Dir, name))
	if err != nil {
		return nil, err
	}
	res.Metadata = m
	if p.Step > 0 {
		res.Status = session.ObservedStatus(m, p.Level)
	}
	if m.ActionInput != nil {
		if n := m.ActionInput.ID.Name; n != "" {
			res.Action = session.Action{Name: n}
		}
	}
	return res, nil
}

// maxMetadata bounds a metadata file the client reads back, in bytes.
const maxMetadata = 1 << 20

// readMetadata reads and parses a recorded metadata file (at most
// maxMetadata bytes), naming it in errors.
func readMetadata(path string) (session.Metadata, error) {
	data, err := file.ReadCapped(path, maxMetadata)
	if err != nil {
		return session.Metadata{}, fmt.Errorf("client: %w", err)
	}
	m, err := session.ParseMetadata(data)
	if err != nil {
		return session.Metadata{}, fmt.Errorf("client: %s: %w", path, err)
	}
	return m, nil
}
