package main

// The arc plan-exec subcommand (spec arc.md "Plan executor").

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
			_, err = planexec.Run(ctx, m, c, plan, planexec.Options{Out: cmd.Root().Writer})
			return clientExit("arc plan-exec", err)
		},
	}
}
