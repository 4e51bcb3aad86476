package run

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	_ "image/gif" // registered for image.Decode
	"image/jpeg"
	"image/png"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"evident/internal/datauri"
	"evident/llm"
)

// ErrImage reports an item image that cannot be read: a missing file, a
// malformed data URI, bytes that are not an image.
var ErrImage = errors.New("crystal run: bad image")

// Image is one item's image as it will be sent.
type Image struct {
	// MediaType is the image's MIME type ("image/png"); empty for a URL.
	MediaType string
	// Data holds the encoded image bytes (PNG, JPEG, …); nil for a URL.
	Data []byte
	// URL is set instead of Data for an http(s) image reference, which is
	// passed to the server as is (and so cannot be downscaled).
	URL string
}

// URI is what the request carries: a data URI built from MediaType and Data
// (llm.ImageDataURI), or URL.
func (im Image) URI() string {
	if im.URL != "" {
		return im.URL
	}
	return llm.ImageDataURI(im.MediaType, im.Data)
}

// Size decodes only the image header and returns its width and height.
// Errors wrap ErrImage (URL images, formats the standard library cannot
// read: PNG, JPEG and GIF are registered).
func (im Image) Size() (w, h int, err error) {
	if im.URL != "" {
		return 0, 0, fmt.Errorf("%w: %s is a URL, not image data", ErrImage, im.URL)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(im.Data))
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %s: %v", ErrImage, im.MediaType, err)
	}
	return cfg.Width, cfg.Height, nil
}

// ImageSource resolves an item's "image" field to an Image.
type ImageSource func(ref string) (Image, error)

// DirImages reads image references the way a data file holds them (spec
// crystal.md "Data"): a data URI ("data:image/png;base64,…") is decoded; an
// http(s) URL is passed through; anything else is a file path, relative to
// dir unless absolute. A file's media type is sniffed from its bytes
// (http.DetectContentType) and must be image/*. Errors wrap ErrImage.
func DirImages(dir string) ImageSource {
	return func(ref string) (Image, error) {
		if im, ok, err := inline(ref); ok {
			return im, err
		}
		path := ref
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, filepath.FromSlash(ref))
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return Image{}, fmt.Errorf("%w: %v", ErrImage, err)
		}
		return sniff(ref, b)
	}
}

// FSImages reads image references like DirImages, but file paths are slash
// paths in fsys (for example demo.Images(), where an item's image is
// "images/x.png").
func FSImages(fsys fs.FS) ImageSource {
	return func(ref string) (Image, error) {
		if im, ok, err := inline(ref); ok {
			return im, err
		}
		b, err := fs.ReadFile(fsys, strings.TrimPrefix(ref, "./"))
		if err != nil {
			return Image{}, fmt.Errorf("%w: %v", ErrImage, err)
		}
		return sniff(ref, b)
	}
}

// inline handles data URIs and URLs; ok is false for a path.
func inline(ref string) (Image, bool, error) {
	lower := strings.ToLower(ref)
	switch {
	case datauri.Is(ref):
		im, err := ParseDataURI(ref)
		return im, true, err
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return Image{URL: ref}, true, nil
	}
	return Image{}, false, nil
}

func sniff(ref string, b []byte) (Image, error) {
	mt := http.DetectContentType(b)
	if !strings.HasPrefix(mt, "image/") {
		return Image{}, fmt.Errorf("%w: %s is %s, not an image", ErrImage, ref, mt)
	}
	return Image{MediaType: mt, Data: b}, nil
}

// ParseDataURI decodes a base64 data URI ("data:image/png;base64,…") by
// evident/internal/datauri's rules (percent-encoded data URIs are refused).
// The media type must be image/*. Errors wrap ErrImage.
func ParseDataURI(uri string) (Image, error) {
	mt, b, err := datauri.Decode(uri)
	if err != nil {
		return Image{}, fmt.Errorf("%w: %v", ErrImage, err)
	}
	if !strings.HasPrefix(mt, "image/") {
		return Image{}, fmt.Errorf("%w: data URI media type %q is not image/*", ErrImage, mt)
	}
	return Image{MediaType: mt, Data: b}, nil
}

