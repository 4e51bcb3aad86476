package run_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"evident/crystal"
	"evident/crystal/run"
	"evident/llm"
)

func TestDownscale(t *testing.T) {
	t.Run("the longer side becomes the limit and the aspect ratio is kept", func(t *testing.T) {
		for _, c := range []struct{ w, h, dw, dh int }{
			{2000, 1500, 1024, 768}, {1500, 2000, 768, 1024}, {4096, 10, 1024, 3}, {3000, 1, 1024, 1}, {1024, 500, 1024, 500}, {300, 200, 300, 200},
		} {
			got := run.Downscale(image.NewRGBA(image.Rect(0, 0, c.w, c.h)), 1024).Bounds()
			if got.Dx() != c.dw || got.Dy() != c.dh {
				t.Errorf("%d×%d → %d×%d, want %d×%d", c.w, c.h, got.Dx(), got.Dy(), c.dw, c.dh)
			}
		}
	})

	t.Run("a uniform colour stays that colour and a fine checkerboard averages to grey", func(t *testing.T) {
		flat := image.NewRGBA(image.Rect(10, 10, 310, 160)) // bounds not at the origin
		check := image.NewGray(image.Rect(0, 0, 300, 150))
		for y := range 150 {
			for x := range 300 {
				flat.Set(x+10, y+10, color.RGBA{200, 100, 50, 255})
				if (x+y)%2 == 0 {
					check.SetGray(x, y, color.Gray{255})
				}
			}
		}
		d := run.Downscale(flat, 100)
		if d.Bounds() != image.Rect(0, 0, 100, 50) {
			t.Fatalf("bounds %v", d.Bounds())
		}
		for _, p := range []image.Point{{0, 0}, {50, 25}, {99, 49}} {
			if got := d.RGBAAt(p.X, p.Y); got != (color.RGBA{200, 100, 50, 255}) {
				t.Errorf("flat at %v: %v", p, got)
			}
		}
		g := run.Downscale(check, 100) // 3×3 blocks of 4 or 5 white cells
		for _, p := range []image.Point{{0, 0}, {37, 20}} {
			if v := g.RGBAAt(p.X, p.Y).R; v < 113 || v > 142 {
				t.Errorf("checkerboard at %v: %d, want about 4/9 or 5/9 of 255", p, v)
			}
		}
	})

	t.Run("a transparent pixel does not darken its opaque neighbours", func(t *testing.T) {
		src := image.NewNRGBA(image.Rect(0, 0, 4, 2))
		for x := range 4 {
			src.Set(x, 0, color.NRGBA{255, 0, 0, 255}) // top row opaque red
		}
		d := run.Downscale(src, 2) // → 2×1: half opaque red, half transparent
		got := color.NRGBAModel.Convert(d.At(0, 0)).(color.NRGBA)
		if got.R < 250 || got.G != 0 || got.A < 126 || got.A > 129 {
			t.Errorf("got %v, want red at half alpha", got)
		}
	})
}

func TestShrink(t *testing.T) {
	t.Run("a PNG over the limit comes back as a smaller PNG", func(t *testing.T) {
		out, changed, err := run.Shrink(run.Image{MediaType: "image/png", Data: pngOf(t, 1600, 400)}, 1024)
		if err != nil {
			t.Fatal(err)
		}
		w, h, _ := out.Size()
		if !changed || out.MediaType != "image/png" || w != 1024 || h != 256 {
			t.Errorf("changed %v, %s %d×%d", changed, out.MediaType, w, h)
		}
	})
	t.Run("a JPEG stays a JPEG", func(t *testing.T) {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, image.NewRGBA(image.Rect(0, 0, 1100, 1100)), nil); err != nil {
			t.Fatal(err)
		}
		out, changed, err := run.Shrink(run.Image{MediaType: "image/jpeg", Data: b.Bytes()}, 1024)
		if err != nil {
			t.Fatal(err)
		}
		if w, h, _ := out.Size(); !changed || out.MediaType != "image/jpeg" || w != 1024 || h != 1024 {
			t.Errorf("changed %v, %s %d×%d", changed, out.MediaType, w, h)
		}
	})
	t.Run("an image within the limit is returned unchanged", func(t *testing.T) {
		in := run.Image{MediaType: "image/png", Data: pngOf(t, 100, 80)}
		out, changed, err := run.Shrink(in, 1024)
		if err != nil || changed || !bytes.Equal(out.Data, in.Data) {
			t.Errorf("changed %v, err %v", changed, err)
		}
	})
	t.Run("bytes that are not a known image and URLs are ErrImage", func(t *testing.T) {
		for _, in := range []run.Image{{MediaType: "image/webp", Data: []byte("RIFF....WEBPVP8 ")}, {URL: "https://example.org/a.png"}} {
			if _, _, err := run.Shrink(in, 1024); !errors.Is(err, run.ErrImage) {
				t.Errorf("%+v: err %v", in, err)
			}
		}
	})
}

