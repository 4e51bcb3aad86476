package worldmodel

import (
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"evident/arc/frame"
)

// exec runs src with the grid built-ins and returns its globals.
func exec(t *testing.T, src string, extra starlark.StringDict) (starlark.StringDict, error) {
	t.Helper()
	pre := starlark.StringDict{
		"grid":           starlark.NewBuiltin("grid", builtinGrid),
		"grid_from_rows": starlark.NewBuiltin("grid_from_rows", builtinGridFromRows),
	}
	for k, v := range extra {
		pre[k] = v
	}
	return starlark.ExecFileOptions(fileOptions, &starlark.Thread{}, "test.star", src, pre)
}

func TestGridBuiltins(t *testing.T) {
	src := `
def eq(got, want):
    if got != want:
        fail("got %r, want %r" % (got, want))

g = grid(5, 4)
eq((g.width, g.height, g.get(0, 0)), (5, 4, 0))
eq(type(g), "grid")
g.set(1, 2, 9)
eq(g.get(1, 2), 9)
eq(g.get(9, 9, -1), -1)
eq(g.get(x = 1, y = 2), 9)
g.fill_rect(3, 1, 10, 10, 4)          # clipped at the right and bottom
eq(g.count(4), 6)
eq(g.find(9), [(1, 2)])
eq(g.bbox(4), (3, 1, 2, 3))
eq(g.bbox(7), None)
h = g.copy()
eq(h == g, True)
h.set(0, 0, 1)
eq(h == g, False)
eq(h.diff(g), [(0, 0)])
eq(g.row(2), [0, 9, 0, 4, 4])
c = g.crop(1, 1, 3, 2)
eq((c.width, c.height, c.get(0, 1)), (3, 2, 9))
p = grid(3, 3, 2)
p.set(1, 1, 0)
g.paste(p, -1, -1, transparent = 0)   # clipped at the top and left; 0 skipped
eq(g.row(0), [0, 2, 0, 0, 0])    # (0, 0) lies under the transparent centre
eq(g.get(0, 1), 2)
g.paste(p, 0, 0)
eq(g.get(1, 1), 0)
r = grid_from_rows(["0A", "f3"])
eq((r.get(1, 0), r.get(0, 1)), (10, 15))
r2 = grid_from_rows([[0, 10], [15, 3]])
eq(r == r2, True)
g.fill(5)
eq(g.count(5), 20)
`
	if _, err := exec(t, src, nil); err != nil {
		if ee, ok := err.(*starlark.EvalError); ok {
			t.Fatal(ee.Backtrace())
		}
		t.Fatal(err)
	}

	for body, want := range map[string]string{
		"grid(0, 3)":                           "grid: size 0x3, want 1..4096 each",
		"grid(2, 2).set(2, 0, 1)":              "grid.set: (2, 0) outside the 2x2 grid",
		"grid(2, 2).set(0, 0, 16)":             "grid.set: colour 16, want 0..15",
		"grid(2, 2).get(-1, 0)":                "grid.get: (-1, 0) outside the 2x2 grid (pass a default to allow it)",
		"grid(2, 2).crop(1, 1, 2, 1)":          "grid.crop: rectangle (1, 1) 2x1 not inside the 2x2 grid",
		"grid(2, 2).fill_rect(0, 0, -1, 1, 1)": "negative size",
		"grid_from_rows([\"0A\", \"f\"])":      "row 1: want a hex string of length 2",
		"grid_from_rows([[0, 1], [2]])":        "row 1 has 1 cells, row 0 has 2",
		"grid_from_rows([[0, 99]])":            "cell (1, 0) = 99, want an int 0..15",
		"{grid(1, 1): 1}":                      "unhashable: mutable grid",
		"frozen.set(0, 0, 1)":                  "grid.set: grid is frozen",
		"frozen.fill(1)":                       "grid is frozen",
		"frozen.paste(grid(1, 1), 0, 0)":       "grid is frozen",
		"frozen.fill_rect(0, 0, 1, 1, 1)":      "grid is frozen",
		"grid(1, 1) < grid(1, 1)":              "grid < grid not supported",
		"grid(1, 1).nope":                      "grid has no .nope field or method",
	} {
		fg, _ := frame.New(2, 2)
		_, err := exec(t, "x = "+body+"\n", starlark.StringDict{"frozen": NewGrid(fg, true)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", body, err, want)
		}
	}

	// Frozen grids are hashable and usable as dict keys; equal grids hash
	// alike.
	fa, _ := frame.FromCells(2, 1, []uint8{1, 2})
	fb, _ := frame.FromCells(2, 1, []uint8{1, 2})
	if _, err := exec(t, "d = {a: 1}\nif d[b] != 1:\n    fail(\"lookup\")\n", starlark.StringDict{"a": NewGrid(fa, true), "b": NewGrid(fb, true)}); err != nil {
		t.Fatal(err)
	}
}

func TestValueKey(t *testing.T) {
	g, err := exec(t, `
a = {"level": 1, "x": 3, "walls": set([(1, 2), (3, 4)]), "g": grid(2, 2)}
b = {"g": grid(2, 2), "walls": set([(3, 4), (1, 2)]), "x": 3, "level": 1}
c = {"level": 1, "x": 4, "walls": set([(1, 2), (3, 4)]), "g": grid(2, 2)}
gg = grid(2, 2)
gg.set(1, 1, 1)
d = {"level": 1, "x": 3, "walls": set([(1, 2), (3, 4)]), "g": gg}
e = [1, 2]
f = (1, 2)
h = {"k": "ab", "l": ""}
i = {"k": "a", "l": "b"}
big = 1 << 100
neg = -0.0
pos = 0.0
fn = len
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := func(name string) StateKey {
		k, err := ValueKey(g[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return k
	}
	if key("a") != key("b") {
		t.Error("dicts and sets built in different orders have different keys")
	}
	for _, pair := range [][2]string{{"a", "c"}, {"a", "d"}, {"e", "f"}, {"h", "i"}, {"big", "pos"}} {
		if key(pair[0]) == key(pair[1]) {
			t.Errorf("%s and %s share a key", pair[0], pair[1])
		}
	}
	if key("neg") != key("pos") {
		t.Error("-0.0 and 0.0 differ")
	}
	if _, err := ValueKey(g["fn"]); err == nil || !strings.Contains(err.Error(), "a builtin_function_or_method has no value key") {
		t.Errorf("function: err = %v", err)
	}
	l := starlark.NewList(nil)
	_ = l.Append(l)
	if _, err := ValueKey(l); err == nil || !strings.Contains(err.Error(), "contains itself") {
		t.Errorf("self-containing list: err = %v", err)
	}
}
