package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"evident/arc/frame"
)

// Session is a whole recorded session (spec arc.md "Session recording").
type Session struct {
	// Root is the absolute path of the client/session folder read.
	Root string
	// Levels are the levels that have at least one attempt folder, by
	// increasing Index (numbers may have gaps).
	Levels []Level
}

// Level is every attempt recorded for one level.
type Level struct {
	// Index is the level number, from 1.
	Index int
	// Attempts are by increasing Attempt.Index.
	Attempts []Attempt
}

// Attempt is one level_LL_attempt_AA folder (seed session_tools.Attempt).
type Attempt struct {
	// Level and Index are the level and attempt numbers from the folder name.
	Level, Index int
	// Dir is the folder's absolute path.
	Dir string
	// InitialMetadata and InitialFrame are the response that opened the
	// attempt (a RESET, or the step that completed the previous level).
	InitialMetadata Metadata
	InitialFrame    frame.Grid
	// Paths of the initial files; InitialPNGPath is "" when the PNG is absent.
	InitialMetadataPath, InitialFramePath, InitialPNGPath string
	// Steps are the steps read, by increasing Index: 1..n, so
	// Steps[k-1].Index == k, except that a step skipped after a GAME_OVER
	// step (see Skipped) leaves its number out.
	Steps []Step
	// Skipped are the metadata paths of steps that have no final frame and
	// follow a GAME_OVER step: baseline1's reader skips them, and so does
	// this one (package doc).
	Skipped []string
	// Status is the observed status of the last step, or of the initial
	// metadata when there is no step.
	Status Status
}

// Step is one real action and the response to it (seed
// session_tools.AttemptStep).
type Step struct {
	// Index is the 1-based step number within the attempt.
	Index int
	// Action is decoded from Metadata.ActionInput.
	Action Action
	// Metadata is step_kkkk_metadata.json; MetadataPath its absolute path.
	Metadata     Metadata
	MetadataPath string
	// Observed is ObservedStatus(Metadata, level).
	Observed Status
	// Final is the settled frame (the last of the response); the zero Grid
	// when absent, which only a GAME_OVER step may be.
	Final frame.Grid
	// FinalPath and FinalPNGPath are "" when the file is absent.
	FinalPath, FinalPNGPath string
	// Intermediates are the earlier frames of an animated response, in order;
	// IntermediatePaths[i] and IntermediatePNGPaths[i] ("" when absent) are
	// their files.
	Intermediates                           []frame.Grid
	IntermediatePaths, IntermediatePNGPaths []string
}

// ModelLevel is the highest level that has an attempt folder (the "Model
// level" of the verifier's messages), 0 for an empty session.
func (s *Session) ModelLevel() int {
	if len(s.Levels) == 0 {
		return 0
	}
	return s.Levels[len(s.Levels)-1].Index
}

// Level returns the level with the given number, or nil when it has no
// attempt folder.
func (s *Session) Level(index int) *Level {
	i, found := slices.BinarySearchFunc(s.Levels, index, func(l Level, n int) int { return l.Index - n })
	if !found {
		return nil
	}
	return &s.Levels[i]
}

// layoutErr is a layout error naming a file or folder.
func layoutErr(path, format string, args ...any) error {
	return parseErr(path, 0, 0, format, args...)
}

// Read reads every attempt folder under root (normally
// <workspace>/client/session). A missing root is an error wrapping
// fs.ErrNotExist; an empty root gives a Session without levels. Any error in
// an attempt folder fails the whole read (see ReadAttempt).
func Read(root string) (*Session, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	dirs, err := listAttemptDirs(abs)
	if err != nil {
		return nil, err
	}
	s := &Session{Root: abs}
	for _, d := range dirs {
		a, err := ReadAttempt(filepath.Join(abs, d.name))
		if err != nil {
			return nil, err
		}
		if n := len(s.Levels); n == 0 || s.Levels[n-1].Index != a.Level {
			s.Levels = append(s.Levels, Level{Index: a.Level})
		}
		l := &s.Levels[len(s.Levels)-1]
		l.Attempts = append(l.Attempts, a)
	}
	return s, nil
}

type attemptDir struct {
	name           string
	level, attempt int
}

