package worldmodel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"evident/arc/session"
)

// TestMemoryLimit: issue 15 item 2 — "x = x + x forty times (far under the
// step budget) grows to the machine's memory". The call must stop with an
// error naming the function and the limit, and the next call work.
func TestMemoryLimit(t *testing.T) {
	for _, c := range []struct{ name, start string }{
		{"forty doublings of a string stop at the memory limit", `"ab"`},
		{"forty doublings of a list stop at the memory limit", `[0, 1]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := modelDir(t, map[string]string{EngineFile: `
def world_model_engine(state, action):
    x = ` + c.start + `
    for i in range(40):
        x = x + x
    return state, RUNNING
`})
			m := load(t, dir, func(o *StarlarkOptions) { o.MemoryLimit = 64 << 20 })
			// The operation in flight when the limit is seen finishes
			// first; on a busy machine it can take longer than the 5 s
			// after which a call is abandoned (tested on its own in
			// TestAbandonedBuiltin), which is not what this test is about.
			m.grace = 10 * time.Minute
			ctx := context.Background()
			s, err := m.Reconstruct(ctx, 1, initial(1))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = m.Step(ctx, s, session.Action{Name: "ACTION1"})
			var ce *CallError
			if !errors.Is(err, ErrMemoryLimit) || !errors.As(err, &ce) || ce.Func != FuncEngine {
				t.Fatalf("err = %v, want a world_model_engine memory-limit error", err)
			}
			want := "world_model_engine: memory limit exceeded: world_model_engine made the heap grow by more than 64 MiB (StarlarkOptions.MemoryLimit)"
			if err.Error() != want {
				t.Errorf("message %q, want %q", err, want)
			}
			if !strings.Contains(ce.Backtrace, "in world_model_engine") {
				t.Errorf("backtrace does not point at the loop:\n%s", ce.Backtrace)
			}
			if _, err := m.Render(ctx, s); err != nil {
				t.Fatalf("render after a memory-limit failure: %v", err)
			}
		})
	}
	t.Run("top-level code is bounded too and names its file", func(t *testing.T) {
		dir := modelDir(t, map[string]string{EngineFile: "x = 'ab'\nfor i in range(40):\n    x = x + x\n"})
		_, err := LoadStarlark(context.Background(), StarlarkOptions{Dir: dir, MemoryLimit: 32 << 20})
		if !errors.Is(err, ErrMemoryLimit) || !strings.HasPrefix(err.Error(), "world_model_engine.star: memory limit exceeded") ||
			!strings.Contains(err.Error(), "32 MiB") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("the default limit is 1 GiB", func(t *testing.T) {
		m := load(t, modelDir(t, nil))
		if m.memLimit != 1<<30 || fmtBytes(m.memLimit) != "1 GiB" {
			t.Fatalf("limit %d (%s)", m.memLimit, fmtBytes(m.memLimit))
		}
	})
}

// TestBuiltinsCountSteps: str() of a value that shares itself (2^22 leaves
// from 22 steps of x = [x, x]) cost one step in go.starlark.net's str and
// ran for as long as it liked; here it spends the call's step budget.
func TestBuiltinsCountSteps(t *testing.T) {
	for _, call := range []string{"str(x)", "repr(x)", "print(x)", "fail(x)", "print('x', x, sep='')"} {
		t.Run(call+" of a shared 2^22-leaf value hits the step limit", func(t *testing.T) {
			dir := modelDir(t, map[string]string{EngineFile: `
def world_model_engine(state, action):
    x = [1]
    for i in range(22):
        x = [x, x]
    s = ` + call + `
    return state, RUNNING
`})
			m := load(t, dir, func(o *StarlarkOptions) { o.CallSteps = 1_000_000 })
			ctx := context.Background()
			s, err := m.Reconstruct(ctx, 1, initial(1))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = m.Step(ctx, s, session.Action{Name: "ACTION1"})
			if !errors.Is(err, ErrStepLimit) || err.Error() != "world_model_engine: step limit exceeded: more than 1000000 steps in one call" {
				t.Fatalf("err = %v, want the step limit", err)
			}
		})
	}
	t.Run("a value nested 10,000 deep prints; one a million deep is an error of the call, not a crash", func(t *testing.T) {
		dir := modelDir(t, map[string]string{EngineFile: `
def world_model_engine(state, action):
    x = []
    for i in range(9999):
        x = [x]
    s = str(x)
    if len(s) != 20000:
        fail("length", len(s))
    if action["name"] == "ACTION2":
        for i in range(1000000):
            x = [x]
        s = str(x)
    return state, RUNNING
`})
		m := load(t, dir)
		ctx := context.Background()
		s, err := m.Reconstruct(ctx, 1, initial(1))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.Step(ctx, s, session.Action{Name: "ACTION1"}); err != nil {
			t.Fatal(err)
		}
		_, _, err = m.Step(ctx, s, session.Action{Name: "ACTION2"})
		if err == nil || !strings.Contains(err.Error(), "value nested deeper than 10000 levels cannot be printed") {
			t.Fatalf("err = %v, want the depth limit", err)
		}
	})
}

// TestReprIsStarlarks: the counted str/repr write what go.starlark.net
// writes, cycles included.
func TestReprIsStarlarks(t *testing.T) {
	m := load(t, modelDir(t, nil))
	thread := &starlark.Thread{}
	m.curLimit = 1 << 62
	self := starlark.NewList([]starlark.Value{starlark.MakeInt(1)})
	self.Append(self)
	d := starlark.NewDict(2)
	d.SetKey(starlark.String("a\"b"), starlark.Tuple{starlark.MakeInt(1)})
	d.SetKey(starlark.MakeInt(2), d)
	set := starlark.NewSet(2)
	set.Insert(starlark.String("s"))
	set.Insert(starlark.Tuple{})
	for _, v := range []starlark.Value{
		starlark.None, starlark.True, starlark.MakeInt(-7), starlark.Float(2.5), starlark.String("é\n'\""),
		starlark.Bytes("b\x00"), self, d, set, starlark.Tuple{starlark.String("x"), starlark.None},
		starlark.NewList(nil), NewGrid(initial(1), true), starlark.NewBuiltin("f", nil),
	} {
		got, err := m.repr(thread, v, false)
		if err != nil || got != v.String() {
			t.Errorf("repr %q (%v), want %q", got, err, v.String())
		}
		s, _ := starlark.Call(thread, starlark.Universe["str"], starlark.Tuple{v}, nil)
		if got, err := m.repr(thread, v, true); err != nil || got != string(s.(starlark.String)) {
			t.Errorf("str %q (%v), want %q", got, err, s)
		}
	}
}
