package games_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/session"
	"evident/arc/verify"
	"evident/arc/worldmodel"
)

// player plays one game with the client over loopback into a fresh
// workspace.
type player struct {
	t    *testing.T
	g    *games.Game
	seed uint64
	c    *client.Client
	ws   string
}

func newPlayer(t *testing.T, g *games.Game, seed uint64) *player {
	t.Helper()
	h := httptest.NewServer(games.NewServer(games.Config{Seed: seed}))
	t.Cleanup(h.Close)
	ws := t.TempDir()
	c, err := client.New(client.Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(context.Background(), h.URL, g.ID, api.OpenScorecardRequest{}); err != nil {
		t.Fatal(err)
	}
	// The player is the agent: its initial_full_frames/ are the local
	// server's maps (the client never writes them).
	if _, err := c.WriteFullFrame(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &player{t: t, g: g, seed: seed, c: c, ws: ws}
}

// move sends actions and returns the last result.
func (p *player) move(actions ...session.Action) *client.Result {
	p.t.Helper()
	var res *client.Result
	for _, a := range actions {
		var err error
		if res, err = p.c.Move(context.Background(), a, nil); err != nil {
			p.t.Fatalf("%s: %v", a, err)
		}
		if _, err = p.c.WriteFullFrame(context.Background()); err != nil {
			p.t.Fatalf("full frame after %s: %v", a, err)
		}
	}
	return res
}

// lose returns a shortest sequence of moves that ends the level in
// GAME_OVER, found by replaying candidates on fresh levels; nil if none
// within three moves.
func lose(g *games.Game, seed uint64, level int) []session.Action {
	var moves []session.Action
	for _, n := range g.Actions {
		if n >= 1 && n <= 4 {
			moves = append(moves, session.Action{Name: session.ActionNames[n]})
		}
	}
	seqs := [][]session.Action{nil}
	for depth := 0; depth < 3; depth++ {
		var next [][]session.Action
		for _, s := range seqs {
			for _, m := range moves {
				cand := append(append([]session.Action{}, s...), m)
				lv := g.NewLevel(seed, level)
				out := games.Playing
				for _, a := range cand {
					if out != games.Playing {
						break
					}
					_, out = lv.Act(a)
				}
				if out == games.Lost {
					return cand
				}
				if out == games.Playing {
					next = append(next, cand)
				}
			}
		}
		seqs = next
	}
	return nil
}

func TestReferenceModels(t *testing.T) {
	ctx := context.Background()
	for _, g := range games.All() {
		t.Run(g.ID+"'s reference model verifies against a session recorded with the client, its planner too", func(t *testing.T) {
			const seed = 9
			p := newPlayer(t, g, seed)
			// Level 1: a false start ending in GAME_OVER where the game has
			// one, else wasted actions, then RESET and the solution.
			switch g {
			case games.Trek:
				for i := 0; i < 24; i++ {
					p.move(session.Action{Name: "ACTION3"})
				}
			case games.Vista:
				seq := lose(g, seed, 1)
				if seq == nil {
					t.Fatal("no way to lose level 1")
				}
				p.move(seq...)
			case games.Lights:
				sol := g.Solution(seed, 1)
				p.move(session.Action{Name: "ACTION6", X: 0, Y: 0}, sol[0])
			}
			st, _ := p.c.ReadState()
			if g != games.Lights && st.State != api.StateGameOver {
				t.Fatalf("state %s after the false start", st.State)
			}
			if _, err := p.c.Move(ctx, session.Action{Name: "ACTION1"}, nil); g != games.Lights && !errors.Is(err, client.ErrGameOver) {
				t.Fatalf("an action in GAME_OVER: %v", err)
			}
			p.move(session.Action{Name: "RESET"})
			p.move(g.Solution(seed, 1)...)
			// Level 2: a wrong move, a level RESET, the solution.
			if g == games.Lights {
				p.move(session.Action{Name: "ACTION6", X: 31, Y: 31})
			} else {
				p.move(session.Action{Name: "ACTION2"})
			}
			p.move(session.Action{Name: "RESET"})
			p.move(g.Solution(seed, 2)...)
			// Level 3: straight through.
			res := p.move(g.Solution(seed, 3)...)
			if res.State.State != api.StateWin || res.Status != session.LevelCompleted {
				t.Fatalf("the game ended in %s / %s", res.State.State, res.Status)
			}
			sess, err := session.Read(p.c.SessionRoot())
			if err != nil {
				t.Fatal(err)
			}
			if n := len(sess.Level(1).Attempts); n != 2 || len(sess.Level(2).Attempts) != 2 || len(sess.Level(3).Attempts) != 1 {
				t.Fatalf("attempts per level: %d %d %d", n, len(sess.Level(2).Attempts), len(sess.Level(3).Attempts))
			}
			if g == games.Vista {
				for l := 1; l <= 3; l++ {
					if _, ok, err := session.ReadInitialFullFrame(filepath.Join(p.ws, session.InitialFullFramesDir), l); !ok || err != nil {
						t.Fatalf("no full frame of level %d: %v", l, err)
					}
				}
			}

			if err := games.WriteModel(g.ID, p.ws); err != nil {
				t.Fatal(err)
			}
			m, err := worldmodel.LoadStarlark(ctx, worldmodel.StarlarkOptions{Dir: p.ws})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := verify.Verify(ctx, m, verify.Options{Workspace: p.ws, Out: &out}); err != nil ||
				!strings.HasSuffix(out.String(), "levels 1..3 verification passed\n") {
				t.Fatalf("verify: %v\n%s", err, out.String())
			}
			out.Reset()
			if err := verify.VerifyPlanner(ctx, m, verify.Options{Workspace: p.ws, Out: &out}); err != nil ||
				!strings.HasSuffix(out.String(), "levels 1..3 planner verification passed\n") {
				t.Fatalf("planner verify: %v\n%s", err, out.String())
			}
		})
	}
	t.Run("a wrong reference model fails verification (the check has teeth)", func(t *testing.T) {
		p := newPlayer(t, games.Vista, 0)
		p.move(games.Vista.Solution(0, 1)...)
		games.WriteModel(games.Vista.ID, p.ws)
		os.RemoveAll(filepath.Join(p.ws, session.InitialFullFramesDir))
		m, err := worldmodel.LoadStarlark(ctx, worldmodel.StarlarkOptions{Dir: p.ws})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		var f *verify.Failure
		if err := verify.Verify(ctx, m, verify.Options{Workspace: p.ws, Out: &out}); !errors.As(err, &f) {
			t.Fatalf("without the full frames the model verified: %v\n%s", err, out.String())
		}
	})
	t.Run("WriteModel and ModelSource refuse an unknown game", func(t *testing.T) {
		if err := games.WriteModel("nope", t.TempDir()); err == nil {
			t.Error("WriteModel of an unknown game")
		}
		if _, err := games.ModelSource(games.Trek.ID, "other.star"); err == nil {
			t.Error("ModelSource of an unknown file")
		}
	})
}
