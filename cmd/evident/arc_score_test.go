package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/session"
)

// TestArcScore plays one game through the client against the local server,
// then scores the recorded session with `evident arc score` and compares it
// with the server's own scorecard.
func TestArcScore(t *testing.T) {
	_, url := localGames(t)
	ws := t.TempDir()
	ctx := context.Background()
	c, err := client.New(client.Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(ctx, url, games.Trek.ID, api.OpenScorecardRequest{}); err != nil {
		t.Fatal(err)
	}
	move := func(a session.Action, force bool) {
		t.Helper()
		if _, err := c.MoveWith(ctx, a, client.MoveOptions{Force: force}); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
	}
	reset := session.Action{Name: "RESET"}
	move(session.Action{Name: "ACTION3"}, false)
	move(reset, false) // level reset: an action and a reset of run 1
	for _, a := range games.Trek.Solution(0, 1) {
		move(a, false)
	}
	move(session.Action{Name: "ACTION2"}, false)
	move(reset, false) // level 2 reset
	move(reset, true)  // no action since: the whole game restarts, run 2
	for _, l := range []int{1, 2} {
		for _, a := range games.Trek.Solution(0, l) {
			move(a, false)
		}
	}
	raw, err := c.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var card api.EnvironmentScorecard
	if err := json.Unmarshal(raw, &card); err != nil || len(card.Environments) != 1 {
		t.Fatalf("scorecard %s: %v", raw, err)
	}
	server := card.Environments[0]

	// Hand-checked (Trek baselines 18, 52, 44; its solutions take 14 and 40
	// moves). Run 1: ACTION3, the level RESET and 14 moves are 16 actions
	// on level 1, (18/16)²·100 = 126.6 → 115; ACTION2 and the level-2 RESET
	// are 2 actions on level 2, not completed; score min(115/6, 100·1/6) =
	// 16.67. Run 2: 14 moves on level 1 (115), 40 on level 2, (52/40)²·100
	// = 169 → 115; score min((115 + 230)/6, 100·3/6) = 50. The game: 50.
	if len(server.Runs) != 2 || math.Abs(server.Score-50) > 1e-9 || math.Abs(server.Runs[0].Score-100.0/6) > 1e-9 ||
		!reflect.DeepEqual(server.Runs[0].LevelActions, []int{16, 2, 0}) || !reflect.DeepEqual(server.Runs[1].LevelActions, []int{14, 40, 0}) ||
		server.Actions != 18+54 || server.Resets != 2 || server.LevelsCompleted != 2 {
		t.Fatalf("server's scorecard %+v", server)
	}

	t.Run("arc score --json on the recorded session equals the server's scorecard entry", func(t *testing.T) {
		out, errOut, code := arc(t, "score", "--json", filepath.Join(ws, session.Dir))
		var got api.EnvironmentScoreList
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		for i := range server.Runs {
			server.Runs[i].GUID = "" // the session records no guid
		}
		if !reflect.DeepEqual(got, server) {
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(server)
			t.Fatalf("arc score:\n%s\nserver:\n%s", a, b)
		}
	})
	t.Run("the text report gives the game, each run and each level", func(t *testing.T) {
		out, _, code := arc(t, "score", ws)
		lines := strings.Split(out, "\n")
		if code != 0 || lines[0] != "trek-v1: score 50.00 (best of 2 runs), 2 levels completed, 72 actions, 2 resets" ||
			lines[1] != "run 1: score 16.67, 1 levels completed, 18 actions, 2 resets, state NOT_FINISHED" ||
			lines[2] != "  level 1: 16 actions, baseline 18, score 115.00" || lines[7] != "  level 2: 40 actions, baseline 52, score 115.00" {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
	t.Run("--baseline takes a JSON list or an EnvironmentInfo object and names a bad file", func(t *testing.T) {
		dir := t.TempDir()
		list := filepath.Join(dir, "list.json")
		os.WriteFile(list, []byte("[14, 40, 32]"), 0o644)
		out, _, code := arc(t, "score", "--baseline", list, ws)
		// Exactly the solutions: run 2 scores (100 + 200)/6 = 50.
		if code != 0 || !strings.HasPrefix(out, "trek-v1: score 50.00") || !strings.Contains(out, "level 1: 14 actions, baseline 14, score 100.00") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		info := filepath.Join(dir, "info.json")
		os.WriteFile(info, []byte(`{"game_id":"trek-v1","baseline_actions":[18,52,44]}`), 0o644)
		if out, _, code := arc(t, "score", "--baseline", info, ws); code != 0 || !strings.HasPrefix(out, "trek-v1: score 50.00") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		bad := filepath.Join(dir, "bad.json")
		os.WriteFile(bad, []byte(`[18, "x"]`), 0o644)
		if _, errOut, code := arc(t, "score", "--baseline", bad, ws); code != 1 || !strings.Contains(errOut, bad+": baseline of level 2") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("without a state file or a built-in game the baselines must be given", func(t *testing.T) {
		other := t.TempDir()
		if err := os.CopyFS(filepath.Join(other, session.Dir), os.DirFS(filepath.Join(ws, session.Dir))); err != nil {
			t.Fatal(err)
		}
		if _, errOut, code := arc(t, "score", other); code != 1 || !strings.Contains(errOut, "give --game ID or --baseline FILE") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if _, errOut, code := arc(t, "score", "--game", "ls20-abc", other); code != 1 || !strings.Contains(errOut, "not a built-in game") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if out, _, code := arc(t, "score", "--game", games.Trek.ID, other); code != 0 || !strings.HasPrefix(out, "trek-v1: score 50.00") {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
}
