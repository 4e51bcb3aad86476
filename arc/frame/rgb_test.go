package frame

import (
	"bytes"
	"encoding/binary"
	"image"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"evident/internal/testenv"
)

// ihdr returns the width, height, bit depth and colour type of a PNG's IHDR
// chunk (PNG spec §11.2.2: it follows the 8-byte signature and the chunk's
// 4-byte length and type).
func ihdr(t *testing.T, data []byte) (w, h uint32, depth, colourType byte) {
	t.Helper()
	if len(data) < 33 || string(data[12:16]) != "IHDR" {
		t.Fatalf("not a PNG with IHDR first: % x", data[:min(len(data), 33)])
	}
	return binary.BigEndian.Uint32(data[16:]), binary.BigEndian.Uint32(data[20:]), data[24], data[25]
}

func TestPNGFilesAreRGB(t *testing.T) {
	t.Run("a game frame is written as 512×512 8-bit RGB, colour type 2, like baseline1's PIL mode RGB", func(t *testing.T) {
		var buf bytes.Buffer
		if err := gamePattern(t).WritePNG(&buf); err != nil {
			t.Fatal(err)
		}
		w, h, depth, ct := ihdr(t, buf.Bytes())
		if w != 512 || h != 512 || depth != 8 || ct != 2 {
			t.Fatalf("IHDR = %d×%d depth %d colour type %d, want 512×512 depth 8 colour type 2", w, h, depth, ct)
		}
		img := decodePNG(t, buf.Bytes())
		if _, ok := img.(*image.RGBA); !ok {
			t.Errorf("decoded as %T, want *image.RGBA", img)
		}
		for v := 0; v < NumColors; v++ {
			checkBlock(t, img, 1+v, 1, Palette[v], "colour row")
		}
		checkBlock(t, img, 12, 40, Palette[9], "player")
	})
	t.Run("the mismatch views are RGB too", func(t *testing.T) {
		real := gamePattern(t)
		pred := real.Clone()
		pred.Set(20, 20, 8)
		for _, img := range []image.Image{MismatchRegion(real, pred), MismatchAsMagneta(real, pred)} {
			var buf bytes.Buffer
			if err := EncodePNG(&buf, img); err != nil {
				t.Fatal(err)
			}
			if _, _, _, ct := ihdr(t, buf.Bytes()); ct != 2 {
				t.Errorf("colour type %d, want 2", ct)
			}
		}
		var buf bytes.Buffer
		EncodePNG(&buf, MismatchAsMagneta(real, pred))
		checkBlock(t, decodePNG(t, buf.Bytes()), 20, 20, Magenta, "magenta cell")
	})
	t.Run("numpy reads a written frame as shape (512, 512, 3)", func(t *testing.T) {
		py := testenv.Python(t, "python3 python3-numpy python3-pil", "numpy reads the written PNG", "numpy", "PIL")
		path := filepath.Join(t.TempDir(), "f.png")
		if err := gamePattern(t).WritePNGFile(path); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(py, "-c", "import sys, numpy as np; from PIL import Image; a = np.array(Image.open(sys.argv[1])); print(a.shape, a[8*1+3, 8*10+3].tolist())", path).CombinedOutput()
		if err != nil {
			t.Fatalf("python: %v\n%s", err, out)
		}
		// Cell (10, 1) holds colour 9, 1E93FF.
		if got := strings.TrimSpace(string(out)); got != "(512, 512, 3) [30, 147, 255]" {
			t.Errorf("python says %q, want (512, 512, 3) [30, 147, 255]", got)
		}
	})
}