// Shrink returns im downscaled so that its longer side is at most maxSide
// pixels, keeping the aspect ratio (each side rounded, at least 1 px), with
// the area-averaging filter of Downscale. A JPEG is re-encoded as JPEG
// (quality 90), anything else as PNG. An image already within maxSide is
// returned unchanged with changed = false. Errors wrap ErrImage: a URL, a
// format the standard library cannot decode (PNG, JPEG and GIF can; WebP and
// BMP cannot), maxSide < 1.
func Shrink(im Image, maxSide int) (out Image, changed bool, err error) {
	if maxSide < 1 {
		return Image{}, false, fmt.Errorf("%w: max side %d", ErrImage, maxSide)
	}
	w, h, err := im.Size()
	if err != nil {
		return Image{}, false, err
	}
	if max(w, h) <= maxSide {
		return im, false, nil
	}
	src, format, err := image.Decode(bytes.NewReader(im.Data))
	if err != nil {
		return Image{}, false, fmt.Errorf("%w: %s: %v", ErrImage, im.MediaType, err)
	}
	dst := Downscale(src, maxSide)
	var buf bytes.Buffer
	if format == "jpeg" {
		err = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 90})
		out.MediaType = "image/jpeg"
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, dst)
		out.MediaType = "image/png"
	}
	if err != nil {
		return Image{}, false, fmt.Errorf("%w: encoding the downscaled image: %v", ErrImage, err)
	}
	out.Data = buf.Bytes()
	return out, true, nil
}

// Downscale returns src scaled so that its longer side is at most maxSide
// pixels (aspect ratio kept, sides rounded, at least 1 px); an image already
// within maxSide is copied unchanged. The filter is an area average (box
// filter with fractional coverage at the edges): each destination pixel is
// the coverage-weighted mean of the source pixels under it, computed on
// premultiplied RGBA, which is what a downscale to a fraction of the size
// needs (no aliasing, no halo at transparent edges). The result's bounds
// start at (0, 0). maxSide < 1 is treated as 1.
func Downscale(src image.Image, maxSide int) *image.RGBA {
	maxSide = max(maxSide, 1)
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	rgba := image.NewRGBA(image.Rect(0, 0, sw, sh))
	draw.Draw(rgba, rgba.Bounds(), src, b.Min, draw.Src)
	if max(sw, sh) <= maxSide || sw == 0 || sh == 0 {
		return rgba
	}
	scale := float64(maxSide) / float64(max(sw, sh))
	dw := min(maxSide, max(1, int(float64(sw)*scale+0.5)))
	dh := min(maxSide, max(1, int(float64(sh)*scale+0.5)))
	xw, yw := coverage(sw, dw), coverage(sh, dh)
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	acc := make([]float64, dw*4)
	for y := 0; y < dh; y++ {
		clear(acc)
		for _, ty := range yw[y] {
			row := rgba.Pix[ty.src*rgba.Stride:]
			for x := 0; x < dw; x++ {
				a := acc[x*4 : x*4+4]
				for _, tx := range xw[x] {
					w := ty.w * tx.w
					p := row[tx.src*4 : tx.src*4+4]
					a[0] += w * float64(p[0])
					a[1] += w * float64(p[1])
					a[2] += w * float64(p[2])
					a[3] += w * float64(p[3])
				}
			}
		}
		out := dst.Pix[y*dst.Stride:]
		for i, v := range acc[:dw*4] {
			out[i] = uint8(min(255, max(0, v+0.5)))
		}
	}
	return dst
}

// tap is one source index and its weight in a destination pixel.
type tap struct {
	src int
	w   float64
}

// coverage maps each of n destination cells to the source cells of an
// m-cell axis it covers, with weights (overlap length ÷ cell width) that sum
// to 1.
func coverage(m, n int) [][]tap {
	out := make([][]tap, n)
	step := float64(m) / float64(n)
	for d := range out {
		lo, hi := float64(d)*step, float64(d+1)*step
		for s := int(lo); s < m && float64(s) < hi; s++ {
			ov := min(hi, float64(s+1)) - max(lo, float64(s))
			if ov > 1e-12 {
				out[d] = append(out[d], tap{s, ov / step})
			}
		}
	}
	return out
}
