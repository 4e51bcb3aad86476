package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// TranscriptPath is the transcript's place inside a workspace:
// WORKSPACE/agent/transcript.jsonl (issue 11 item 1).
const TranscriptPath = "agent/transcript.jsonl"

// The entry kinds of the transcript (issue 11; the fields each kind carries
// are listed on Entry).
const (
	KindPrompt     = "prompt"
	KindAgentEvent = "agent_event"
	KindTurn       = "turn"
	KindInspection = "inspection"
	KindRefusal    = "refusal"
	KindSnapshot   = "snapshot"
	KindReset      = "reset"
	KindStop       = "stop"
)

// Session values of a prompt entry: a fresh agent session or a resumed one.
const (
	SessionFresh  = "fresh"
	SessionResume = "resume"
)

// Entry is one line of the transcript, a JSON object (JSON Lines, one entry a
// line, UTF-8). Time (RFC 3339 with nanoseconds), Iteration (the controller's
// iteration number, 0 for the init turn) and Kind are on every entry; the
// other fields belong to one kind each and are omitted when empty:
//
//	prompt:      name (main, continuation, death, new_level, stuck, trouble1,
//	             trouble2, simplification_engine_1…, recovery, …), text,
//	             session ("fresh" or "resume")
//	agent_event: event (the agent's stdout line as a JSON object, or
//	             {"text": line} when the line is not JSON)
//	turn:        exit_code, seconds, timed_out, agent_session
//	inspection:  level, attempt, steps_total, steps_level, game_over, solved,
//	             new_steps, next (the prompt chosen or "stop")
//	refusal:     what, why
//	snapshot:    commit, tag, message
//	reset:       output (the client's output for the controller's RESET)
//	stop:        reason
//
// The shape is a contract with the screen's ARC view (issue 11 item 6):
// fields may be added, never renamed. Booleans and numbers that are part of
// a kind's shape (exit_code, timed_out, game_over, …) are always written for
// that kind, even when zero; see MarshalJSON.
type Entry struct {
	Time      time.Time `json:"time"`
	Iteration int       `json:"iteration"`
	Kind      string    `json:"kind"`

	// prompt
	Name    string `json:"name,omitempty"`
	Text    string `json:"text,omitempty"`
	Session string `json:"session,omitempty"`

	// agent_event
	Event json.RawMessage `json:"event,omitempty"`

	// turn
	ExitCode     int     `json:"exit_code"`
	Seconds      float64 `json:"seconds"`
	TimedOut     bool    `json:"timed_out"`
	AgentSession string  `json:"agent_session,omitempty"`

	// inspection
	Level      int    `json:"level"`
	Attempt    int    `json:"attempt"`
	StepsTotal int    `json:"steps_total"`
	StepsLevel int    `json:"steps_level"`
	GameOver   bool   `json:"game_over"`
	Solved     bool   `json:"solved"`
	NewSteps   int    `json:"new_steps"`
	Next       string `json:"next,omitempty"`

	// refusal
	What string `json:"what,omitempty"`
	Why  string `json:"why,omitempty"`

	// snapshot
	Commit  string `json:"commit,omitempty"`
	Tag     string `json:"tag,omitempty"`
	Message string `json:"message,omitempty"`

	// reset
	Output string `json:"output,omitempty"`

	// stop
	Reason string `json:"reason,omitempty"`
}

