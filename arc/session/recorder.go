package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"evident/arc/frame"
)

// Response is one game response as the recorder stores it: the frames of a
// FrameResponse in server order (several when the game animates; the last is
// the settled frame) and the metadata to write beside them.
type Response struct {
	Frames   []frame.Grid
	Metadata Metadata
}

// Position is where the recorder stands: the current attempt folder and the
// number of steps recorded in it.
type Position struct {
	Level, Attempt int
	// Step is the number of steps in the attempt (0 right after its initial
	// response).
	Step int
	// Dir is the attempt folder's absolute path.
	Dir string
}

// ErrNoAttempt is returned by Recorder.Step before any attempt exists.
var ErrNoAttempt = errors.New("session: no attempt yet; record a RESET response first")

// Recorder writes responses into a session tree in the layout Read reads
// (spec arc.md "Session recording"). It is not safe for concurrent use, and
// only one Recorder should write a tree at a time.
type Recorder struct {
	root  string
	pos   Position
	ended Status // "" while the attempt runs; else the status that ended it
	won   bool
}

// OpenRecorder opens the session folder root (normally
// <workspace>/client/session), creating it if needed, and resumes after the
// newest record already there (see the package doc). It fails, naming the
// file, when an existing attempt folder lacks its initial metadata or its
// last metadata file cannot be parsed.
func OpenRecorder(root string) (*Recorder, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	dirs, err := listAttemptDirs(abs)
	if err != nil {
		return nil, err
	}
	r := &Recorder{root: abs}
	bestIndex := -1
	for _, d := range dirs {
		l, err := scanAttempt(filepath.Join(abs, d.name))
		if err != nil {
			return nil, err
		}
		if l.initialMeta == "" {
			return nil, layoutErr(filepath.Join(l.dir, InitialMetadataFile), "missing")
		}
		last := filepath.Join(l.dir, l.initialMeta)
		if sn := l.steps[l.maxStep]; sn != nil {
			if sn.metadata == "" {
				return nil, layoutErr(filepath.Join(l.dir, StepMetadataFile(l.maxStep)), "missing, but %s exists", anyName(sn))
			}
			last = filepath.Join(l.dir, sn.metadata)
		}
		m, err := readMetadataFile(last)
		if err != nil {
			return nil, err
		}
		// dirs are sorted by (level, attempt), so ≥ prefers the later on ties.
		if m.StepIndex >= bestIndex {
			bestIndex = m.StepIndex
			r.pos = Position{Level: l.level, Attempt: l.attempt, Step: l.maxStep, Dir: l.dir}
			r.ended, r.won = "", false
			if s := ObservedStatus(m, l.level); s != Running && l.maxStep > 0 {
				r.ended, r.won = s, s == LevelCompleted && gameWon(m)
			}
		}
	}
	return r, nil
}

// Position returns where the recorder stands; the zero Position before any
// attempt.
func (r *Recorder) Position() Position { return r.pos }

// Root returns the absolute path of the session folder.
func (r *Recorder) Root() string { return r.root }

// gameWon reports whether m ends the game with a win: no level follows.
func gameWon(m Metadata) bool {
	return m.State == StateWin || (m.WinLevels > 0 && m.LevelsCompleted >= m.WinLevels)
}

// checkFrames validates a response's frames for writing.
func checkFrames(frames []frame.Grid) error {
	for i, g := range frames {
		if g.IsZero() {
			return fmt.Errorf("session: frame %d of the response is empty", i)
		}
		if !g.InPalette() {
			return fmt.Errorf("session: frame %d of the response has values outside 0..15", i)
		}
	}
	return nil
}

// writeAtomic writes data to dir/name through a temporary file in dir and a
// rename.
func writeAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp*")
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("session: write %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// writeFrame writes g as txtName and pngName in dir.
func writeFrame(dir, txtName, pngName string, g frame.Grid) error {
	if err := writeAtomic(dir, txtName, g.AppendASCII(nil)); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := g.WritePNG(&buf); err != nil {
		return fmt.Errorf("session: %s: %w", filepath.Join(dir, pngName), err)
	}
	return writeAtomic(dir, pngName, buf.Bytes())
}

// writeMetadata writes m as name in dir.
func writeMetadata(dir, name string, m Metadata) error {
	data, err := m.MarshalFile()
	if err != nil {
		return fmt.Errorf("%w (writing %s)", err, filepath.Join(dir, name))
	}
	return writeAtomic(dir, name, data)
}

// claimAttempt creates the folder of the next free attempt of level (highest
// existing attempt number + 1, padded or not) and returns its number and path.
func (r *Recorder) claimAttempt(level int) (int, string, error) {
	dirs, err := listAttemptDirs(r.root)
	if err != nil {
		return 0, "", err
	}
	next := 1
	for _, d := range dirs {
		if d.level == level && d.attempt >= next {
			next = d.attempt + 1
		}
	}
	for ; ; next++ {
		dir := filepath.Join(r.root, AttemptDirName(level, next))
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return next, dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return 0, "", fmt.Errorf("session: %w", err)
		}
	}
}

