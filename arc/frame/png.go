package frame

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"sync"
)

// Scale is the side, in pixels, of the square block every cell becomes in a
// PNG (spec arc.md "Session recording": "PNG: palette below, 8× scale").
const Scale = 8

// Palette holds the 16 game colours by value (spec arc.md "Palette"). Treat
// it as read-only: images use a copy taken at start-up.
var Palette = [NumColors]color.RGBA{
	{0xFF, 0xFF, 0xFF, 0xFF}, // 0 FFFFFF
	{0xCC, 0xCC, 0xCC, 0xFF}, // 1 CCCCCC
	{0x99, 0x99, 0x99, 0xFF}, // 2 999999
	{0x66, 0x66, 0x66, 0xFF}, // 3 666666
	{0x33, 0x33, 0x33, 0xFF}, // 4 333333
	{0x00, 0x00, 0x00, 0xFF}, // 5 000000
	{0xE5, 0x3A, 0xA3, 0xFF}, // 6 E53AA3
	{0xFF, 0x7B, 0xCC, 0xFF}, // 7 FF7BCC
	{0xF9, 0x3C, 0x31, 0xFF}, // 8 F93C31
	{0x1E, 0x93, 0xFF, 0xFF}, // 9 1E93FF
	{0x88, 0xD8, 0xF1, 0xFF}, // 10 88D8F1
	{0xFF, 0xDC, 0x00, 0xFF}, // 11 FFDC00
	{0xFF, 0x85, 0x1B, 0xFF}, // 12 FF851B
	{0x92, 0x12, 0x31, 0xFF}, // 13 921231
	{0x4F, 0xCC, 0x30, 0xFF}, // 14 4FCC30
	{0xA3, 0x56, 0xD6, 0xFF}, // 15 A356D6
}

// Colours of the mismatch views, both outside the game palette on purpose
// (spec arc.md "Verification"; seed BROWN_RGB, MAGENTA_RGB). Read-only, like
// Palette.
var (
	// Brown fills everything outside the mismatch discs in MismatchRegion.
	Brown = color.RGBA{139, 69, 19, 0xFF}
	// Magenta marks mismatching cells in MismatchAsMagneta.
	Magenta = color.RGBA{255, 0, 255, 0xFF}
)

// Indices into imagePalette beyond the game colours.
const (
	blackIndex   = 5 // game colour 5 is 000000; out-of-palette values render black
	brownIndex   = NumColors
	magentaIndex = NumColors + 1
)

// imagePalette is the palette of every image this package makes: the game
// colours at their own indices, then Brown and Magenta. Plain frames use it
// too: with more than 16 entries the standard encoder writes 8 bits per pixel
// from Pix directly, which measured 3× faster than its 4-bit path.
var imagePalette = func() color.Palette {
	p := make(color.Palette, 0, NumColors+2)
	for _, c := range Palette {
		p = append(p, c)
	}
	return append(p, Brown, Magenta)
}()

// ColorOf returns the RGB colour a cell value renders as: Palette[v] for
// 0..15, black for any other value (spec arc.md "Palette").
func ColorOf(v uint8) color.RGBA {
	if v < NumColors {
		return Palette[v]
	}
	return Palette[blackIndex]
}

// paletteIndex maps a cell value to its index in imagePalette.
func paletteIndex(v uint8) uint8 {
	if v < NumColors {
		return v
	}
	return blackIndex
}

// scaled returns a (w·Scale)×(h·Scale) paletted image with palette pal where
// cell (x, y) is filled with palette index idx[y*w+x].
func scaled(w, h int, idx []uint8, pal color.Palette) *image.Paletted {
	img := image.NewPaletted(image.Rect(0, 0, w*Scale, h*Scale), pal)
	if w == 0 || h == 0 {
		return img
	}
	stride := img.Stride
	for y := 0; y < h; y++ {
		top := img.Pix[y*Scale*stride : y*Scale*stride+w*Scale]
		for x, v := range idx[y*w : (y+1)*w] {
			b := top[x*Scale : (x+1)*Scale]
			for i := range b {
				b[i] = v
			}
		}
		for k := 1; k < Scale; k++ {
			copy(img.Pix[(y*Scale+k)*stride:], top)
		}
	}
	return img
}

