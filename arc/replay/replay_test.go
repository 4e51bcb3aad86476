package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"evident/arc/frame"
	"evident/arc/session"
	"evident/arc/worldmodel"
)

// state is the fake model's state: a level and a counter of steps.
type state struct{ level, n int }

func (s state) Level() int { return s.level }
func (s state) Key() (worldmodel.StateKey, error) {
	return worldmodel.StateKey{uint64(s.level), uint64(s.n)}, nil
}
func (s state) String() string { return fmt.Sprintf("level %d n %d", s.level, s.n) }
func (m *model) Close() error  { return nil }
func (m *model) Plan(context.Context, worldmodel.State, json.RawMessage) ([]session.Action, error) {
	return nil, nil
}

// model is a world model whose state counts steps: Step returns status[n]
// (RUNNING when absent) and fails at step failAt; Render draws the count in
// cell (0,0) of a 2×1 frame; Override sets cell (1,0) to 9 on level
// overrideLevel.
type model struct {
	status        map[int]session.Status
	failAt        int
	failErr       error
	overrideLevel int
	calls         []string
}

func (m *model) Reconstruct(_ context.Context, level int, _ frame.Grid) (worldmodel.State, error) {
	m.calls = append(m.calls, "reconstruct")
	return state{level: level}, nil
}

func (m *model) Step(_ context.Context, s worldmodel.State, a session.Action) (worldmodel.State, session.Status, error) {
	st := s.(state)
	st.n++
	m.calls = append(m.calls, "step "+a.Name)
	if st.n == m.failAt {
		return nil, "", m.failErr
	}
	if status, ok := m.status[st.n]; ok {
		return st, status, nil
	}
	return st, session.Running, nil
}

func (m *model) Render(_ context.Context, s worldmodel.State) (frame.Grid, error) {
	return grid(uint8(s.(state).n), 0), nil
}

func (m *model) Override(_ context.Context, f frame.Grid, s worldmodel.State, level, _, _ int) (frame.Grid, error) {
	if level != m.overrideLevel {
		return f, nil
	}
	g := f.Clone()
	g.Set(1, 0, 9)
	return g, nil
}

func grid(a, b uint8) frame.Grid {
	g, err := frame.FromCells(2, 1, []uint8{a, b})
	if err != nil {
		panic(err)
	}
	return g
}

// attempt is a recorded attempt of level 2 with n ACTION1 steps.
func attempt(n int) *session.Attempt {
	att := &session.Attempt{Level: 2, Index: 1, Dir: "/s/level_02_attempt_01", InitialFrame: grid(0, 0),
		InitialFramePath: "/s/level_02_attempt_01/initial_frame.txt"}
	for k := 1; k <= n; k++ {
		att.Steps = append(att.Steps, session.Step{Index: k, Action: session.Action{Name: "ACTION1"}, Observed: session.Running})
	}
	return att
}

func where(k int) string { return fmt.Sprintf("W step %d", k) }

func TestReplay(t *testing.T) {
	t.Run("the reconstruction is visit 0, then each of the first n steps in order", func(t *testing.T) {
		m := &model{status: map[int]session.Status{2: session.GameOver}}
		r := &Run{Model: m}
		var seen []string
		s, err := r.Replay(context.Background(), attempt(4), 3, where, func(k int, s worldmodel.State, status session.Status) error {
			seen = append(seen, fmt.Sprintf("%d:%d:%s", k, s.(state).n, status))
			return nil
		})
		if err != nil || s.(state).n != 3 || strings.Join(seen, " ") != "0:0:RUNNING 1:1:RUNNING 2:2:GAME_OVER 3:3:RUNNING" {
			t.Fatalf("state %v, err %v, visits %v", s, err, seen)
		}
	})
	t.Run("an error from visit stops the replay and is returned as it is", func(t *testing.T) {
		m := &model{}
		stop := errors.New("stop")
		_, err := (&Run{Model: m}).Replay(context.Background(), attempt(4), 4, where, func(k int, _ worldmodel.State, _ session.Status) error {
			if k == 2 {
				return stop
			}
			return nil
		})
		if err != stop || strings.Join(m.calls, ",") != "reconstruct,step ACTION1,step ACTION1" {
			t.Fatalf("err %v, calls %v", err, m.calls)
		}
	})
	t.Run("n beyond the recorded steps replays them all", func(t *testing.T) {
		s, err := (&Run{Model: &model{}}).Replay(context.Background(), attempt(2), 9, where, nil)
		if err != nil || s.(state).n != 2 {
			t.Fatalf("state %v, err %v", s, err)
		}
	})
	t.Run("a model error at step k is reported at where(k) with its traceback", func(t *testing.T) {
		var out bytes.Buffer
		m := &model{failAt: 2, failErr: &worldmodel.CallError{Func: "world_model_engine", Err: errors.New("boom"), Backtrace: "Traceback (most recent call last):\n  e.star:3:1: in world_model_engine\n"}}
		_, err := (&Run{Model: m, Out: &out}).Replay(context.Background(), attempt(3), 3, where, nil)
		var f *Failure
		want := "W step 2: world_model_engine: boom\nTraceback (most recent call last):\n  e.star:3:1: in world_model_engine\n"
		if !errors.As(err, &f) || f.Kind != ModelFailure || f.Level != 2 || out.String() != want || err.Error() != "W step 2: world_model_engine: boom" {
			t.Fatalf("err %v (%+v), report:\n%s", err, f, out.String())
		}
	})
}

