package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

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

// Recorded is what one RecordReset or RecordStep call did.
type Recorded struct {
	// Position is where the recorder stands after the call (what Reset and
	// Step return).
	Position Position
	// Files are the absolute paths written, in write order: frames (.txt
	// then .png) before metadata, for the step and then, after a level
	// completion, for the next level's initial_*.
	Files []string
	// Warning is "" or one line about cells outside 0..15 in the response
	// (see OutOfPaletteWarning); the caller prints it.
	Warning string
}

// OutOfPaletteWarning is the line the recorder returns in Recorded.Warning
// when a response has n cells outside 0..15, the first in frame f (0-based,
// server order) at column x, row y. Such a cell is recorded, in the .txt as
// in the PNG, as colour 5 (000000, black): the spec's palette renders values
// outside 0..15 black, and a hex digit keeps the file readable by every
// reader, evident's and baseline1's (package doc, "Decisions").
func OutOfPaletteWarning(n, f, x, y int) string {
	return fmt.Sprintf("warning: the server response has %d cell(s) outside the palette 0..15 (first: frame %d, x=%d, y=%d); recorded as 5 (black), as the spec's palette draws them", n, f, x, y)
}

// blackIndex is the colour an out-of-palette cell is recorded as.
const blackIndex = 5

// checkFrames validates a response's frames for writing: each must be
// GameSide×GameSide. It returns the frames to write, with every cell
// outside 0..15 replaced by blackIndex (the input is not changed), and the
// warning for them ("" when there is none).
func checkFrames(frames []frame.Grid) ([]frame.Grid, string, error) {
	out, cloned := frames, false
	bad, bf, bx, by := 0, 0, 0, 0
	for i, g := range frames {
		if g.IsZero() {
			return nil, "", fmt.Errorf("session: server response: frame %d of %d is empty", i, len(frames))
		}
		if g.Width() != frame.GameSide || g.Height() != frame.GameSide {
			return nil, "", fmt.Errorf("session: server response: frame %d of %d is %d×%d cells, want %d×%d",
				i, len(frames), g.Width(), g.Height(), frame.GameSide, frame.GameSide)
		}
		if g.InPalette() {
			continue
		}
		if !cloned {
			out, cloned = slices.Clone(frames), true
		}
		c := g.Clone()
		for j, v := range c.Cells() {
			if v >= frame.NumColors {
				if bad == 0 {
					bf, bx, by = i, j%c.Width(), j/c.Width()
				}
				bad++
				c.Cells()[j] = blackIndex
			}
		}
		out[i] = c
	}
	if bad == 0 {
		return frames, "", nil
	}
	return out, OutOfPaletteWarning(bad, bf, bx, by), nil
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

// writeFrame writes g as txtName and pngName in dir and appends both paths
// to *files.
func writeFrame(dir, txtName, pngName string, g frame.Grid, files *[]string) error {
	if err := writeAtomic(dir, txtName, g.AppendASCII(nil)); err != nil {
		return err
	}
	*files = append(*files, filepath.Join(dir, txtName))
	var buf bytes.Buffer
	if err := g.WritePNG(&buf); err != nil {
		return fmt.Errorf("session: %s: %w", filepath.Join(dir, pngName), err)
	}
	if err := writeAtomic(dir, pngName, buf.Bytes()); err != nil {
		return err
	}
	*files = append(*files, filepath.Join(dir, pngName))
	return nil
}

// writeMetadata writes m as name in dir (see Metadata.MarshalFile) and
// appends its path to *files.
func writeMetadata(dir, name string, m Metadata, files *[]string) error {
	data, err := m.MarshalFile()
	if err != nil {
		return fmt.Errorf("%w (writing %s)", err, filepath.Join(dir, name))
	}
	if err := writeAtomic(dir, name, data); err != nil {
		return err
	}
	*files = append(*files, filepath.Join(dir, name))
	return nil
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
func (r *Recorder) startAttempt(level int, resp Response, files *[]string) (Position, error) {
	attempt, dir, err := r.claimAttempt(level)
	if err != nil {
		return r.pos, err
	}
	final := resp.Frames[len(resp.Frames)-1]
	if err := writeFrame(dir, InitialFrameFile, InitialPNGFile, final, files); err != nil {
		return r.pos, err
	}
	if err := writeMetadata(dir, InitialMetadataFile, resp.Metadata, files); err != nil {
		return r.pos, err
	}
	r.pos = Position{Level: level, Attempt: attempt, Dir: dir}
	r.ended, r.won = "", false
	return r.pos, nil
}

// Reset is RecordReset returning only the Position; the warning, if any,
// is lost (use RecordReset to print it).
func (r *Recorder) Reset(resp Response) (Position, error) {
	rec, err := r.RecordReset(resp)
	return rec.Position, err
}

// RecordReset records the response to a RESET: a new attempt folder for
// level Metadata.LevelsCompleted+1, numbered after the highest existing
// attempt of that level, holding the response as initial_* (its last
// frame). It fails when the response has no frame, a frame is not 64×64
// (the error names the server response, the frame and its size), the
// metadata has no state, or on I/O errors. Cells outside 0..15 are recorded
// as black with Recorded.Warning set.
func (r *Recorder) RecordReset(resp Response) (Recorded, error) {
	rec := Recorded{Position: r.pos}
	if len(resp.Frames) == 0 {
		return rec, errors.New("session: server response to RESET has no frame")
	}
	frames, warning, err := checkFrames(resp.Frames)
	if err != nil {
		return rec, err
	}
	resp.Frames, rec.Warning = frames, warning
	if resp.Metadata.State == "" {
		return rec, errors.New("session: RESET response metadata has no state")
	}
	rec.Position, err = r.startAttempt(resp.Metadata.LevelsCompleted+1, resp, &rec.Files)
	return rec, err
}

// Step is RecordStep returning only the Position; the warning, if any, is
// lost (use RecordStep to print it).
func (r *Recorder) Step(resp Response) (Position, error) {
	rec, err := r.RecordStep(resp)
	return rec.Position, err
}

// RecordStep records the response to one real action as the next step k
// of the current attempt: intermediate frames (every frame but the last,
// named by its 0-based index in the response: step_kkkk_intermediate_00 is
// the first frame), the final frame (the last), then the metadata, as
// baseline1's client names them. When its observed status is
// LEVEL_COMPLETED and the game is not won, the response is also written as
// the initial_* of a new attempt of the next level, which becomes current.
// It fails with ErrNoAttempt before any attempt, when the current attempt
// has ended (GAME_OVER, or a won game: record a RESET), when the response
// has no frame and is not GAME_OVER, a frame is not 64×64, the metadata has
// no state, or on I/O errors. Cells outside 0..15 are recorded as black with
// Recorded.Warning set. Recorded.Position is the current position after the
// call.
func (r *Recorder) RecordStep(resp Response) (Recorded, error) {
	rec := Recorded{Position: r.pos}
	if r.pos.Level == 0 {
		return rec, ErrNoAttempt
	}
	if r.ended != "" {
		why := string(r.ended)
		if r.won {
			why = "a won game"
		}
		return rec, fmt.Errorf("session: %s ended with %s at step %d; record a RESET response first",
			filepath.Base(r.pos.Dir), why, r.pos.Step)
	}
	m := resp.Metadata
	if m.State == "" {
		return rec, errors.New("session: step response metadata has no state")
	}
	observed := ObservedStatus(m, r.pos.Level)
	if len(resp.Frames) == 0 && observed != GameOver {
		return rec, fmt.Errorf("session: server response to a %s step has no frame", observed)
	}
	frames, warning, err := checkFrames(resp.Frames)
	if err != nil {
		return rec, err
	}
	resp.Frames, rec.Warning = frames, warning
	k, dir := r.pos.Step+1, r.pos.Dir
	for i, g := range resp.Frames {
		var err error
		if i == len(resp.Frames)-1 {
			err = writeFrame(dir, StepFinalFile(k), StepFinalPNGFile(k), g, &rec.Files)
		} else {
			err = writeFrame(dir, StepIntermediateFile(k, i), StepIntermediatePNGFile(k, i), g, &rec.Files)
		}
		if err != nil {
			return rec, err
		}
	}
	if err := writeMetadata(dir, StepMetadataFile(k), m, &rec.Files); err != nil {
		return rec, err
	}
	r.pos.Step = k
	rec.Position = r.pos
	if observed == Running {
		return rec, nil
	}
	r.ended = observed
	if observed == LevelCompleted {
		if gameWon(m) {
			r.won = true
			return rec, nil
		}
		rec.Position, err = r.startAttempt(r.pos.Level+1, resp, &rec.Files)
		return rec, err
	}
	return rec, nil
}
