package main

// Script mode: the output conventions of baseline1's workspace scripts
// (secure_baseline1 src/agent/workspace_init/*.py, twma_v1.6 client), for
// the thin Python launchers that `evident arc init` writes. A launcher sets
// $EVIDENT_SCRIPT_NAME to its own file name and execs evident; every arc
// command then speaks as that script:
//
//   - The lines that baseline1's script prints with its name as prefix get
//     "NAME: " (verify_world_model.py: level 1 verified); the lines it
//     prints bare (a mismatch block, plan actions, the client's summary,
//     file paths) stay bare. Which lines are which is the table scripts
//     below, read from each script's print calls.
//   - Errors go to stdout, as baseline1's scripts print them: a command's
//     one-line failure summary is printed as "NAME: <summary>" unless the
//     report already printed that very line (a verification failure), and
//     nothing goes to stderr; the exit status is the command's (1 for a
//     failure, 2 for bad arguments).
//   - plan-exec prints baseline1's plan_executor.py lines (see package
//     evident/arc/planexec, Options.Baseline1).
//   - client.py: the client's refusals in baseline1's client.py words
//     (scriptClientExit: "Invalid command: Only RESET is allowed …",
//     "Invalid command: RESET is not allowed before …", the two lines of
//     "No active client session"), without evident's hints (its RESET and
//     --force hints contradict the agent prompts and client.py's
//     arguments). The launcher itself parses the arguments as baseline1's
//     argparse does and refuses an action that is not an official name
//     exactly, as its canonical_action does; the plain CLI keeps taking
//     names in any case (client.ParseAction).
//
// Decisions: an unknown script name is an error (exit 2) naming the known
// ones, so a launcher and a binary of different versions fail loudly. The
// world model's print() output keeps going to stderr.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v3"

	"evident/arc/client"
)

// EnvScriptName names the baseline1 script a launcher stands for
// ("verify_world_model.py"); empty: evident's own output conventions.
const EnvScriptName = "EVIDENT_SCRIPT_NAME"

// scriptRule says which output lines of one baseline1 script carry its
// name as prefix: those that begin with one of prefixed.
type scriptRule struct {
	prefixed []string
	// bareErrors: the script prints its errors without the prefix
	// (baseline1's client prints str(exc)).
	bareErrors bool
	// invalid, when set, is how the script words a bad command: a
	// command's exit status 2 becomes 1 with this before the message
	// (baseline1's client: "Invalid command: …", status 1).
	invalid string
}

// scripts are baseline1's workspace scripts, keyed by file name, with the
// starts of the lines each prints through print(f"NAME: …").
var scripts = map[string]scriptRule{
	"verify_world_model.py": {prefixed: []string{"level ", "levels 1..", "verification failed for level ", "warning: level "}},
	"verify_main_planner.py": {prefixed: []string{"No level-", "No completed level-", "level ", "levels 1..",
		"no completed levels to verify", "verification failed for level "}},
	"run_main_planner.py": {prefixed: []string{"no plan found from ", "plan from ", "planner returned a plan from "}},
	"run_aux_planner.py": {prefixed: []string{"no plan found from ", "plan from ", "simulated plan reached level completion",
		"simulated frames for the plan were written to ", "written files"}},
	"plan_executor.py": {prefixed: []string{"running ", "stopped on level completion", "stopped on GAME_OVER",
		"sequence executed without mismatch", "frame mismatch detected", "the step on which mismatch was detected",
		"status mismatch after ", "warning: level ",
		// evident's refusals before anything is sent (package planexec).
		"RESET refused", "the game ", "no game started", "no attempt recorded", "level ", "rebuilding the current state",
		"predicting ", "rendering the prediction"}},
	"plot_initial_full_frames.py": {prefixed: []string{"no initial_full_frames/", "wrote PNG files"}},
	// These two print no prefixed line.
	"client.py":       {bareErrors: true, invalid: "Invalid command: "},
	"ascii_to_png.py": {bareErrors: true},
}

// scriptName is the script of $EVIDENT_SCRIPT_NAME, "" when unset.
func scriptName() (string, error) {
	name := os.Getenv(EnvScriptName)
	if name == "" {
		return "", nil
	}
	if _, ok := scripts[name]; !ok {
		known := make([]string, 0, len(scripts))
		for k := range scripts {
			known = append(known, k)
		}
		sort.Strings(known)
		return "", fmt.Errorf("$%s=%q is not a baseline1 script evident speaks for; known: %s", EnvScriptName, name, strings.Join(known, ", "))
	}
	return name, nil
}

// inScript reports whether cmd runs on behalf of a launcher.
func inScript() bool { return os.Getenv(EnvScriptName) != "" }

// scriptWriter prefixes the lines of one script as its rule says; it keeps
// every line it wrote (bare) so that a failure summary already printed is
// not printed twice.
type scriptWriter struct {
	w       io.Writer
	name    string
	rule    scriptRule
	partial []byte
	written map[string]bool
	err     error
}