func TestImages(t *testing.T) {
	png := pngOf(t, 8, 6)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := run.DirImages(dir)
	t.Run("a relative path is read next to the data file and sniffed as PNG", func(t *testing.T) {
		im, err := src("a.png")
		if err != nil || im.MediaType != "image/png" || !bytes.Equal(im.Data, png) {
			t.Errorf("%s, %v", im.MediaType, err)
		}
	})
	t.Run("an absolute path is read as it is", func(t *testing.T) {
		if _, err := src(filepath.Join(dir, "a.png")); err != nil {
			t.Error(err)
		}
	})
	t.Run("a data URI is decoded and sent again as the same data URI", func(t *testing.T) {
		uri := llm.ImageDataURI("image/png", png)
		im, err := src(uri)
		if err != nil || im.URI() != uri {
			t.Errorf("%v, uri changed: %v", err, im.URI() != uri)
		}
	})
	t.Run("an http URL is passed through", func(t *testing.T) {
		im, err := src("https://example.org/chart.png")
		if err != nil || im.URI() != "https://example.org/chart.png" {
			t.Errorf("%+v, %v", im, err)
		}
	})
	t.Run("a file system holds the demo's slash paths", func(t *testing.T) {
		im, err := run.FSImages(fstest.MapFS{"images/a.png": {Data: png}})("images/a.png")
		if err != nil || im.MediaType != "image/png" {
			t.Errorf("%+v, %v", im, err)
		}
	})
	for _, c := range []struct{ name, ref string }{
		{"a missing file is ErrImage", "nope.png"},
		{"a file that is not an image is ErrImage", "notes.txt"},
		{"a data URI that is not base64 is ErrImage", "data:image/png,%89PNG"},
		{"a data URI of text is ErrImage", "data:text/plain;base64,aGVsbG8="},
		{"a data URI with broken base64 is ErrImage", "data:image/png;base64,@@@"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := src(c.ref); !errors.Is(err, run.ErrImage) {
				t.Errorf("err %v", err)
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	apiErr := func(status int, msg string) error {
		return &llm.APIError{Provider: "openai", StatusCode: status, Message: msg}
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"413 Payload Too Large is too large whatever it says", apiErr(http.StatusRequestEntityTooLarge, "Request Entity Too Large"), true},
		{"a 400 about the image size is too large", apiErr(400, "Image size exceeds the limit"), true},
		{"a 400 about image dimensions is too large", apiErr(400, "image dimensions exceed max allowed size: 8000 pixels"), true},
		{"a 422 saying the image is too big is too large", apiErr(422, "Invalid image: too big"), true},
		{"a 400 about the context length without the image is not", apiErr(400, "This model's maximum context length is 8192 tokens"), false},
		{"a 400 about an unreadable image is not", apiErr(400, "Invalid image: could not decode"), false},
		{"a 429 mentioning image limits is not (it is retried as it is)", apiErr(429, "image rate limit exceeded"), false},
		{"a 500 about the image size is not", apiErr(500, "image too large for the worker"), false},
		{"a wrapped too-large API error is found", errors.Join(errors.New("llm: not retried after 1 try"), apiErr(400, "image too large")), true},
		{"an error without a status is not", errors.New("image too large"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := run.TooLarge(c.err); got != c.want {
				t.Errorf("TooLarge = %v", got)
			}
		})
	}
}

func TestPrompt(t *testing.T) {
	for _, c := range []struct {
		name string
		it   crystal.Item
		want string
	}{
		{"options from a list become lettered lines", crystal.Item{Question: "Which shape?", Options: []string{"circle", "square"}}, "Which shape?\nA) circle\nB) square"},
		{"an option's own letter is not repeated", crystal.Item{Question: "Which?", Options: []string{"A) red", "(B) blue"}}, "Which?\nA) red\nB) blue"},
		{"a question that has option lines is sent as it is", crystal.Item{Question: "Which?\nA) red\nB) blue\n", Options: []string{"red", "blue"}}, "Which?\nA) red\nB) blue"},
		{"a question without options is sent as it is", crystal.Item{Question: "How many dots?"}, "How many dots?"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := run.Prompt(c.it); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	t.Run("an item without an image is asked in text only", func(t *testing.T) {
		r := run.Request(crystal.Item{Question: "How many?"}, "")
		if len(r.Messages) != 1 || len(r.Messages[0].Images) != 0 || r.System != crystal.SystemPrompt || *r.Temperature != crystal.Temperature {
			t.Errorf("%+v", r)
		}
	})
}

func TestOpenPreds(t *testing.T) {
	open := func(t *testing.T, content string) (string, run.Resume, error) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "p.jsonl")
		if content != "" {
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		f, res, err := run.OpenPreds(path, "m")
		if err == nil {
			if _, err := f.WriteString(`{"id":"new","model":"m","reply":""}` + "\n"); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		b, _ := os.ReadFile(path)
		return string(b), res, err
	}
	t.Run("a missing file is created empty", func(t *testing.T) {
		got, res, err := open(t, "")
		if err != nil || len(res.Answered) != 0 || got != `{"id":"new","model":"m","reply":""}`+"\n" {
			t.Errorf("%q %+v %v", got, res, err)
		}
	})
	t.Run("a torn last line is cut off and appending goes on from there", func(t *testing.T) {
		got, res, err := open(t, "{\"id\":\"a\",\"model\":\"m\",\"reply\":\"x\"}\n{\"id\":\"b\",\"mod")
		if err != nil || !res.TornTail || !res.Answered["a"] || res.Answered["b"] ||
			got != "{\"id\":\"a\",\"model\":\"m\",\"reply\":\"x\"}\n{\"id\":\"new\",\"model\":\"m\",\"reply\":\"\"}\n" {
			t.Errorf("%q %+v %v", got, res, err)
		}
	})
	t.Run("records without a model and numeric ids count as answered", func(t *testing.T) {
		_, res, err := open(t, "{\"id\":7,\"answer\":\"x\"}\n\n{\"id\":\"c\",\"model\":\"other\",\"reply\":\"\"}\n")
		if err != nil || !res.Answered["7"] || res.Answered["c"] || res.Lines != 2 || res.Others != 1 {
			t.Errorf("%+v %v", res, err)
		}
	})
	t.Run("a bad line in the middle is ErrPreds naming the line and the file is left alone", func(t *testing.T) {
		before := "{\"id\":\"a\"}\nnot json\n{\"id\":\"b\"}\n"
		got, _, err := open(t, before)
		if !errors.Is(err, run.ErrPreds) || got != before || !bytes.Contains([]byte(err.Error()), []byte("line 2")) {
			t.Errorf("%q %v", got, err)
		}
	})
	t.Run("a record without an id is ErrPreds", func(t *testing.T) {
		if _, _, err := open(t, "{\"model\":\"m\"}\n"); !errors.Is(err, run.ErrPreds) {
			t.Errorf("err %v", err)
		}
	})
}
