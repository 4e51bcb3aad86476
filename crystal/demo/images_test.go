package demo

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite data/images/*.png and testdata/*.golden")

// Scene sizes and colours. One chart unit is 20 pixels.
const (
	width, height = 320, 240
	unit          = 20
	baseY         = 210 // x-axis of the bar charts
)

var (
	white  = color.RGBA{255, 255, 255, 255}
	black  = color.RGBA{20, 20, 20, 255}
	grid   = color.RGBA{210, 210, 210, 255}
	red    = color.RGBA{220, 40, 40, 255}
	blue   = color.RGBA{40, 80, 220, 255}
	green  = color.RGBA{40, 160, 60, 255}
	orange = color.RGBA{240, 150, 30, 255}
	yellow = color.RGBA{235, 200, 40, 255}
	purple = color.RGBA{140, 60, 170, 255}
	teal   = color.RGBA{40, 150, 150, 255}
	dark   = color.RGBA{20, 90, 90, 255}
)

// scenes draws every image of the sample set; the names are the files under
// data/images/ that refs.json points to.
var scenes = map[string]func(*image.RGBA){
	"bars-colors.png": func(m *image.RGBA) {
		barChart(m, []int{3, 7, 5, 2}, []color.RGBA{red, blue, green, orange})
	},
	"bars-growth.png": func(m *image.RGBA) {
		barChart(m, []int{2, 4, 6, 8}, []color.RGBA{purple, purple, purple, purple})
	},
	"dots-red.png": func(m *image.RGBA) {
		// 3 in the upper half, 4 in the lower half.
		for _, p := range [][2]int{{60, 50}, {170, 80}, {260, 40}, {50, 170}, {130, 200}, {210, 150}, {280, 190}} {
			disc(m, p[0], p[1], 14, red)
		}
	},
	"dots-two-colors.png": func(m *image.RGBA) {
		for _, p := range [][2]int{{50, 60}, {140, 190}, {230, 70}, {290, 200}} {
			disc(m, p[0], p[1], 14, red)
		}
		for _, p := range [][2]int{{100, 40}, {180, 120}, {60, 150}, {270, 130}, {200, 200}, {150, 60}} {
			disc(m, p[0], p[1], 14, blue)
		}
	},
	"dots-grid.png": func(m *image.RGBA) {
		for r := 0; r < 3; r++ {
			for c := 0; c < 4; c++ {
				if r == 1 && c == 2 {
					continue // the empty position in the middle row
				}
				disc(m, 70+60*c, 60+60*r, 14, black)
			}
		}
	},
	"shapes-row.png": func(m *image.RGBA) {
		polygon(m, [][2]float64{{70, 80}, {30, 160}, {110, 160}}, yellow)
		disc(m, 160, 120, 40, blue)
		rect(m, 220, 80, 300, 160, green)
	},
	"shapes-sizes.png": func(m *image.RGBA) {
		disc(m, 100, 120, 70, red)
		rect(m, 230, 100, 270, 140, blue)
	},
	"triangles.png": func(m *image.RGBA) {
		for _, x := range []float64{60, 160, 260} {
			polygon(m, [][2]float64{{x, 30}, {x - 35, 100}, {x + 35, 100}}, orange)
		}
		disc(m, 110, 170, 30, purple)
		disc(m, 220, 170, 30, purple)
	},
	"blocks-stacks.png": func(m *image.RGBA) {
		for s, n := range []int{2, 5, 3} {
			x := 50 + 90*s
			for k := 0; k < n; k++ {
				y := 220 - 38*(k+1)
				rect(m, x, y, x+60, y+36, dark)
				rect(m, x+3, y+3, x+57, y+33, teal)
			}
		}
		rect(m, 20, 220, 300, 224, black)
	},
	"grid-fill.png": func(m *image.RGBA) {
		filled := map[[2]int]bool{{0, 0}: true, {0, 1}: true, {1, 1}: true, {1, 3}: true, {2, 0}: true, {2, 2}: true, {3, 2}: true, {3, 3}: true}
		for r := 0; r < 4; r++ {
			for c := 0; c < 4; c++ {
				x, y := 80+40*c, 40+40*r
				rect(m, x, y, x+40, y+40, black)
				fill := white
				if filled[[2]int{r, c}] {
					fill = blue
				}
				rect(m, x+2, y+2, x+38, y+38, fill)
			}
		}
	},
	"arrow-left.png": func(m *image.RGBA) {
		rect(m, 120, 110, 260, 130, black)
		polygon(m, [][2]float64{{60, 120}, {120, 80}, {120, 160}}, black)
	},
}

func blank() *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(m, m.Bounds(), &image.Uniform{white}, image.Point{}, draw.Src)
	return m
}

func rect(m *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	draw.Draw(m, image.Rect(x0, y0, x1, y1), &image.Uniform{c}, image.Point{}, draw.Src)
}

// disc fills the pixels whose centres lie within r of (cx, cy).
func disc(m *image.RGBA, cx, cy, r int, c color.RGBA) {
	for y := cy - r; y <= cy+r; y++ {
		for x := cx - r; x <= cx+r; x++ {
			dx, dy := float64(x-cx)+0.5, float64(y-cy)+0.5
			if dx*dx+dy*dy <= float64(r*r) {
				m.SetRGBA(x, y, c)
			}
		}
	}
}

// polygon fills the pixels whose centres lie inside the polygon (even-odd
// rule).
func polygon(m *image.RGBA, pts [][2]float64, c color.RGBA) {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range pts {
		minX, maxX = math.Min(minX, p[0]), math.Max(maxX, p[0])
		minY, maxY = math.Min(minY, p[1]), math.Max(maxY, p[1])
	}
	for y := int(minY); y <= int(maxY); y++ {
		for x := int(minX); x <= int(maxX); x++ {
			px, py := float64(x)+0.5, float64(y)+0.5
			in := false
			for i, j := 0, len(pts)-1; i < len(pts); j, i = i, i+1 {
				a, b := pts[i], pts[j]
				if (a[1] > py) != (b[1] > py) && px < (b[0]-a[0])*(py-a[1])/(b[1]-a[1])+a[0] {
					in = !in
				}
			}
			if in {
				m.SetRGBA(x, y, c)
			}
		}
	}
}

// barChart draws axes, a gridline every unit and one 40-pixel bar per value.
func barChart(m *image.RGBA, values []int, colors []color.RGBA) {
	for k := 1; k <= 9; k++ {
		rect(m, 40, baseY-unit*k, 300, baseY-unit*k+1, grid)
	}
	for i, v := range values {
		x := 60 + 60*i
		rect(m, x, baseY-unit*v, x+40, baseY, colors[i])
	}
	rect(m, 38, 20, 40, baseY+2, black)
	rect(m, 38, baseY, 300, baseY+2, black)
}

func drawScene(name string) *image.RGBA {
	m := blank()
	scenes[name](m)
	return m
}

func TestImages(t *testing.T) {
	if *update {
		for name := range scenes {
			var buf bytes.Buffer
			if err := png.Encode(&buf, drawScene(name)); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("data", "images", name), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("every committed image holds exactly the drawn pixels", func(t *testing.T) {
		for name := range scenes {
			b, err := os.ReadFile(filepath.Join("data", "images", name))
			if err != nil {
				t.Fatalf("%s: %v (go test ./crystal/demo -update writes it)", name, err)
			}
			got, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want := drawScene(name)
			if got.Bounds() != want.Bounds() {
				t.Fatalf("%s: bounds %v, want %v", name, got.Bounds(), want.Bounds())
			}
			for y := 0; y < height; y++ {
				for x := 0; x < width; x++ {
					if color.RGBAModel.Convert(got.At(x, y)) != want.At(x, y) {
						t.Fatalf("%s: pixel (%d, %d) differs from the drawing; run go test ./crystal/demo -update", name, x, y)
					}
				}
			}
		}
	})
	t.Run("every item points to an image of the set and every image is used", func(t *testing.T) {
		items, err := Items()
		if err != nil {
			t.Fatal(err)
		}
		used := map[string]bool{}
		for _, it := range items {
			if _, err := fs.Stat(Images(), it.Image); err != nil {
				t.Errorf("%s: image %q: %v", it.ID, it.Image, err)
			}
			used[filepath.Base(it.Image)] = true
		}
		for name := range scenes {
			if !used[name] {
				t.Errorf("image %s is not used by any item", name)
			}
		}
	})
}
