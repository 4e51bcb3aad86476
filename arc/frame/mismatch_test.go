package frame

import (
	"bytes"
	"image/color"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var (
	blue  = Palette[9]
	white = Palette[0]
	grey  = Palette[3]
)

// twentyByTwenty returns a 20×20 real frame (white with a grey border) and a
// prediction that differs from it only at cell (mx, my), which it paints 8.
func twentyByTwenty(t *testing.T, mx, my int) (real, pred Grid) {
	t.Helper()
	real = filled(t, 20, 20, 0)
	for i := 0; i < 20; i++ {
		real.Set(i, 0, 3)
		real.Set(0, i, 3)
		real.Set(i, 19, 3)
		real.Set(19, i, 3)
	}
	real.Set(mx, my, 9)
	pred = real.Clone()
	pred.Set(mx, my, 8)
	return real, pred
}

func TestMismatchRegion(t *testing.T) {
	realF, pred := twentyByTwenty(t, 10, 10)
	img := MismatchRegion(realF, pred)
	if img.Bounds().Dx() != 160 || img.Bounds().Dy() != 160 {
		t.Fatalf("bounds %v, want 160×160", img.Bounds())
	}
	tests := []struct {
		name string
		x, y int
		want color.RGBA
	}{
		{"the mismatching cell itself shows its real colour, not the prediction", 10, 10, blue},
		{"a cell at distance² 13 (dx 2, dy 3) is inside the disc", 12, 13, white},
		{"a cell at distance² 41 (dx 4, dy 5) is inside the disc", 14, 15, white},
		{"a cell exactly on the radius (dx 7) is shown", 17, 10, white},
		{"a cell exactly on the radius upwards (dy −7) is shown", 10, 3, white},
		{"a cell just beyond the radius (dx 8) is brown", 18, 10, Brown},
		{"a diagonal cell at distance² 50 (dx 5, dy 5) is brown", 15, 15, Brown},
		{"a cell at distance² 52 (dx 6, dy 4) is brown", 4, 6, Brown},
		{"the far border is brown", 19, 19, Brown},
		{"the near border outside the disc is brown", 0, 0, Brown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkBlock(t, img, tc.x, tc.y, tc.want, "v1")
		})
	}

	t.Run("the PNG file decodes to the same pixels", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), MismatchRegionFile)
		if err := WriteMismatchRegionPNG(path, realF, pred); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := decodePNG(t, data)
		checkBlock(t, dec, 10, 10, blue, "file: mismatch")
		checkBlock(t, dec, 17, 10, white, "file: boundary")
		checkBlock(t, dec, 18, 10, Brown, "file: outside")
		if rgbAt(dec, 18*8, 80) != (color.RGBA{139, 69, 19, 255}) {
			t.Errorf("brown is not (139,69,19)")
		}
	})

	t.Run("a disc at the corner is clipped and shows the real border", func(t *testing.T) {
		r, p := twentyByTwenty(t, 1, 1)
		img := MismatchRegion(r, p)
		checkBlock(t, img, 0, 0, grey, "corner")
		checkBlock(t, img, 8, 1, white, "dx 7")
		checkBlock(t, img, 9, 1, Brown, "dx 8")
		checkBlock(t, img, 1, 8, white, "dy 7")
		checkBlock(t, img, 1, 9, Brown, "dy 8")
		checkBlock(t, img, 0, 7, grey, "border at distance² 37 (dx 1, dy 6)")
		checkBlock(t, img, 0, 8, Brown, "border at distance² 50 (dx 1, dy 7)")
	})

	t.Run("equal frames give an all-brown region", func(t *testing.T) {
		r, _ := twentyByTwenty(t, 10, 10)
		img := MismatchRegion(r, r.Clone())
		for _, c := range [][2]int{{0, 0}, {10, 10}, {19, 19}} {
			checkBlock(t, img, c[0], c[1], Brown, "equal")
		}
	})

	t.Run("two discs union their neighbourhoods", func(t *testing.T) {
		r, p := twentyByTwenty(t, 3, 3)
		p.Set(16, 16, 8)
		img := MismatchRegion(r, p)
		checkBlock(t, img, 10, 3, white, "dx 7 from the first")
		checkBlock(t, img, 9, 16, white, "dx 7 from the second")
		checkBlock(t, img, 10, 10, Brown, "between both (distance² 49+49)")
	})
}

