package web

// Reading an ARC run folder for the ARC view (issue 11 item 6): the session's
// attempt folders by file name, one page of steps at a time, the transcript
// as a stream, mismatch folders and git tags. Every file is opened through an
// os.Root of the run, so no name can leave the run's folder (package doc,
// "ARC"). Nothing here decides a score or draws a frame: scores come from
// evident/arc/score, frames from evident/arc/frame.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"evident/arc/agent"
	"evident/arc/client"
	"evident/arc/frame"
	"evident/arc/games"
	"evident/arc/planexec"
	"evident/arc/score"
	"evident/arc/session"
)

// Caps on what the ARC view reads from a run folder.
const (
	arcMaxMetadata = 1 << 20  // one step_kkkk_metadata.json or initial_metadata.json
	arcMaxState    = 16 << 20 // client/client_state.json (the client's own cap)
	arcMaxPNG      = 16 << 20 // one recorded PNG
	arcMaxASCII    = 2 * (frame.MaxSide + 1) * frame.MaxSide
	arcMaxRefs     = 16 << 20 // .git/packed-refs
	arcMaxField    = 64 << 10 // one text field of a transcript entry as shown
)

// readCappedRoot reads name inside root, failing when it is not a regular
// file or holds more than limit bytes. Errors name the file relative to the
// run.
func readCappedRoot(root *os.Root, name string, limit int64) ([]byte, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return b, nil
}