func TestModelErr(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	late := fmt.Errorf("world_model_engine: %w", context.DeadlineExceeded)
	t.Run("past the run's own deadline it is TooSlow, printing the TooSlow line alone", func(t *testing.T) {
		var out bytes.Buffer
		err := (&Run{Out: &out, Deadline: expired, TooSlow: "too slow."}).ModelErr(3, "W", late)
		var f *Failure
		if !errors.As(err, &f) || f.Kind != TooSlow || f.Level != 3 || out.String() != "too slow.\n" || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, out %q", err, out.String())
		}
	})
	for _, c := range []struct {
		name string
		run  *Run
		err  error
	}{
		{"a deadline that is not the run's own is returned unprinted", &Run{Deadline: context.Background(), TooSlow: "too slow."}, late},
		{"without a deadline of its own a deadline error is returned unprinted", &Run{TooSlow: "too slow."}, late},
		{"a cancellation is returned unprinted", &Run{Deadline: expired}, context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			c.run.Out = &out
			if err := c.run.ModelErr(1, "W", c.err); err != c.err || out.Len() != 0 {
				t.Fatalf("err %v, out %q", err, out.String())
			}
		})
	}
}

func TestRenderWarnsOncePerLevel(t *testing.T) {
	var out bytes.Buffer
	r := &Run{Model: &model{overrideLevel: 2}, Out: &out, Head: "verify_world_model.py: "}
	ctx := context.Background()
	for _, s := range []state{{level: 1}, {level: 2, n: 1}, {level: 2, n: 2}} {
		g, err := r.Render(ctx, s, 1, s.n)
		want := grid(uint8(s.n), 0)
		if s.level == 2 {
			want = grid(uint8(s.n), 9)
		}
		if err != nil || !frame.Equal(g, want) {
			t.Fatalf("%v: %v, %v", s, g, err)
		}
	}
	want := "verify_world_model.py: warning: level 2 uses apply_render_overrides; treat this as temporary and as a clue to a missing puzzle mechanic\n"
	if out.String() != want {
		t.Fatalf("out %q, want %q", out.String(), want)
	}
}

func TestFrameFailure(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, MismatchDir, "7"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &Run{Out: &out, Workspace: ws}
	att := attempt(1)
	real := FinalOf(att, &att.Steps[0])
	real.Grid = grid(1, 2)
	err := r.FrameFailure(&Failure{Kind: FrameMismatch, Level: 2, Summary: "mismatch after action"},
		[]string{"head one", "head two"}, real, grid(1, 3), []string{"tail"})
	mm := filepath.Join(ws, MismatchDir, "8")
	want := strings.Join([]string{"head one", "head two",
		"real ascii: /s/level_02_attempt_01/step_0001_final.txt (missing)",
		"real png: /s/level_02_attempt_01/step_0001_final.png (missing)",
		"simulated ascii: " + mm + "/simulated_frame.txt (predicted frame as text)",
		"simulated png: " + mm + "/simulated_frame.png (predicted frame rendered)",
		"mismatch region png: " + mm + "/mismatch_region.png (localized mismatch neighborhoods)",
		"mismatch as magneta png: " + mm + "/mismatch_as_magneta.png (full frame with magenta mismatch pixels)",
		"tail"}, "\n") + "\n"
	var f *Failure
	if !errors.As(err, &f) || out.String() != want || f.Report+"\n" != want || f.Artifacts == nil || f.Artifacts.N != 8 || err.Error() != "mismatch after action" {
		t.Fatalf("err %v, report:\n%s\nwant:\n%s", err, out.String(), want)
	}
	sim, err := frame.ReadASCIIFile(f.Artifacts.SimulatedASCII)
	if err != nil || !frame.Equal(sim, grid(1, 3)) {
		t.Fatalf("simulated frame %v, %v", sim, err)
	}
	t.Run("a zero real frame writes and prints nothing", func(t *testing.T) {
		out.Reset()
		err := r.FrameFailure(&Failure{Kind: FrameMismatch}, nil, Real{}, grid(1, 3), nil)
		if err == nil || errors.As(err, new(*Failure)) || out.Len() != 0 {
			t.Fatalf("err %v, out %q", err, out.String())
		}
	})
}

func TestRealPaths(t *testing.T) {
	att := attempt(1)
	att.InitialPNGPath = "/s/level_02_attempt_01/initial_frame.png"
	att.Steps[0].FinalPath = "/s/level_02_attempt_01/step_0001_final.txt"
	if r := InitialOf(att); r.ASCII != att.InitialFramePath || r.PNG != att.InitialPNGPath || !frame.Equal(r.Grid, att.InitialFrame) {
		t.Errorf("InitialOf = %+v", r)
	}
	if r := FinalOf(att, &att.Steps[0]); r.ASCII != att.Steps[0].FinalPath || r.PNG != "/s/level_02_attempt_01/step_0001_final.png (missing)" {
		t.Errorf("FinalOf = %+v", r)
	}
}

func TestFailureError(t *testing.T) {
	if got := (&Failure{Report: "first\nsecond"}).Error(); got != "first" {
		t.Errorf("Error = %q, want the report's first line", got)
	}
	if got := (&Failure{Report: "first\nsecond", Summary: "mismatch after action"}).Error(); got != "mismatch after action" {
		t.Errorf("Error = %q, want the summary", got)
	}
}

func TestFormatAction(t *testing.T) {
	if got := FormatAction(session.Action{Name: "ACTION6", X: 15, Y: 47}); got != `{"name":"ACTION6","x":15,"y":47}` {
		t.Errorf("ACTION6 = %s", got)
	}
	if got := FormatAction(session.Action{Name: "ACTION1"}); got != "ACTION1" {
		t.Errorf("ACTION1 = %s", got)
	}
}
