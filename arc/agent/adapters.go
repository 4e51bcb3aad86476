package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Agent is one coding agent driven turn by turn (spec arc.md "The
// controller, exactly": "An agent turn is one run of the agent CLI …; it
// ends when the process exits; later turns resume the same agent session
// until a fresh session is asked for").
type Agent interface {
	// Turn runs one turn with req.Prompt in req.Dir (the workspace);
	// req.Fresh starts a new agent session instead of resuming. Each line
	// the agent prints goes to req.Line. The error is for a turn that
	// could not run at all (no such program, ctx ended); a turn that ran
	// and failed reports its ExitCode.
	Turn(ctx context.Context, req TurnRequest) (TurnResult, error)
}

// TurnRequest is one turn's input.
type TurnRequest struct {
	Prompt string
	Fresh  bool
	Dir    string
	// Line receives every stdout line (stream "stdout") and stderr line
	// (stream "stderr") of the agent.
	Line func(stream string, line []byte)
}

// TurnResult is one turn's outcome.
type TurnResult struct {
	ExitCode int
	// TimedOut: the idle watchdog stopped the agent.
	TimedOut bool
	Seconds  float64
	// Session is the agent session (Codex thread id, Claude session id)
	// after the turn, "" when the agent has none.
	Session string
}

// Adapter kinds of NewCLI (the --agent-kind values of evident arc agent).
const (
	KindCodex  = "codex"
	KindClaude = "claude"
	KindPlain  = "plain"
)

// CLI is an Agent that runs a command line once per turn with the prompt
// on stdin, in one of three ways (Kind):
//
//   - codex: Base + `exec --cd DIR --json` for a fresh session, Base +
//     `exec --cd DIR resume THREAD --json` later (baseline1 codex_runner.py);
//     the thread id is the first "thread_id" string found in the JSON
//     events (Codex's {"type":"thread.started","thread_id":…}).
//   - claude: Base + `-p --output-format stream-json --verbose`, plus
//     `--resume SESSION` after the first turn; the session id is the
//     "session_id" of the stream's events (the "system" init event and the
//     final "result").
//   - plain: Base as it is, every turn a fresh process with no session.
type CLI struct {
	Kind string
	Base []string
	// Runner runs the processes (watchdog, clock, environment).
	Runner *Runner

	session string
}

// DetectKind guesses the adapter from the command's program name: "codex"
// → codex, "claude" → claude, else plain.
func DetectKind(argv []string) string {
	if len(argv) == 0 {
		return KindPlain
	}
	p := argv[0]
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	switch p {
	case "codex":
		return KindCodex
	case "claude":
		return KindClaude
	}
	return KindPlain
}

// Session returns the current agent session id ("" before the first turn or
// after a fresh one was asked for).
func (c *CLI) Session() string { return c.session }

// Args returns the command line of a turn with the given freshness (for
// tests and the transcript).
func (c *CLI) Args(dir string, fresh bool) []string {
	argv := append([]string(nil), c.Base...)
	sess := c.session
	if fresh {
		sess = ""
	}
	switch c.Kind {
	case KindCodex:
		argv = append(argv, "exec", "--cd", dir)
		if sess != "" {
			argv = append(argv, "resume", sess)
		}
		argv = append(argv, "--json")
	case KindClaude:
		argv = append(argv, "-p", "--output-format", "stream-json", "--verbose")
		if sess != "" {
			argv = append(argv, "--resume", sess)
		}
	}
	return argv
}

// Turn runs one process (see CLI).
func (c *CLI) Turn(ctx context.Context, req TurnRequest) (TurnResult, error) {
	switch c.Kind {
	case KindCodex, KindClaude, KindPlain:
	default:
		return TurnResult{}, fmt.Errorf("agent: unknown adapter kind %q; want %s, %s or %s", c.Kind, KindCodex, KindClaude, KindPlain)
	}
	if req.Fresh {
		c.session = ""
	}
	r := c.Runner
	if r == nil {
		r = &Runner{}
	}
	key := "thread_id"
	if c.Kind == KindClaude {
		key = "session_id"
	}
	found := ""
	p, err := r.Run(ctx, req.Dir, c.Args(req.Dir, false), req.Prompt, func(stream string, b []byte) {
		if stream == "stdout" && c.Kind != KindPlain && (found == "" || c.Kind == KindClaude) {
			if id := findString(b, key); id != "" {
				found = id
			}
		}
		if req.Line != nil {
			req.Line(stream, b)
		}
	})
	if found != "" {
		c.session = found
	}
	return TurnResult{ExitCode: p.ExitCode, TimedOut: p.TimedOut, Seconds: p.Seconds, Session: c.session}, err
}

// findString returns the first string value of key anywhere in the JSON
// object line (depth first), "" when the line is not JSON or has none.
func findString(line []byte, key string) string {
	var v any
	if json.Unmarshal(line, &v) != nil {
		return ""
	}
	var walk func(any) string
	walk = func(v any) string {
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x[key].(string); ok && s != "" {
				return s
			}
			for _, y := range x {
				if s := walk(y); s != "" {
					return s
				}
			}
		case []any:
			for _, y := range x {
				if s := walk(y); s != "" {
					return s
				}
			}
		}
		return ""
	}
	return walk(v)
}
