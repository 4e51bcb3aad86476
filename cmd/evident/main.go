// Command evident checks what AI models produce against evidence. Code
// decides, models only propose, and every verdict shows the rows it stands on.
//
// The command line is a shell: it maps flags to package calls and prints
// what they return; it holds no rules. One file per command group, each
// command a value (xxxCommand) and its run function (runXxx):
//
//	judge.go, judge_summary.go, judge_checks.go  evident judge
//	check.go                                     evident check
//	card.go                                      evident card read|write
//	web.go                                       evident serve|import|report|eval|review
//	crystal.go                                   evident crystal score|run
//	arc*.go                                      evident arc …
//	tables.go                                    the input-table flags of judge, check and import
//	outfile.go, interrupt.go                     atomic outputs; SIGINT/SIGTERM
//
// Every file a flag names for output (--out, --rejects, --summary-log,
// --items, --html) is written the one way of outfile.go: a pending file
// that replaces the old one only when the command succeeds.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/urfave/cli/v3"
)

func main() {
	if err := app().Run(context.Background(), os.Args); err != nil {
		if stdoutClosed(err) {
			os.Exit(brokenPipeExit) // `evident judge … | head`: quiet, as a tool killed by SIGPIPE
		}
		// An empty message was reported already (arc script mode).
		if err.Error() != "" {
			fmt.Fprintln(os.Stderr, "evident:", err)
		}
		os.Exit(exitCode(err))
	}
}

// brokenPipeExit is the exit status of a run whose standard output was
// closed by its reader (128 + SIGPIPE, as a shell reports a command killed
// by that signal); the run stopped as for an interrupt (its pending outputs
// removed) and says nothing.
const brokenPipeExit = 141

// stdoutClosed reports whether err is a write to standard output that
// failed with EPIPE (interruptible turns SIGPIPE into that error).
func stdoutClosed(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Path == os.Stdout.Name() && errors.Is(pe.Err, syscall.EPIPE)
}

// exitCode is the process status for err: 0 for nil, the code of a
// cli.ExitCoder (1 for failed checks or verification), else 2 (usage and
// input errors).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 2
}

func app() *cli.Command {
	return &cli.Command{
		Name:  "evident",
		Usage: "check what AI models produce against evidence",
		// main turns errors into exit codes; the library must not exit.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		// Repeat a flag to give several files; a comma may be part of a path.
		DisableSliceFlagSeparator: true,
		Commands: append([]*cli.Command{
			judgeCommand(),
			checkCommand(),
			arcCommand(),
			crystalCommand(),
			cardCommand(),
			consumeCommand(),
		}, webCommands()...),
	}
}