// listAttemptDirs lists the attempt folders of root sorted by (level,
// attempt), failing on two names for the same pair.
func listAttemptDirs(root string) ([]attemptDir, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	var out []attemptDir
	for _, e := range entries {
		l, a, ok := ParseAttemptDirName(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		out = append(out, attemptDir{e.Name(), l, a})
	}
	slices.SortFunc(out, func(x, y attemptDir) int {
		if x.level != y.level {
			return x.level - y.level
		}
		return x.attempt - y.attempt
	})
	for i := 1; i < len(out); i++ {
		if out[i].level == out[i-1].level && out[i].attempt == out[i-1].attempt {
			return nil, layoutErr(filepath.Join(root, out[i].name), "same level %d attempt %d as folder %s",
				out[i].level, out[i].attempt, out[i-1].name)
		}
	}
	return out, nil
}

// stepNames are the file names found for one step ("" when absent).
type stepNames struct {
	metadata, final, finalPNG string
	inter                     map[int]*[2]string // number → .txt, .png
}

// attemptLayout is an attempt folder's file names, before any file is read.
type attemptLayout struct {
	dir                                   string
	level, attempt                        int
	initialMeta, initialFrame, initialPNG string
	steps                                 map[int]*stepNames
	maxStep                               int
}

// set stores name into *slot, failing if another name holds it already.
func (l *attemptLayout) set(slot *string, name string) error {
	if *slot != "" {
		return layoutErr(filepath.Join(l.dir, name), "same file as %s (differently padded)", *slot)
	}
	*slot = name
	return nil
}

// scanAttempt lists an attempt folder's files by role. It reads no file.
func scanAttempt(dir string) (*attemptLayout, error) {
	level, attempt, ok := ParseAttemptDirName(filepath.Base(dir))
	if !ok {
		return nil, layoutErr(dir, "folder name is not level_{L}_attempt_{A} with L, A ≥ 1")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	l := &attemptLayout{dir: dir, level: level, attempt: attempt, steps: map[int]*stepNames{}}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		switch name {
		case InitialMetadataFile:
			l.initialMeta = name
			continue
		case InitialFrameFile:
			l.initialFrame = name
			continue
		case InitialPNGFile:
			l.initialPNG = name
			continue
		}
		k, kind, inter, padded, ok := parseStepFileName(name)
		if !ok {
			continue
		}
		if !padded {
			return nil, layoutErr(filepath.Join(dir, name),
				"step numbers in file names have exactly %d digits (step_%04d_...), as baseline1's readers require; they would skip this file", StepDigits, k)
		}
		if k == 0 {
			return nil, layoutErr(filepath.Join(dir, name), "step numbers count from 1")
		}
		sn := l.steps[k]
		if sn == nil {
			sn = &stepNames{}
			l.steps[k] = sn
			l.maxStep = max(l.maxStep, k)
		}
		switch kind {
		case kindMetadata:
			err = l.set(&sn.metadata, name)
		case kindFinal:
			err = l.set(&sn.final, name)
		case kindFinalPNG:
			err = l.set(&sn.finalPNG, name)
		default:
			if sn.inter == nil {
				sn.inter = map[int]*[2]string{}
			}
			p := sn.inter[inter]
			if p == nil {
				p = &[2]string{}
				sn.inter[inter] = p
			}
			if kind == kindIntermediate {
				err = l.set(&p[0], name)
			} else {
				err = l.set(&p[1], name)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return l, nil
}

// readMetadataFile reads and parses a metadata file, naming it in errors.
func readMetadataFile(path string) (Metadata, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Metadata{}, fmt.Errorf("session: %w", err)
	}
	m, err := ParseMetadata(data)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.File = path
			return Metadata{}, pe
		}
		return Metadata{}, fmt.Errorf("session: %s: %w", path, err)
	}
	return m, nil
}

// ReadAttempt reads one attempt folder, whose base name gives its level and
// attempt (level_2_attempt_1 and level_02_attempt_01 both work). It fails,
// naming the file, when initial_metadata.json or initial_frame.txt is missing
// or bad, a frame file is not 64×64 (the error gives its size), a step file's
// number does not have exactly four digits, a step number is missing between
// 1 and the highest one, a step lacks its metadata, a step that is not
// GAME_OVER and does not follow a GAME_OVER step lacks its final or an
// intermediate .txt, a step's action cannot be decoded, or two names fill the
// same slot. A step without its final frame right after a GAME_OVER step is
// skipped (Attempt.Skipped), as baseline1's reader skips it.
func ReadAttempt(dir string) (Attempt, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Attempt{}, fmt.Errorf("session: %w", err)
	}
	l, err := scanAttempt(abs)
	if err != nil {
		return Attempt{}, err
	}
	a := Attempt{Level: l.level, Index: l.attempt, Dir: abs}
	if l.initialMeta == "" {
		return a, layoutErr(filepath.Join(abs, InitialMetadataFile), "missing")
	}
	if l.initialFrame == "" {
		return a, layoutErr(filepath.Join(abs, InitialFrameFile), "missing")
	}
	a.InitialMetadataPath = filepath.Join(abs, l.initialMeta)
	a.InitialFramePath = filepath.Join(abs, l.initialFrame)
	if l.initialPNG != "" {
		a.InitialPNGPath = filepath.Join(abs, l.initialPNG)
	}
	if a.InitialMetadata, err = readMetadataFile(a.InitialMetadataPath); err != nil {
		return a, err
	}
	if a.InitialFrame, err = readGameFrame(a.InitialFramePath); err != nil {
		return a, err
	}
	a.Status = ObservedStatus(a.InitialMetadata, a.Level)
	a.Steps = make([]Step, 0, l.maxStep)
	for k := 1; k <= l.maxStep; k++ {
		sn := l.steps[k]
		if sn == nil {
			return a, layoutErr(abs, "step %d missing (no step_%04d_* file) but step %d exists", k, k, l.maxStep)
		}
		afterGameOver := len(a.Steps) > 0 && a.Steps[len(a.Steps)-1].Observed == GameOver
		if afterGameOver && sn.final == "" && sn.metadata != "" {
			// baseline1 session_tools.py: a step without its final frame
			// right after a GAME_OVER step is skipped.
			a.Skipped = append(a.Skipped, filepath.Join(abs, sn.metadata))
			continue
		}
		st, err := readStep(abs, l.level, k, sn)
		if err != nil {
			return a, err
		}
		a.Steps = append(a.Steps, st)
		a.Status = st.Observed
	}
	return a, nil
}

