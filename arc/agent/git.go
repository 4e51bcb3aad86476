package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Snapshotter snapshots the workspace once per iteration (spec arc.md "The
// controller, exactly": `commit --allow-empty -m "level_{L} {steps_total}
// {iteration}"`, `tag -f iteration_{N}`).
type Snapshotter interface {
	// Snapshot commits everything in dir with message and (re)sets tag on
	// the commit; it returns the commit id.
	Snapshot(ctx context.Context, dir, message, tag string) (string, error)
}

// Git is the Snapshotter of the git command line (baseline1 agent_funs.py
// run_git_snapshot): `git init` when dir has no .git, `git add -A`, `git
// commit --allow-empty -m MESSAGE`, `git tag -f TAG`. The author is "evident
// agent controller <agent@localhost>" (set through the environment, so no
// git config is written), commit signing is off.
type Git struct {
	// Bin is the git program ("git" when empty).
	Bin string
}

// SnapshotMessage and SnapshotTag are baseline1's commit message and tag.
func SnapshotMessage(level, stepsTotal, iteration int) string {
	return fmt.Sprintf("level_%d %d %d", level, stepsTotal, iteration)
}

// SnapshotTag is "iteration_N".
func SnapshotTag(iteration int) string { return fmt.Sprintf("iteration_%d", iteration) }

func (g Git) run(ctx context.Context, dir string, args ...string) (string, error) {
	bin := g.Bin
	if bin == "" {
		bin = "git"
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=evident agent controller", "GIT_AUTHOR_EMAIL=agent@localhost",
		"GIT_COMMITTER_NAME=evident agent controller", "GIT_COMMITTER_EMAIL=agent@localhost")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		s := out.String()
		if len(s) > 2000 {
			s = s[:2000] + "…"
		}
		return "", fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(s))
	}
	return strings.TrimSpace(out.String()), nil
}

// Snapshot implements Snapshotter.
func (g Git) Snapshot(ctx context.Context, dir, message, tag string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		if _, err := g.run(ctx, dir, "init", "-q"); err != nil {
			return "", err
		}
	}
	if _, err := g.run(ctx, dir, "add", "-A"); err != nil {
		return "", err
	}
	if _, err := g.run(ctx, dir, "commit", "-q", "--allow-empty", "-m", message); err != nil {
		return "", err
	}
	if _, err := g.run(ctx, dir, "tag", "-f", tag); err != nil {
		return "", err
	}
	return g.run(ctx, dir, "rev-parse", "HEAD")
}
