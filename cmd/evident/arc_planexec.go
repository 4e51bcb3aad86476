package main

// The arc plan-exec subcommand (spec arc.md "Plan executor"). Run by the
// workspace's plan_executor.py launcher ($EVIDENT_SCRIPT_NAME, see
// arc_script.go) it prints baseline1's plan_executor.py lines and the
// client's per-step summary (client.WriteSummary) after every action.

import (
	"context"

	"github.com/urfave/cli/v3"

	"evident/arc/client"
	"evident/arc/planexec"
	"evident/arc/session"
)

func arcPlanExecCommand() *cli.Command {
	return &cli.Command{
		Name:      "plan-exec",
		Usage:     "execute actions in the real game, predicting each with the world model first; halt at the first mismatch (artifacts in mismatch_frames/N/)",
		ArgsUsage: `ACTION… (ACTION1, or '{"name":"ACTION6","x":15,"y":47}'; RESET is refused)`,
		Flags:     append(arcFlags(), &cli.DurationFlag{Name: "lock-wait", Value: client.DefaultLockWait, Usage: "how long to wait for another client command in this workspace to finish"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return cli.Exit("arc plan-exec: give at least one action", 2)
			}
			var plan []session.Action
			for _, s := range cmd.Args().Slice() {
				a, err := client.ParseAction(s)
				if err != nil {
					return cli.Exit("arc plan-exec: "+err.Error(), 2)
				}
				plan = append(plan, a)
			}
			c, err := newClient(cmd)
			if err != nil {
				return clientExit("arc plan-exec", err)
			}
			m, err := arcModel(ctx, cmd, "arc plan-exec")
			if err != nil {
				return err
			}
			defer m.Close()
			opts := planexec.Options{Out: cmd.Root().Writer}
			if inScript() {
				// plan_executor.py: baseline1's lines, and its client's
				// per-step summary after every action.
				opts.Baseline1, opts.StepSummary = true, client.WriteSummary
			}
			_, err = planexec.Run(ctx, m, c, plan, opts)
			return clientExit("arc plan-exec", err)
		},
	}
}
