package client_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/session"
)

// goldenPlay is one recording of testdata/baseline1 (see its README.txt):
// the game and the actions sent after `client.py start GAME --seed 0`.
type goldenPlay struct {
	game    string
	actions []session.Action
}

func repeat(a session.Action, n int) []session.Action {
	out := make([]session.Action, n)
	for i := range out {
		out[i] = a
	}
	return out
}

var (
	a1, a2, a3, a4 = session.Action{Name: "ACTION1"}, session.Action{Name: "ACTION2"}, session.Action{Name: "ACTION3"}, session.Action{Name: "ACTION4"}
	reset          = session.Action{Name: "RESET"}
	click          = func(x, y int) session.Action { return session.Action{Name: "ACTION6", X: x, Y: y} }
)

// goldenPlays are the action sequences of testdata/baseline1/README.txt.
var goldenPlays = []goldenPlay{
	// Trek: 24 × ACTION1 runs the move budget out (GAME_OVER at step 24),
	// RESET opens attempt 2, up 3, right 8, down 3 completes level 1 (a
	// two-frame response: intermediate_00 and final), one move in level 2,
	// RESET opens level 2 attempt 2, one move.
	{"trek-v1", slices.Concat(repeat(a1, 24), []session.Action{reset}, repeat(a1, 3), repeat(a4, 8), repeat(a2, 3),
		[]session.Action{a2, reset, a3})},
	// Lights: ACTION6 with x, y; the second click completes level 1.
	{"lights-v1", []session.Action{click(31, 31), click(23, 39), click(10, 10)}},
	// Vista: every response animates the slide (intermediates _00.._09);
	// the sixth move completes level 1.
	{"vista-v1", []session.Action{a3, a2, a4, a1, a3, a2}},
}

// sessionFiles lists the files under root as slash paths, leaving out
// dot-files (baseline1's client keeps its state in
// session/.client_session.json; evident's client keeps it outside the
// session folder).
func sessionFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != root {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// decodeRGB decodes a PNG and returns its size and 8-bit RGBA pixels.
func decodeRGB(t *testing.T, path string) (image.Rectangle, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if rgba, ok := img.(*image.RGBA); ok {
		return b, rgba.Pix
	}
	pix := make([]byte, 0, 4*b.Dx()*b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			pix = append(pix, byte(r>>8), byte(g>>8), byte(bl>>8), byte(a>>8))
		}
	}
	return b, pix
}

// TestGoldenRecordingMatchesBaseline1 plays the actions of each recording
// in testdata/baseline1 — made with baseline1's own client.py against
// evident's local server (README.txt) — with evident's client against the
// in-process local server, and compares the two session trees: the same
// files, text files byte for byte, PNGs pixel for pixel (spec arc.md
// "Compatibility facts", issue 10 item 1).
func TestGoldenRecordingMatchesBaseline1(t *testing.T) {
	for _, p := range goldenPlays {
		t.Run(p.game+" recorded by evident's client equals baseline1's recording", func(t *testing.T) {
			srv := httptest.NewServer(games.NewServer(games.Config{}))
			t.Cleanup(srv.Close)
			ws := t.TempDir()
			c, err := client.New(client.Options{Workspace: ws})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := c.Start(ctx, srv.URL, p.game, api.OpenScorecardRequest{}); err != nil {
				t.Fatalf("start: %v", err)
			}
			for i, a := range p.actions {
				if _, err := c.Move(ctx, a, nil); err != nil {
					t.Fatalf("action %d (%s): %v", i+1, a, err)
				}
			}
			want := filepath.Join("testdata", "baseline1", p.game, "session")
			got := filepath.Join(ws, session.Dir)
			wf, gf := sessionFiles(t, want), sessionFiles(t, got)
			if len(wf) == 0 {
				t.Fatalf("no golden files under %s", want)
			}
			for _, f := range wf {
				if _, found := slices.BinarySearch(gf, f); !found {
					t.Errorf("evident did not write %s", f)
				}
			}
			for _, f := range gf {
				if _, found := slices.BinarySearch(wf, f); !found {
					t.Errorf("evident wrote %s, which baseline1 does not", f)
				}
			}
			for _, f := range wf {
				gp, wp := filepath.Join(got, f), filepath.Join(want, f)
				if _, err := os.Stat(gp); err != nil {
					continue
				}
				if strings.HasSuffix(f, ".png") {
					wb, wpix := decodeRGB(t, wp)
					gb, gpix := decodeRGB(t, gp)
					if wb != gb || !bytes.Equal(wpix, gpix) {
						t.Errorf("%s: pixels differ (evident %v, baseline1 %v)", f, gb, wb)
					}
					continue
				}
				wd, _ := os.ReadFile(wp)
				gd, _ := os.ReadFile(gp)
				if !bytes.Equal(wd, gd) {
					t.Errorf("%s differs:\nevident:\n%s\nbaseline1:\n%s", f, clipText(gd), clipText(wd))
				}
			}
		})
	}
}

func clipText(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}