// readGameFrame reads a session frame file, which must be
// frame.GameSide×frame.GameSide (spec arc.md "What it is for": the game
// sends 64×64 frames); another size is an error naming the file and the
// size, not a later frame mismatch.
func readGameFrame(path string) (frame.Grid, error) {
	g, err := frame.ReadASCIIFile(path)
	if err != nil {
		return g, fmt.Errorf("session: %w", err)
	}
	if g.Width() != frame.GameSide || g.Height() != frame.GameSide {
		return frame.Grid{}, layoutErr(path, "frame is %d×%d cells (width×height), want %d×%d",
			g.Width(), g.Height(), frame.GameSide, frame.GameSide)
	}
	return g, nil
}

// anyName returns one file name of a step, for error messages.
func anyName(sn *stepNames) string {
	for _, n := range []string{sn.metadata, sn.final, sn.finalPNG} {
		if n != "" {
			return n
		}
	}
	for _, p := range sn.inter {
		if p[0] != "" {
			return p[0]
		}
		return p[1]
	}
	return ""
}

// readStep reads step k of the attempt folder dir of level.
func readStep(dir string, level, k int, sn *stepNames) (Step, error) {
	st := Step{Index: k}
	if sn.metadata == "" {
		return st, layoutErr(filepath.Join(dir, StepMetadataFile(k)), "missing, but %s exists", anyName(sn))
	}
	st.MetadataPath = filepath.Join(dir, sn.metadata)
	var err error
	if st.Metadata, err = readMetadataFile(st.MetadataPath); err != nil {
		return st, err
	}
	st.Observed = ObservedStatus(st.Metadata, level)
	if st.Action, err = ActionFromInput(st.Metadata.ActionInput); err != nil {
		return st, layoutErr(st.MetadataPath, "%v", err)
	}
	optional := st.Observed == GameOver
	if sn.finalPNG != "" {
		st.FinalPNGPath = filepath.Join(dir, sn.finalPNG)
	}
	if sn.final != "" {
		st.FinalPath = filepath.Join(dir, sn.final)
		if st.Final, err = readGameFrame(st.FinalPath); err != nil {
			return st, err
		}
	} else if !optional {
		return st, layoutErr(filepath.Join(dir, StepFinalFile(k)), "missing for a %s step", st.Observed)
	}
	nums := make([]int, 0, len(sn.inter))
	for n := range sn.inter {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for _, n := range nums {
		p := sn.inter[n]
		if p[0] == "" {
			if optional {
				continue
			}
			return st, layoutErr(filepath.Join(dir, p[1]), "PNG without its .txt frame %s", StepIntermediateFile(k, n))
		}
		path := filepath.Join(dir, p[0])
		g, err := readGameFrame(path)
		if err != nil {
			return st, err
		}
		png := ""
		if p[1] != "" {
			png = filepath.Join(dir, p[1])
		}
		st.Intermediates = append(st.Intermediates, g)
		st.IntermediatePaths = append(st.IntermediatePaths, path)
		st.IntermediatePNGPaths = append(st.IntermediatePNGPaths, png)
	}
	return st, nil
}

// ReadInitialFullFrame reads dir/level_N.txt (dir normally
// <workspace>/initial_full_frames; no zero padding), the full initial frame
// of a partly visible level, which may be larger than 64×64 (spec arc.md
// "Vocabulary and contracts"). ok is false, with no error, when the file does
// not exist.
func ReadInitialFullFrame(dir string, level int) (g frame.Grid, ok bool, err error) {
	g, err = frame.ReadASCIIFile(filepath.Join(dir, InitialFullFrameFile(level)))
	if errors.Is(err, fs.ErrNotExist) {
		return frame.Grid{}, false, nil
	}
	if err != nil {
		return frame.Grid{}, false, fmt.Errorf("session: %w", err)
	}
	return g, true, nil
}
