package frame

import (
	"fmt"
	"image"
	"path/filepath"

	"evident/arc/internal/numbered"
)

// MismatchRadius is the radius, in cells, of the disc MismatchRegion shows
// around each mismatching cell: (dx² + dy²) ≤ 49 (spec arc.md "Verification";
// seed MISMATCH_RADIUS = 7).
const MismatchRadius = 7

// File names of one mismatch's artifacts inside mismatch_frames/<N>/ (spec
// arc.md "Verification"). "magneta" is the seed's spelling, kept on purpose.
const (
	SimulatedFrameFile    = "simulated_frame.txt"
	SimulatedPNGFile      = "simulated_frame.png"
	MismatchRegionFile    = "mismatch_region.png"
	MismatchAsMagnetaFile = "mismatch_as_magneta.png"
)

// discHalfWidth[dy+R] is the largest dx with dx² + dy² ≤ R², R = MismatchRadius.
var discHalfWidth = func() (t [2*MismatchRadius + 1]int) {
	for dy := -MismatchRadius; dy <= MismatchRadius; dy++ {
		dx := 0
		for (dx+1)*(dx+1)+dy*dy <= MismatchRadius*MismatchRadius {
			dx++
		}
		t[dy+MismatchRadius] = dx
	}
	return t
}()

// realMismatches returns the cells of realFrame's rectangle that predicted lacks
// or colours differently, in row-major order.
func realMismatches(realFrame, predicted Grid) []Cell {
	if realFrame.w == predicted.w && realFrame.h == predicted.h {
		return appendDiff(nil, realFrame.cells, predicted.cells, realFrame.w)
	}
	var out []Cell
	for y := 0; y < realFrame.h; y++ {
		for x := 0; x < realFrame.w; x++ {
			if x >= predicted.w || y >= predicted.h || realFrame.cells[y*realFrame.w+x] != predicted.cells[y*predicted.w+x] {
				out = append(out, Cell{x, y})
			}
		}
	}
	return out
}

// MismatchRegion renders view v1 of a mismatch (seed save_mismatch_region_png_v1):
// realFrame at Scale, each cell in its real colour iff it lies within
// MismatchRadius (centre distance, dx²+dy² ≤ 49) of a cell where predicted
// differs from realFrame, otherwise Brown. The image has realFrame's size
// (Width·8 × Height·8); with no mismatch it is all brown. predicted may have
// any size; real cells outside it count as mismatching.
func MismatchRegion(realFrame, predicted Grid) *image.Paletted {
	idx := make([]uint8, len(realFrame.cells))
	for i := range idx {
		idx[i] = brownIndex
	}
	for _, c := range realMismatches(realFrame, predicted) {
		for dy := -MismatchRadius; dy <= MismatchRadius; dy++ {
			y := c.Y + dy
			if y < 0 || y >= realFrame.h {
				continue
			}
			hw := discHalfWidth[dy+MismatchRadius]
			x0, x1 := max(c.X-hw, 0), min(c.X+hw, realFrame.w-1)
			row := y * realFrame.w
			for x := x0; x <= x1; x++ {
				idx[row+x] = paletteIndex(realFrame.cells[row+x])
			}
		}
	}
	return scaled(realFrame.w, realFrame.h, idx, imagePalette)
}

// MismatchAsMagneta renders view v2 of a mismatch (seed
// save_mismatch_as_magneta_png_v2): realFrame at Scale with every cell where
// predicted differs from realFrame painted Magenta. The image has realFrame's size; with
// no mismatch it equals realFrame.Image(). predicted may have any size; real cells
// outside it count as mismatching.
func MismatchAsMagneta(realFrame, predicted Grid) *image.Paletted {
	idx := make([]uint8, len(realFrame.cells))
	for i, v := range realFrame.cells {
		idx[i] = paletteIndex(v)
	}
	for _, c := range realMismatches(realFrame, predicted) {
		idx[c.Y*realFrame.w+c.X] = magentaIndex
	}
	return scaled(realFrame.w, realFrame.h, idx, imagePalette)
}

// WriteMismatchRegionPNG writes MismatchRegion(realFrame, predicted) as a PNG to
// path. It fails when realFrame is the zero Grid or on I/O errors.
func WriteMismatchRegionPNG(path string, realFrame, predicted Grid) error {
	return writePNGFile(path, MismatchRegion(realFrame, predicted))
}

// WriteMismatchAsMagnetaPNG writes MismatchAsMagneta(realFrame, predicted) as a PNG
// to path. It fails when realFrame is the zero Grid or on I/O errors.
func WriteMismatchAsMagnetaPNG(path string, realFrame, predicted Grid) error {
	return writePNGFile(path, MismatchAsMagneta(realFrame, predicted))
}

// MismatchArtifacts are the absolute paths WriteMismatchArtifacts wrote, in
// the order of the verifier's failure message (spec arc.md "Verification").
type MismatchArtifacts struct {
	Dir            string // mismatch_frames/<N>
	N              int    // the folder number, ≥ 1
	SimulatedASCII string // simulated_frame.txt: the predicted frame as text
	SimulatedPNG   string // simulated_frame.png: the predicted frame rendered
	Region         string // mismatch_region.png: view v1
	Magneta        string // mismatch_as_magneta.png: view v2
}

// WriteMismatchArtifacts creates root (normally <workspace>/mismatch_frames)
// if needed, claims the folder root/<N> with N the highest all-digit folder
// name there plus one (1 when there is none), and writes into it the four
// artifacts of a mismatch between the real frame and the predicted one:
// SimulatedFrameFile and SimulatedPNGFile (predicted; out-of-palette cells are
// '?' in the text and black in the PNG), MismatchRegionFile (v1) and
// MismatchAsMagnetaFile (v2). It fails, naming the path, on I/O errors or
// when realFrame or predicted is the zero Grid; a folder already claimed is left
// in place.
func WriteMismatchArtifacts(root string, realFrame, predicted Grid) (MismatchArtifacts, error) {
	if realFrame.IsZero() || predicted.IsZero() {
		return MismatchArtifacts{}, fmt.Errorf("frame: mismatch artifacts in %s: real is %d×%d, predicted %d×%d; both must be non-empty",
			root, realFrame.w, realFrame.h, predicted.w, predicted.h)
	}
	dir, n, err := numbered.Claim(root)
	if err != nil {
		return MismatchArtifacts{}, fmt.Errorf("frame: mismatch artifacts: %w", err)
	}
	a := MismatchArtifacts{Dir: dir, N: n}
	a.SimulatedASCII = filepath.Join(a.Dir, SimulatedFrameFile)
	a.SimulatedPNG = filepath.Join(a.Dir, SimulatedPNGFile)
	a.Region = filepath.Join(a.Dir, MismatchRegionFile)
	a.Magneta = filepath.Join(a.Dir, MismatchAsMagnetaFile)
	if err := predicted.WriteASCIIFile(a.SimulatedASCII); err != nil {
		return a, err
	}
	if err := predicted.WritePNGFile(a.SimulatedPNG); err != nil {
		return a, err
	}
	if err := WriteMismatchRegionPNG(a.Region, realFrame, predicted); err != nil {
		return a, err
	}
	if err := WriteMismatchAsMagnetaPNG(a.Magneta, realFrame, predicted); err != nil {
		return a, err
	}
	return a, nil
}