// MarshalJSON writes e with only the fields of its kind: time, iteration and
// kind always, then the kind's fields (numbers and booleans of the kind even
// when zero, strings when non-empty except prompt's text and reset's output,
// which are always written). An unknown kind writes every non-empty field.
func (e Entry) MarshalJSON() ([]byte, error) {
	m := map[string]any{
		"time":      e.Time.UTC().Format(time.RFC3339Nano),
		"iteration": e.Iteration,
		"kind":      e.Kind,
	}
	str := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	all := false
	switch e.Kind {
	case KindPrompt:
		str("name", e.Name)
		m["text"] = e.Text
		str("session", e.Session)
	case KindAgentEvent:
		if len(e.Event) > 0 {
			m["event"] = e.Event
		} else {
			m["event"] = json.RawMessage(`{}`)
		}
	case KindTurn:
		m["exit_code"] = e.ExitCode
		m["seconds"] = e.Seconds
		m["timed_out"] = e.TimedOut
		str("agent_session", e.AgentSession)
	case KindInspection:
		m["level"] = e.Level
		m["attempt"] = e.Attempt
		m["steps_total"] = e.StepsTotal
		m["steps_level"] = e.StepsLevel
		m["game_over"] = e.GameOver
		m["solved"] = e.Solved
		m["new_steps"] = e.NewSteps
		str("next", e.Next)
	case KindRefusal:
		str("what", e.What)
		str("why", e.Why)
	case KindSnapshot:
		str("commit", e.Commit)
		str("tag", e.Tag)
		str("message", e.Message)
	case KindReset:
		m["output"] = e.Output
	case KindStop:
		str("reason", e.Reason)
	default:
		all = true
	}
	if all {
		type plain Entry // no MarshalJSON: the struct's own tags
		b, err := json.Marshal(plain(e))
		if err != nil {
			return nil, err
		}
		var mm map[string]any
		if err := json.Unmarshal(b, &mm); err != nil {
			return nil, err
		}
		for k, v := range mm {
			if _, ok := m[k]; ok {
				continue
			}
			switch x := v.(type) {
			case string:
				if x == "" {
					continue
				}
			case float64:
				if x == 0 {
					continue
				}
			case bool:
				if !x {
					continue
				}
			}
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// MaxTranscriptLine caps one transcript line when reading (8 MiB); a longer
// line is an error naming the file and line.
const MaxTranscriptLine = 8 << 20

// MaxEventBytes caps the agent stdout line kept in one agent_event entry
// (1 MiB); a longer line is cut and stored as {"text": …, "truncated": true}.
const MaxEventBytes = 1 << 20

// Transcript appends entries to a transcript file. It is safe for concurrent
// use (the agent's output reader and the controller write at once). Each
// entry is written with one write call and the file is opened O_APPEND, so a
// reader sees whole lines (a reader tolerates a final partial line; see
// ReadTranscript).
type Transcript struct {
	mu   sync.Mutex
	f    *os.File
	path string
	now  func() time.Time
}

// OpenTranscript opens (creating it and its folder) the transcript at path
// for appending. now stamps entries whose Time is zero; nil means time.Now.
func OpenTranscript(path string, now func() time.Time) (*Transcript, error) {
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	return &Transcript{f: f, path: path, now: now}, nil
}

// Append writes e as one line, stamping Time when it is zero.
func (t *Transcript) Append(e Entry) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return fmt.Errorf("transcript %s: closed", t.path)
	}
	if e.Time.IsZero() {
		e.Time = t.now()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("transcript %s: %w", t.path, err)
	}
	b = append(b, '\n')
	if _, err := t.f.Write(b); err != nil {
		return fmt.Errorf("transcript %s: %w", t.path, err)
	}
	return nil
}

// Close closes the file; later Appends fail.
func (t *Transcript) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

// EventJSON turns one line of the agent's stdout into an agent_event's
// event: the line itself when it is a JSON object, else {"text": line}.
// Lines longer than MaxEventBytes are cut and marked "truncated": true.
func EventJSON(line []byte) json.RawMessage {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) <= MaxEventBytes {
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] == '{' && json.Valid(t) {
			return append(json.RawMessage(nil), t...)
		}
		b, _ := json.Marshal(map[string]string{"text": string(line)})
		return b
	}
	b, _ := json.Marshal(map[string]any{"text": string(line[:MaxEventBytes]), "truncated": true})
	return b
}

// ReadTranscript reads a whole transcript file (see ParseTranscript). A
// missing file is an error wrapping fs.ErrNotExist.
func ReadTranscript(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	defer f.Close()
	return ParseTranscript(f, path)
}

// ParseTranscript reads JSON Lines entries from r; name is used in errors
// ("transcript NAME line N: …"). Blank lines are skipped. A final line
// without its newline that does not parse is ignored (a writer may be in the
// middle of it); any other bad line is an error naming its line number, with
// the entries before it returned. Lines over MaxTranscriptLine are errors.
func ParseTranscript(r io.Reader, name string) ([]Entry, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []Entry
	for n := 1; ; n++ {
		line, complete, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return out, fmt.Errorf("transcript %s line %d: %w", name, n, err)
		}
		if len(line) == 0 && errors.Is(err, io.EOF) {
			return out, nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var e Entry
			if uerr := json.Unmarshal(line, &e); uerr != nil {
				if !complete {
					return out, nil
				}
				return out, fmt.Errorf("transcript %s line %d: %w", name, n, uerr)
			}
			if e.Kind == "" {
				return out, fmt.Errorf("transcript %s line %d: no \"kind\"", name, n)
			}
			out = append(out, e)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
	}
}

// readLine returns one line without its newline; complete reports whether
// the newline was there. err is io.EOF at the end of input.
func readLine(br *bufio.Reader) (line []byte, complete bool, err error) {
	for {
		chunk, e := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxTranscriptLine {
			return nil, false, fmt.Errorf("line longer than %d bytes", MaxTranscriptLine)
		}
		switch {
		case e == nil:
			return line[:len(line)-1], true, nil
		case errors.Is(e, bufio.ErrBufferFull):
			continue
		default:
			return line, false, e
		}
	}
}

func jsonMarshal(v any) (json.RawMessage, error) { return json.Marshal(v) }
