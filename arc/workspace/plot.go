package workspace

import (
	"bytes"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"evident/arc/frame"
	"evident/internal/file"
)

// maxASCIIBytes caps an ASCII frame read: MaxSide² hex digits plus
// newlines, with room for blank lines.
const maxASCIIBytes = 2 * (frame.MaxSide + 1) * frame.MaxSide

// utf8BOM is the byte-order mark some editors put at the start of a UTF-8
// file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readASCII reads an ASCII frame as baseline1's ascii_to_png.py
// parse_ascii_grid does (blank lines skipped, either case); errors name the
// file.
func readASCII(path string) (frame.Grid, error) {
	b, err := file.ReadCapped(path, maxASCIIBytes)
	if err != nil {
		return frame.Grid{}, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		//lint:ignore ST1005 baseline1's ascii_to_png.py wording
		return frame.Grid{}, fmt.Errorf("No frame data found in %s", path)
	}
	if bytes.HasPrefix(b, utf8BOM) {
		return frame.Grid{}, fmt.Errorf("%s:1:1: the file starts with a UTF-8 byte-order mark (bytes EF BB BF); an ASCII frame holds hex digits only: save it without the mark", path)
	}
	g, err := frame.ParseASCII(b)
	if err != nil {
		return frame.Grid{}, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// Image draws g with scale×scale pixels per cell in the game palette
// (frame.ColorOf; values outside 0..15 black), an opaque RGBA image that
// encodes as an RGB PNG — baseline1's frame_to_rgb_array.
func Image(g frame.Grid, scale int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, g.Width()*scale, g.Height()*scale))
	for y := 0; y < g.Height(); y++ {
		for x := 0; x < g.Width(); x++ {
			c := frame.ColorOf(g.At(x, y))
			for dy := 0; dy < scale; dy++ {
				o := img.PixOffset(x*scale, y*scale+dy)
				for dx := 0; dx < scale; dx++ {
					img.Pix[o], img.Pix[o+1], img.Pix[o+2], img.Pix[o+3] = c.R, c.G, c.B, 255
					o += 4
				}
			}
		}
	}
	return img
}

// MaxScale bounds ASCIIToPNG's scale (a 64×64 frame at 64 is 4096² pixels).
const MaxScale = 64

// ASCIIToPNG draws the ASCII frame at input as a PNG at output (its folder
// created), scale pixels per cell (baseline1 client/ascii_to_png.py: default
// 8, frame.Scale). Errors name the file: a missing input, a UTF-8
// byte-order mark at its start (named as such), a character that is not a
// hex digit, rows of different widths, no rows ("No frame data
// found in PATH"), or a scale outside 1..MaxScale.
func ASCIIToPNG(input, output string, scale int) error {
	if scale < 1 || scale > MaxScale {
		return fmt.Errorf("scale %d: want 1..%d", scale, MaxScale)
	}
	g, err := readASCII(input)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(output), 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := frame.EncodePNG(&buf, Image(g, scale)); err != nil {
		return fmt.Errorf("%s: %w", output, err)
	}
	return os.WriteFile(output, buf.Bytes(), 0o644)
}

// PlotInitialFullFrames writes initial_full_frames/level_N.png (scale 8)
// next to every initial_full_frames/level_N.txt of workspace ws and returns
// the PNG paths, absolute, in the order written (baseline1
// plot_initial_full_frames.py: sorted file names). Only N as the level's
// number unpadded counts (level_2.txt; level_02.txt and level_+2.txt are
// skipped: baseline1 reads level int(N) from level_{int(N)}.txt, never
// that file). No folder or no files: nil, nil. Errors name the file.
func PlotInitialFullFrames(ws string) ([]string, error) {
	dir, err := filepath.Abs(filepath.Join(ws, FullFramesDir))
	if err != nil {
		return nil, err
	}
	matches, err := filepath.Glob(filepath.Join(dir, "level_*.txt"))
	if err != nil {
		return nil, err
	}
	sort.Strings(matches)
	var written []string
	for _, p := range matches {
		stem := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "level_"), ".txt")
		n, err := strconv.Atoi(stem)
		if err != nil {
			return written, fmt.Errorf("%s: the level in level_N.txt must be a number, got %q", p, stem)
		}
		if strconv.Itoa(n) != stem {
			// baseline1 plots level_N.txt of int(N): level_02.txt names
			// level 2, whose file is level_2.txt; it is not a frame of
			// its own.
			continue
		}
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			continue // baseline1's load_initial_full_frame: not a file → None
		}
		out := strings.TrimSuffix(p, ".txt") + ".png"
		if err := ASCIIToPNG(p, out, frame.Scale); err != nil {
			return written, err
		}
		written = append(written, out)
	}
	return written, nil
}