// Image renders g at Scale: a (Width·8)×(Height·8) paletted image (palette:
// the 16 game colours at their own indices, then Brown and Magenta) in which each cell is an 8×8 block of ColorOf(value).
// The zero Grid gives an empty image.
func (g Grid) Image() *image.Paletted {
	idx := make([]uint8, len(g.cells))
	for i, v := range g.cells {
		idx[i] = paletteIndex(v)
	}
	return scaled(g.w, g.h, idx, imagePalette)
}

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() *png.EncoderBuffer {
	if v, ok := b.p.Get().(*png.EncoderBuffer); ok {
		return v
	}
	return nil
}
func (b *bufferPool) Put(e *png.EncoderBuffer) { b.p.Put(e) }

var encoder = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &bufferPool{}}

// EncodePNG writes img as a PNG to w with the encoder settings of this
// package (fastest compression, pooled buffers). A paletted image without
// transparent colours, as this package makes, is written as 8-bit RGB
// (colour type 2) like baseline1's client writes its frames (PIL mode "RGB";
// spec arc.md "Compatibility facts": np.array(Image.open(png)) has shape
// (H·8, W·8, 3)); any other image is written as the standard encoder
// chooses. It fails on an empty image.
func EncodePNG(w io.Writer, img image.Image) error {
	if img.Bounds().Empty() {
		return fmt.Errorf("frame: encode PNG: empty image %v", img.Bounds())
	}
	if p, ok := img.(*image.Paletted); ok && opaquePalette(p.Palette) {
		img = toRGBA(p)
	}
	if err := encoder.Encode(w, img); err != nil {
		return fmt.Errorf("frame: encode PNG: %w", err)
	}
	return nil
}

// opaquePalette reports whether every colour of pal is fully opaque.
func opaquePalette(pal color.Palette) bool {
	for _, c := range pal {
		if _, _, _, a := c.RGBA(); a != 0xFFFF {
			return false
		}
	}
	return true
}

// toRGBA converts p to an opaque RGBA image, which the standard encoder
// writes as RGB without alpha (colour type 2). Rows of a Scale-wide block
// repeat, so each row is converted once per distinct source row.
func toRGBA(p *image.Paletted) *image.RGBA {
	b := p.Bounds()
	out := image.NewRGBA(b)
	var lut [256][4]uint8
	for i, c := range p.Palette {
		r, g, bl, _ := c.RGBA()
		lut[i] = [4]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 0xFF}
	}
	w := b.Dx()
	for y := 0; y < b.Dy(); y++ {
		src := p.Pix[y*p.Stride : y*p.Stride+w]
		dst := out.Pix[y*out.Stride : y*out.Stride+4*w]
		if y > 0 && bytes.Equal(src, p.Pix[(y-1)*p.Stride:(y-1)*p.Stride+w]) {
			copy(dst, out.Pix[(y-1)*out.Stride:(y-1)*out.Stride+4*w])
			continue
		}
		for x, v := range src {
			copy(dst[4*x:4*x+4], lut[v][:])
		}
	}
	return out
}

// WritePNG writes g rendered at Scale (see Image) as a PNG to w. It fails on
// the zero Grid.
func (g Grid) WritePNG(w io.Writer) error { return EncodePNG(w, g.Image()) }

// WritePNGFile writes g as a PNG (see WritePNG) to path (mode 0644, replacing
// any file there).
func (g Grid) WritePNGFile(path string) error { return writePNGFile(path, g.Image()) }

func writePNGFile(path string, img image.Image) error {
	var buf bytes.Buffer
	if err := EncodePNG(&buf, img); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("frame: %w", err)
	}
	return nil
}