func TestMismatchAsMagneta(t *testing.T) {
	realF, pred := twentyByTwenty(t, 10, 10)
	img := MismatchAsMagneta(realF, pred)
	tests := []struct {
		name string
		x, y int
		want color.RGBA
	}{
		{"the mismatching cell is magenta", 10, 10, Magenta},
		{"its right neighbour keeps the real colour", 11, 10, white},
		{"its upper neighbour keeps the real colour", 10, 9, white},
		{"the border far away keeps the real grey", 0, 0, grey},
		{"a cell beyond the v1 radius still shows the real frame", 18, 10, white},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkBlock(t, img, tc.x, tc.y, tc.want, "v2")
		})
	}
	t.Run("magenta is exactly (255,0,255) after a PNG round trip", func(t *testing.T) {
		var buf bytes.Buffer
		if err := EncodePNG(&buf, img); err != nil {
			t.Fatal(err)
		}
		dec := decodePNG(t, buf.Bytes())
		if got := rgbAt(dec, 80, 80); got != (color.RGBA{255, 0, 255, 255}) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("a smaller prediction marks every real cell it lacks", func(t *testing.T) {
		r := filled(t, 3, 2, 14)
		p := filled(t, 2, 2, 14)
		img := MismatchAsMagneta(r, p)
		checkBlock(t, img, 1, 1, Palette[14], "shared")
		checkBlock(t, img, 2, 0, Magenta, "missing column")
		checkBlock(t, img, 2, 1, Magenta, "missing column")
		reg := MismatchRegion(r, p)
		checkBlock(t, reg, 0, 0, Palette[14], "v1 near the missing column")
	})
	t.Run("equal frames give the real frame", func(t *testing.T) {
		img := MismatchAsMagneta(realF, realF.Clone())
		checkBlock(t, img, 10, 10, blue, "no mismatch")
	})
}

func TestWriteMismatchArtifacts(t *testing.T) {
	root := filepath.Join(t.TempDir(), "mismatch_frames")
	for _, d := range []string{"3", "10x", "notes"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "99"), nil, 0o644); err != nil { // a file, not a folder
		t.Fatal(err)
	}
	realF, pred := twentyByTwenty(t, 10, 10)

	t.Run("the first write takes the highest numbered folder plus one", func(t *testing.T) {
		a, err := WriteMismatchArtifacts(root, realF, pred)
		if err != nil {
			t.Fatal(err)
		}
		if a.N != 4 || a.Dir != filepath.Join(root, "4") {
			t.Fatalf("got N=%d dir %s, want 4", a.N, a.Dir)
		}
		for _, p := range []string{a.SimulatedASCII, a.SimulatedPNG, a.Region, a.Magneta} {
			if !filepath.IsAbs(p) {
				t.Errorf("%s is not absolute", p)
			}
			if _, err := os.Stat(p); err != nil {
				t.Error(err)
			}
		}
		if filepath.Base(a.Magneta) != "mismatch_as_magneta.png" || filepath.Base(a.Region) != "mismatch_region.png" ||
			filepath.Base(a.SimulatedASCII) != "simulated_frame.txt" || filepath.Base(a.SimulatedPNG) != "simulated_frame.png" {
			t.Errorf("unexpected names %+v", a)
		}
		sim, err := ReadASCIIFile(a.SimulatedASCII)
		if err != nil || !Equal(sim, pred) {
			t.Fatalf("simulated frame does not read back as the prediction: %v", err)
		}
	})
	t.Run("the next write takes the following number", func(t *testing.T) {
		a, err := WriteMismatchArtifacts(root, realF, pred)
		if err != nil || a.N != 5 {
			t.Fatalf("got N=%d, %v; want 5", a.N, err)
		}
	})
	t.Run("an empty root starts at 1", func(t *testing.T) {
		a, err := WriteMismatchArtifacts(filepath.Join(t.TempDir(), "fresh", "mismatch_frames"), realF, pred)
		if err != nil || a.N != 1 || filepath.Base(a.Dir) != strconv.Itoa(1) {
			t.Fatalf("got N=%d, %v; want 1", a.N, err)
		}
	})
	t.Run("an empty prediction is refused before any folder is made", func(t *testing.T) {
		if _, err := WriteMismatchArtifacts(root, realF, Grid{}); err == nil {
			t.Fatal("no error")
		}
		if _, err := os.Stat(filepath.Join(root, "6")); !os.IsNotExist(err) {
			t.Fatal("folder 6 was created")
		}
	})
}