// startAttempt claims an attempt folder of level and writes resp as its
// initial_* files (last frame, PNG, then metadata).
func (r *Recorder) startAttempt(level int, resp Response) (Position, error) {
	attempt, dir, err := r.claimAttempt(level)
	if err != nil {
		return r.pos, err
	}
	final := resp.Frames[len(resp.Frames)-1]
	if err := writeFrame(dir, InitialFrameFile, InitialPNGFile, final); err != nil {
		return r.pos, err
	}
	if err := writeMetadata(dir, InitialMetadataFile, resp.Metadata); err != nil {
		return r.pos, err
	}
	r.pos = Position{Level: level, Attempt: attempt, Dir: dir}
	r.ended, r.won = "", false
	return r.pos, nil
}

// Reset records the response to a RESET: a new attempt folder for level
// Metadata.LevelsCompleted+1, numbered after the highest existing attempt of
// that level, holding the response as initial_* (its last frame). It fails
// when the response has no frame, a frame is empty or out of palette, the
// metadata has no state, or on I/O errors.
func (r *Recorder) Reset(resp Response) (Position, error) {
	if len(resp.Frames) == 0 {
		return r.pos, errors.New("session: RESET response has no frame")
	}
	if err := checkFrames(resp.Frames); err != nil {
		return r.pos, err
	}
	if resp.Metadata.State == "" {
		return r.pos, errors.New("session: RESET response metadata has no state")
	}
	return r.startAttempt(resp.Metadata.LevelsCompleted+1, resp)
}

// Step records the response to one real action as the next step of the
// current attempt: intermediate frames (all but the last, numbered from 01),
// the final frame, then the metadata. When its observed status is
// LEVEL_COMPLETED and the game is not won, the response is also written as
// the initial_* of a new attempt of the next level, which becomes current.
// It fails with ErrNoAttempt before any attempt, when the current attempt has
// ended (GAME_OVER, or a won game: record a RESET), when the response has no
// frame and is not GAME_OVER, a frame is empty or out of palette, the
// metadata has no state, or on I/O errors. The returned Position is the
// current one after the call.
func (r *Recorder) Step(resp Response) (Position, error) {
	if r.pos.Level == 0 {
		return r.pos, ErrNoAttempt
	}
	if r.ended != "" {
		why := string(r.ended)
		if r.won {
			why = "a won game"
		}
		return r.pos, fmt.Errorf("session: %s ended with %s at step %d; record a RESET response first",
			filepath.Base(r.pos.Dir), why, r.pos.Step)
	}
	m := resp.Metadata
	if m.State == "" {
		return r.pos, errors.New("session: step response metadata has no state")
	}
	observed := ObservedStatus(m, r.pos.Level)
	if len(resp.Frames) == 0 && observed != GameOver {
		return r.pos, fmt.Errorf("session: %s step response has no frame", observed)
	}
	if err := checkFrames(resp.Frames); err != nil {
		return r.pos, err
	}
	k, dir := r.pos.Step+1, r.pos.Dir
	for i, g := range resp.Frames {
		var err error
		if i == len(resp.Frames)-1 {
			err = writeFrame(dir, StepFinalFile(k), StepFinalPNGFile(k), g)
		} else {
			err = writeFrame(dir, StepIntermediateFile(k, i+1), StepIntermediatePNGFile(k, i+1), g)
		}
		if err != nil {
			return r.pos, err
		}
	}
	if err := writeMetadata(dir, StepMetadataFile(k), m); err != nil {
		return r.pos, err
	}
	r.pos.Step = k
	if observed == Running {
		return r.pos, nil
	}
	r.ended = observed
	if observed == LevelCompleted {
		if gameWon(m) {
			r.won = true
			return r.pos, nil
		}
		return r.startAttempt(r.pos.Level+1, resp)
	}
	return r.pos, nil
}
