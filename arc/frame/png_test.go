package frame

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// rgbAt returns the 8-bit RGB colour of pixel (px, py) of img.
func rgbAt(img image.Image, px, py int) color.RGBA {
	r, g, b, a := img.At(px, py).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

func decodePNG(t *testing.T, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("png.Decode: %v", err)
	}
	return img
}

// checkBlock checks the four corner pixels and the centre of cell (x, y)'s
// 8×8 block.
func checkBlock(t *testing.T, img image.Image, x, y int, want color.RGBA, what string) {
	t.Helper()
	for _, d := range [][2]int{{0, 0}, {7, 0}, {0, 7}, {7, 7}, {4, 3}} {
		px, py := x*Scale+d[0], y*Scale+d[1]
		if got := rgbAt(img, px, py); got != want {
			t.Errorf("%s: cell (%d,%d) pixel (%d,%d) = %v, want %v", what, x, y, px, py, got, want)
			return
		}
	}
}

func TestPNGRoundTrip(t *testing.T) {
	t.Run("the palette matches the spec's hex values", func(t *testing.T) {
		hex := []uint32{0xFFFFFF, 0xCCCCCC, 0x999999, 0x666666, 0x333333, 0x000000, 0xE53AA3, 0xFF7BCC,
			0xF93C31, 0x1E93FF, 0x88D8F1, 0xFFDC00, 0xFF851B, 0x921231, 0x4FCC30, 0xA356D6}
		for v, h := range hex {
			want := color.RGBA{uint8(h >> 16), uint8(h >> 8), uint8(h), 0xFF}
			if Palette[v] != want || ColorOf(uint8(v)) != want {
				t.Errorf("colour %d = %v, want %v", v, Palette[v], want)
			}
		}
		if ColorOf(16) != (color.RGBA{0, 0, 0, 0xFF}) || ColorOf(Invalid) != (color.RGBA{0, 0, 0, 0xFF}) {
			t.Error("out-of-palette values do not render black")
		}
	})

	t.Run("a 64×64 game frame decodes to 512×512 pixels with every cell an 8×8 block of its colour", func(t *testing.T) {
		g := gamePattern(t)
		var buf bytes.Buffer
		if err := g.WritePNG(&buf); err != nil {
			t.Fatal(err)
		}
		img := decodePNG(t, buf.Bytes())
		if b := img.Bounds(); b != image.Rect(0, 0, 512, 512) {
			t.Fatalf("bounds %v, want 512×512", b)
		}
		for y := 0; y < GameSide; y++ {
			for x := 0; x < GameSide; x++ {
				want := Palette[g.At(x, y)]
				for py := y * Scale; py < (y+1)*Scale; py++ {
					for px := x * Scale; px < (x+1)*Scale; px++ {
						if got := rgbAt(img, px, py); got != want {
							t.Fatalf("pixel (%d,%d) of cell (%d,%d) = %v, want %v", px, py, x, y, got, want)
						}
					}
				}
			}
		}
		// Spot values worked out by hand: border grey 666666, player blue 1E93FF,
		// colour 15 at cell (16,1) A356D6, floor black.
		checkBlock(t, img, 0, 0, color.RGBA{0x66, 0x66, 0x66, 0xFF}, "border")
		checkBlock(t, img, 13, 41, color.RGBA{0x1E, 0x93, 0xFF, 0xFF}, "player")
		checkBlock(t, img, 16, 1, color.RGBA{0xA3, 0x56, 0xD6, 0xFF}, "colour 15")
		checkBlock(t, img, 30, 51, color.RGBA{0, 0, 0, 0xFF}, "floor")
		checkBlock(t, img, 30, 30, color.RGBA{0xFF, 0xFF, 0xFF, 0xFF}, "background")
	})

	t.Run("a non-square frame keeps its aspect and out-of-palette cells render black", func(t *testing.T) {
		g, err := FromRows([][]int{{8, 99, 14}})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "f.png")
		if err := g.WritePNGFile(path); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		img := decodePNG(t, data)
		if b := img.Bounds(); b != image.Rect(0, 0, 24, 8) {
			t.Fatalf("bounds %v, want 24×8", b)
		}
		checkBlock(t, img, 0, 0, color.RGBA{0xF9, 0x3C, 0x31, 0xFF}, "red")
		checkBlock(t, img, 1, 0, color.RGBA{0, 0, 0, 0xFF}, "value 99")
		checkBlock(t, img, 2, 0, color.RGBA{0x4F, 0xCC, 0x30, 0xFF}, "green")
	})

	t.Run("the zero grid cannot be written as a PNG", func(t *testing.T) {
		if err := (Grid{}).WritePNG(&bytes.Buffer{}); err == nil {
			t.Fatal("no error for the zero grid")
		}
	})
}