// isWorkspace reports whether root looks like an agent workspace: it holds
// a client/session folder, an agent transcript, or evident_workspace.json.
func isWorkspace(root *os.Root) bool {
	if st, err := root.Stat(session.Dir); err == nil && st.IsDir() {
		return true
	}
	for _, name := range []string{agent.TranscriptPath, "evident_workspace.json"} {
		if st, err := root.Stat(name); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// readDirNames lists the entries of dir inside root.
func readDirNames(root *os.Root, dir string) ([]fs.DirEntry, error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// ---- client state ------------------------------------------------------------

// arcState is what the view shows of client/client_state.json.
type arcState struct {
	GameID, State              string
	LevelsCompleted, WinLevels int
	StepIndex                  int
	Stopped, Expired           bool
	Err                        string // unreadable state file; "" when fine or absent
	Present                    bool
}

func readState(root *os.Root) arcState {
	b, err := readCappedRoot(root, client.StateFile, arcMaxState)
	if errors.Is(err, fs.ErrNotExist) {
		return arcState{}
	}
	if err != nil {
		return arcState{Err: err.Error()}
	}
	var st client.State
	if err := json.Unmarshal(b, &st); err != nil {
		return arcState{Err: fmt.Sprintf("%s: %v", client.StateFile, err)}
	}
	return arcState{GameID: st.GameID, State: st.State, LevelsCompleted: st.LevelsCompleted, WinLevels: st.WinLevels,
		StepIndex: st.StepIndex, Stopped: st.Stopped, Expired: st.Expired, Present: true}
}

// ---- attempt folders ---------------------------------------------------------

// stepFileRE matches the step files the session reader reads (four-digit
// step numbers; session package doc, "Reading rules").
var stepFileRE = regexp.MustCompile(`^step_(\d{4})_(metadata\.json|final\.txt|final\.png|intermediate_(\d{1,9})\.(txt|png))$`)

// stepFiles are the files found for one step.
type stepFiles struct {
	metadata, final, finalPNG bool
	inter                     map[int]string // intermediate number → base name without extension
}

// attemptFiles is one level_LL_attempt_AA folder by file name, before any
// file is read.
type attemptFiles struct {
	Name           string // the folder's name
	Level, Attempt int
	initialMeta    bool
	initialFrame   bool // .txt or .png
	steps          map[int]*stepFiles
	MaxStep        int
}

// listAttempts lists the session's attempt folders sorted by (level,
// attempt); a missing session folder gives none.
func listAttempts(root *os.Root) ([]attemptFiles, error) {
	entries, err := readDirNames(root, session.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []attemptFiles
	for _, e := range entries {
		l, a, ok := session.ParseAttemptDirName(e.Name())
		if ok && e.IsDir() {
			out = append(out, attemptFiles{Name: e.Name(), Level: l, Attempt: a})
		}
	}
	slices.SortFunc(out, func(x, y attemptFiles) int {
		if x.Level != y.Level {
			return x.Level - y.Level
		}
		return x.Attempt - y.Attempt
	})
	return out, nil
}

// scanAttemptFiles reads the names in one attempt folder (no file content).
func scanAttemptFiles(root *os.Root, name string) (*attemptFiles, error) {
	l, a, ok := session.ParseAttemptDirName(name)
	if !ok || strings.ContainsAny(name, `/\`) {
		return nil, fs.ErrNotExist
	}
	entries, err := readDirNames(root, path.Join(session.Dir, name))
	if err != nil {
		return nil, err
	}
	af := &attemptFiles{Name: name, Level: l, Attempt: a, steps: map[int]*stepFiles{}}
	for _, e := range entries {
		n := e.Name()
		switch n {
		case session.InitialMetadataFile:
			af.initialMeta = true
			continue
		case session.InitialFrameFile, session.InitialPNGFile:
			af.initialFrame = true
			continue
		}
		m := stepFileRE.FindStringSubmatch(n)
		if m == nil {
			continue
		}
		k, _ := strconv.Atoi(m[1])
		if k == 0 {
			continue
		}
		sf := af.steps[k]
		if sf == nil {
			sf = &stepFiles{}
			af.steps[k] = sf
			af.MaxStep = max(af.MaxStep, k)
		}
		switch m[2] {
		case "metadata.json":
			sf.metadata = true
		case "final.txt":
			sf.final = true
		case "final.png":
			sf.finalPNG = true
		default:
			i, _ := strconv.Atoi(m[3])
			if sf.inter == nil {
				sf.inter = map[int]string{}
			}
			sf.inter[i] = strings.TrimSuffix(strings.TrimSuffix(n, ".txt"), ".png")
		}
	}
	return af, nil
}

// readMetadata reads and parses one metadata file of an attempt folder.
func readMetadata(root *os.Root, attempt, file string) (session.Metadata, error) {
	name := path.Join(session.Dir, attempt, file)
	b, err := readCappedRoot(root, name, arcMaxMetadata)
	if err != nil {
		return session.Metadata{}, err
	}
	m, err := session.ParseMetadata(b)
	if err != nil {
		return session.Metadata{}, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// ---- RHAE --------------------------------------------------------------------

// arcScore is the RHAE of a run's session as `evident arc score` computes it:
// score.SessionUpdates, score.Replay and score.Environment over the
// session's metadata, with the built-in game's baselines.
type arcScore struct {
	Env       score.EnvironmentScore
	Baselines []int
	GameID    string
	Err       string // why there is no score
}

// scoreRun scores the session of root. The session is read for its
// metadata only (frames are not loaded): a session.Session holding each
// attempt's initial metadata and steps' metadata, with their paths, which is
// all score.SessionUpdates reads. As session.ReadAttempt does, a step
// without its final frame right after a GAME_OVER step is left out.
func scoreRun(root *os.Root, st arcState) arcScore {
	out := arcScore{GameID: st.GameID}
	if g := games.Lookup(st.GameID); g != nil {
		out.Baselines = g.Baselines
	}
	atts, err := listAttempts(root)
	if err != nil {
		out.Err = err.Error()
		return out
	}
	s := &session.Session{Root: session.Dir}
	for _, a := range atts {
		af, err := scanAttemptFiles(root, a.Name)
		if err != nil {
			out.Err = err.Error()
			return out
		}
		att := session.Attempt{Level: a.Level, Index: a.Attempt, Dir: path.Join(session.Dir, a.Name),
			InitialMetadataPath: path.Join(session.Dir, a.Name, session.InitialMetadataFile)}
		if att.InitialMetadata, err = readMetadata(root, a.Name, session.InitialMetadataFile); err != nil {
			out.Err = err.Error()
			return out
		}
		prevGameOver := false
		for k := 1; k <= af.MaxStep; k++ {
			sf := af.steps[k]
			if sf == nil || !sf.metadata {
				out.Err = fmt.Sprintf("%s: step %d has no %s", att.Dir, k, session.StepMetadataFile(k))
				return out
			}
			if prevGameOver && !sf.final {
				continue
			}
			m, err := readMetadata(root, a.Name, session.StepMetadataFile(k))
			if err != nil {
				out.Err = err.Error()
				return out
			}
			att.Steps = append(att.Steps, session.Step{Index: k, Metadata: m,
				MetadataPath: path.Join(att.Dir, session.StepMetadataFile(k))})
			prevGameOver = session.ObservedStatus(m, a.Level) == session.GameOver
		}
		if n := len(s.Levels); n == 0 || s.Levels[n-1].Index != a.Level {
			s.Levels = append(s.Levels, session.Level{Index: a.Level})
		}
		l := &s.Levels[len(s.Levels)-1]
		l.Attempts = append(l.Attempts, att)
	}
	updates, err := score.SessionUpdates(s)
	if err != nil {
		out.Err = err.Error()
		return out
	}
	id := st.GameID
	if id == "" {
		id = "unknown"
	}
	out.Env, _ = score.Environment(score.Replay(id, updates), out.Baselines)
	return out
}

// ---- transcript --------------------------------------------------------------

// arcEntry is one transcript line as the view shows it.
type arcEntry struct {
	Line  int // 1-based line number in the file
	Entry agent.Entry
	Known bool   // a kind of the contract (agent.Kind*)
	Raw   string // the line as written (cut to arcMaxField), for unknown kinds and bad lines
	Err   string // the line is not a transcript entry
}

// transcriptQuery selects entries: Kind ("" for all) and a window of the
// matching entries (Skip, then at most Take).
type transcriptQuery struct {
	Kind       string
	Skip, Take int
	// FromIteration, when ≥ 0, replaces Skip: the window starts at the
	// first matching entry of that iteration or a later one.
	FromIteration int
}

// transcriptResult is one window and the count of all matching entries.
type transcriptResult struct {
	Entries []arcEntry
	Total   int // matching entries in the whole file
	Start   int // index (0-based, among matching entries) of Entries[0]
	// Kinds counts every readable entry by kind, whatever q.Kind;
	// Unreadable counts the bad lines; Stop is the last stop entry.
	Kinds      map[string]int
	Unreadable int
	Stop       *agent.Entry
}

var knownKinds = map[string]bool{agent.KindPrompt: true, agent.KindAgentEvent: true, agent.KindTurn: true,
	agent.KindInspection: true, agent.KindRefusal: true, agent.KindSnapshot: true, agent.KindReset: true, agent.KindStop: true}

// scanTranscript streams r line by line (no line longer than
// agent.MaxTranscriptLine is held), decodes each as an agent.Entry and keeps
// the window q asks for; every other entry is only counted. Blank lines are
// skipped; a final line without its newline that does not parse is left out
// (a writer may be in the middle of it), as agent.ParseTranscript does. A bad
// line is an entry with Err, so the rest of the transcript still shows.
func scanTranscript(r io.Reader, q transcriptQuery) (transcriptResult, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	res := transcriptResult{Kinds: map[string]int{}}
	if q.FromIteration < 0 {
		res.Start = q.Skip
	} else {
		res.Start = -1
	}
	for n := 1; ; n++ {
		line, complete, tooLong, err := readTranscriptLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return res, fmt.Errorf("%s line %d: %w", agent.TranscriptPath, n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			e := arcEntry{Line: n}
			var kind struct {
				Kind string `json:"kind"`
			}
			uerr := json.Unmarshal(line, &kind)
			if uerr == nil {
				uerr = json.Unmarshal(line, &e.Entry)
			}
			switch {
			case tooLong:
				e.Err = fmt.Sprintf("line longer than %d bytes", agent.MaxTranscriptLine)
				e.Raw = cut(string(line))
			case uerr != nil:
				if !complete {
					return finishWindow(res), nil
				}
				e.Err = "not a transcript entry: " + uerr.Error()
				e.Raw = cut(string(line))
			case kind.Kind == "":
				e.Err = `no "kind"`
				e.Raw = cut(string(line))
			default:
				e.Known = knownKinds[e.Entry.Kind]
				if !e.Known {
					e.Raw = cut(string(line))
				}
			}
			if e.Err != "" {
				res.Unreadable++
			} else {
				res.Kinds[e.Entry.Kind]++
				if e.Entry.Kind == agent.KindStop {
					stop := e.Entry
					stop.Reason = cut(stop.Reason)
					res.Stop = &stop
				}
			}
			if q.Kind == "" || (e.Err == "" && e.Entry.Kind == q.Kind) {
				idx := res.Total
				res.Total++
				if res.Start < 0 && e.Err == "" && e.Entry.Iteration >= q.FromIteration {
					res.Start = idx
				}
				if res.Start >= 0 && idx >= res.Start && len(res.Entries) < q.Take {
					res.Entries = append(res.Entries, shrink(e))
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return finishWindow(res), nil
		}
	}
}

func finishWindow(r transcriptResult) transcriptResult {
	if r.Start < 0 {
		r.Start = r.Total
	}
	return r
}

// readTranscriptLine returns one line without its newline. A line over
// agent.MaxTranscriptLine is read to its end and dropped but for its first
// arcMaxField bytes (tooLong). err is io.EOF at the end of input.
func readTranscriptLine(br *bufio.Reader) (line []byte, complete, tooLong bool, err error) {
	for {
		chunk, e := br.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > agent.MaxTranscriptLine {
				tooLong = true
				line = line[:arcMaxField]
			}
		}
		switch {
		case e == nil:
			if !tooLong {
				line = line[:len(line)-1]
			}
			return line, true, tooLong, nil
		case errors.Is(e, bufio.ErrBufferFull):
			continue
		default:
			return line, false, tooLong, e
		}
	}
}

// cut shortens s to at most arcMaxField bytes, between two grapheme
// clusters (clipAt), saying how much was left out.
func cut(s string) string {
	if len(s) <= arcMaxField {
		return s
	}
	i := clipAt(s, arcMaxField)
	return s[:i] + fmt.Sprintf("\n… (%d more bytes not shown)", len(s)-i)
}

// shrink cuts the long fields of an entry kept for a page.
func shrink(e arcEntry) arcEntry {
	x := &e.Entry
	x.Text, x.Output, x.Why, x.Message = cut(x.Text), cut(x.Output), cut(x.Why), cut(x.Message)
	if len(x.Event) > arcMaxField {
		x.Event = json.RawMessage(cut(string(x.Event)))
	}
	return e
}

// openTranscript opens the run's transcript; ok is false when there is none.
func openTranscript(root *os.Root) (*os.File, bool, error) {
	f, err := root.Open(agent.TranscriptPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, false, fmt.Errorf("%s: not a regular file", agent.TranscriptPath)
	}
	return f, true, nil
}

// ---- git tags ----------------------------------------------------------------

var tagNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$`)
var commitRE = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// gitTags reads the workspace's tags from .git/refs/tags/NAME and
// .git/packed-refs (loose refs win), for the tags named. It runs no git
// command: a workspace's git config is not trusted. A tag whose file is
// missing or unreadable is absent from the map.
func gitTags(root *os.Root, names []string) map[string]string {
	out := map[string]string{}
	if st, err := root.Stat(".git"); err != nil || !st.IsDir() {
		return out
	}
	if b, err := readCappedRoot(root, ".git/packed-refs", arcMaxRefs); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			commit, ref, ok := strings.Cut(strings.TrimSpace(l), " ")
			if ok && commitRE.MatchString(commit) && strings.HasPrefix(ref, "refs/tags/") {
				out[strings.TrimPrefix(ref, "refs/tags/")] = commit
			}
		}
	}
	for _, n := range names {
		if !tagNameRE.MatchString(n) || strings.Contains(n, "..") {
			continue
		}
		if b, err := readCappedRoot(root, ".git/refs/tags/"+n, 4096); err == nil {
			if c := strings.TrimSpace(string(b)); commitRE.MatchString(c) {
				out[n] = c
			}
		}
	}
	return out
}

// ---- mismatch folders --------------------------------------------------------

// mismatchFolders lists the all-digit folders of mismatch_frames/ by
// increasing number.
func mismatchFolders(root *os.Root) ([]int, error) {
	entries, err := readDirNames(root, planexec.MismatchDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		if n, ok := allDigits(e.Name()); ok && e.IsDir() {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// allDigits parses a name of 1..9 decimal digits without a leading zero
// (frame.WriteMismatchArtifacts names its folders strconv.Itoa(N)).
func allDigits(s string) (int, bool) {
	if s == "" || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
