package main

// The arc subcommands around a baseline1-shaped workspace (issue 10 item 3):
//
//	evident arc init WORKSPACE [--python] [--server URL]
//	evident arc plot-initial-full-frames [--workspace DIR]
//	evident arc ascii-to-png INPUT [--output PNG] [--scale N]
//
// The last two are baseline1's plot_initial_full_frames.py and
// client/ascii_to_png.py, with their output lines; the workspace's launchers
// call them.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"evident/arc/frame"
	"evident/arc/workspace"
)

func arcWorkspaceCommands() []*cli.Command {
	return []*cli.Command{arcInitCommand(), arcPlotFullFramesCommand(), arcASCIIToPNGCommand()}
}

func arcInitCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "write a baseline1-shaped agent workspace: world-model templates, prompts, client/, and baseline1's scripts as launchers of this binary",
		ArgsUsage: "WORKSPACE",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "python", Usage: "write the seed's Python world-model stubs (world_model_*.py, run with --model-cmd python) instead of Starlark"},
			&cli.StringFlag{Name: "server", Value: workspace.DefaultServerURL, Usage: "game server the workspace's client plays on (default: evident arc serve-games at its default address)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return cli.Exit("arc init: want one WORKSPACE folder", 2)
			}
			dir := cmd.Args().First()
			bin, err := os.Executable()
			if err != nil {
				return cli.Exit("arc init: cannot find this binary's path: "+err.Error(), 1)
			}
			if resolved, err := filepath.EvalSymlinks(bin); err == nil {
				bin = resolved
			}
			files, err := workspace.Init(dir, workspace.Options{Python: cmd.Bool("python"), ServerURL: cmd.String("server"), EvidentBin: bin})
			if err != nil {
				return cli.Exit("arc init: "+err.Error(), 1)
			}
			abs, _ := filepath.Abs(dir)
			w := cmd.Root().Writer
			model := workspace.ModelStarlark
			if cmd.Bool("python") {
				model = workspace.ModelPython
			}
			fmt.Fprintf(w, "workspace %s (world model: %s, server: %s, evident: %s)\n", abs, model, cmd.String("server"), bin)
			for _, f := range files {
				fmt.Fprintln(w, f)
			}
			fmt.Fprintf(w, "next: cd %s && python3 client.py start GAME_ID\n", shellQuote(filepath.Join(abs, "client")))
			return nil
		},
	}
}

func arcPlotFullFramesCommand() *cli.Command {
	return &cli.Command{
		Name:  "plot-initial-full-frames",
		Usage: "write initial_full_frames/level_N.png for every initial_full_frames/level_N.txt of the workspace",
		Flags: []cli.Flag{&cli.StringFlag{Name: "workspace", Value: ".", Usage: "agent workspace"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			paths, err := workspace.PlotInitialFullFrames(cmd.String("workspace"))
			w := cmd.Root().Writer
			if len(paths) == 0 && err == nil {
				fmt.Fprintln(w, "no initial_full_frames/level_*.txt files found")
				return nil
			}
			if len(paths) > 0 {
				fmt.Fprintln(w, "wrote PNG files")
				for _, p := range paths {
					fmt.Fprintln(w, p)
				}
			}
			if err != nil {
				return cli.Exit("arc plot-initial-full-frames: "+err.Error(), 1)
			}
			return nil
		},
	}
}

func arcASCIIToPNGCommand() *cli.Command {
	return &cli.Command{
		Name:      "ascii-to-png",
		Usage:     "convert an ASCII frame dump into a PNG with the game palette; prints the PNG's path",
		ArgsUsage: "INPUT",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Usage: "output PNG path (default: INPUT with the suffix .png)"},
			&cli.IntFlag{Name: "scale", Value: frame.Scale, Usage: "pixels per cell"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return cli.Exit("arc ascii-to-png: want one INPUT file", 2)
			}
			in, err := filepath.Abs(cmd.Args().First())
			if err != nil {
				return cli.Exit("arc ascii-to-png: "+err.Error(), 1)
			}
			if st, err := os.Stat(in); err != nil || !st.Mode().IsRegular() {
				return cli.Exit("arc ascii-to-png: Input file not found: "+in, 1)
			}
			out := cmd.String("output")
			if out == "" {
				// Python's Path.with_suffix: the last suffix replaced.
				out = strings.TrimSuffix(in, filepath.Ext(in)) + ".png"
			}
			if out, err = filepath.Abs(out); err != nil {
				return cli.Exit("arc ascii-to-png: "+err.Error(), 1)
			}
			if err := workspace.ASCIIToPNG(in, out, int(cmd.Int("scale"))); err != nil {
				return cli.Exit("arc ascii-to-png: "+err.Error(), 1)
			}
			fmt.Fprintln(cmd.Root().Writer, out)
			return nil
		},
	}
}

// shellQuote returns s as one word of a POSIX shell: unchanged when it
// holds only letters, digits and _ . / - + : , @ %, else in single quotes
// (a quote inside written '\”).
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./-+:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