func newScriptWriter(w io.Writer, name string) *scriptWriter {
	return &scriptWriter{w: w, name: name, rule: scripts[name], written: map[string]bool{}}
}

func (s *scriptWriter) Write(p []byte) (int, error) {
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.line(string(s.partial[:i]))
		s.partial = s.partial[i+1:]
	}
	return len(p), s.err
}

func (s *scriptWriter) line(l string) {
	s.written[l] = true
	out := l
	for _, p := range s.rule.prefixed {
		if strings.HasPrefix(l, p) {
			out = s.name + ": " + l
			break
		}
	}
	if _, err := io.WriteString(s.w, out+"\n"); err != nil && s.err == nil {
		s.err = err
	}
}

// flush writes an unterminated last line.
func (s *scriptWriter) flush() {
	if len(s.partial) > 0 {
		s.line(string(s.partial))
		s.partial = nil
	}
}

// summary prints a failure's summary line, prefixed, unless the report
// already holds it.
func (s *scriptWriter) summary(msg string) {
	s.flush()
	if msg == "" || s.written[msg] {
		return
	}
	if !s.rule.bareErrors {
		msg = s.name + ": " + msg
	}
	if _, err := io.WriteString(s.w, msg+"\n"); err != nil && s.err == nil {
		s.err = err
	}
}

// scriptSummary strips the command's own name ("arc verify: ") from a
// failure's message: the script's name replaces it.
func scriptSummary(msg string) string {
	if strings.HasPrefix(msg, "arc ") {
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			return rest
		}
	}
	return msg
}

// withScriptMode wraps the action of cmd and of every command below it so
// that, when $EVIDENT_SCRIPT_NAME is set at run time, its output follows
// the script's conventions (see the file comment).
func withScriptMode(cmd *cli.Command) *cli.Command {
	if cmd.Action != nil {
		action := cmd.Action
		cmd.Action = func(ctx context.Context, c *cli.Command) error {
			if !inScript() {
				return action(ctx, c)
			}
			name, err := scriptName()
			if err != nil {
				return cli.Exit(err.Error(), 2)
			}
			root := c.Root()
			orig := root.Writer
			sw := newScriptWriter(orig, name)
			root.Writer = sw
			defer func() { root.Writer = orig }()
			err = action(ctx, c)
			sw.flush()
			if err == nil {
				return sw.err
			}
			code := 2
			var ec cli.ExitCoder
			if errors.As(err, &ec) {
				code = ec.ExitCode()
			}
			msg := scriptSummary(err.Error())
			if r := scripts[name]; code == 2 && r.invalid != "" {
				code, msg = 1, r.invalid+msg
			}
			sw.summary(msg)
			// main prints nothing for an empty message: the summary is
			// on stdout already.
			return cli.Exit("", code)
		}
	}
	for _, sub := range cmd.Commands {
		withScriptMode(sub)
	}
	return cmd
}

// scriptClientExit is how client.py (baseline1's twma_v1.6 client) words
// the client's refusals, for clientExit in script mode; nil: the error is
// worded as outside script mode.
//
//   - A non-RESET in GAME_OVER (refused here or a 400 of the server saying
//     the game is over) and a RESET before the attempt's first action are
//     baseline1's ValueErrors: "Invalid command: MSG", exit 1, with
//     baseline1's message and no hint of evident's (the agent prompts
//     forbid the agent's RESET; --force is not an argument of client.py).
//   - No game started: baseline1's FileNotFoundError lines.
//   - An expired scorecard or a lagging session keep their exit statuses,
//     with client.py's command in the hint.
func scriptClientExit(err error) error {
	if os.Getenv(EnvScriptName) != "client.py" {
		return nil
	}
	restart := "start a new game here with: python3 client.py start GAME_ID (this session is then moved to " + client.ExpiredSessionPrefix + "N/)"
	switch {
	case errors.Is(err, client.ErrGameOver):
		// Exit status 2 becomes 1 with "Invalid command: " (scripts).
		return cli.Exit(client.MsgOnlyReset, 2)
	case errors.Is(err, client.ErrResetBeforeAction):
		return cli.Exit(client.MsgResetBeforeAction, 2)
	case errors.Is(err, client.ErrNotStarted):
		return cli.Exit("No active client session. Start a game first.\nStart a game first: python3 client/client.py start <game_id>", 1)
	case errors.Is(err, client.ErrScorecardExpired):
		return cli.Exit(joinHint(err.Error(), restart), exitScorecardExpired)
	case errors.Is(err, client.ErrLagging):
		return cli.Exit(joinHint(err.Error(), restart), exitSessionLags)
	}
	return nil
}

// joinHint appends hint to msg after "; " (or " " after a full stop).
func joinHint(msg, hint string) string {
	if strings.HasSuffix(msg, ".") {
		return msg + " " + hint
	}
	return msg + "; " + hint
}
