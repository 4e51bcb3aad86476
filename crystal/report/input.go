package report

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"evident/crystal"
	"evident/internal/clip"
	"evident/internal/datauri"
	"evident/internal/file"
)

// Refusals of an input set, both wrapping ErrInput (CheckPredictions).
var (
	// ErrNoPredictions: the prediction files hold no prediction at all.
	ErrNoPredictions = fmt.Errorf("%w: no predictions", ErrInput)
	// ErrNoKnownID: no prediction has the id of a reference item, so every
	// item would score as missing — almost surely the wrong references.
	ErrNoKnownID = fmt.Errorf("%w: no prediction names an item of the references", ErrInput)
)

// MaxInputBytes caps one references or predictions file read by path (the
// screen caps its uploads itself): 256 MiB.
const MaxInputBytes = 256 << 20

// File is one named input held in memory: an upload on the screen, or a file
// the CLI read. Name appears in messages and, without directory and
// extension, names the model of a prediction without "model".
type File struct {
	Name string
	Data []byte
}

// ReadFile reads the file at path into a File, refusing one over
// MaxInputBytes. Errors wrap ErrInput and name the path.
func ReadFile(path string) (File, error) {
	data, err := file.ReadCapped(path, MaxInputBytes)
	switch {
	case errors.Is(err, file.ErrTooLarge):
		return File{}, inputErr(path, 0, "larger than %d MiB", MaxInputBytes>>20)
	case err != nil:
		return File{}, inputErr(path, 0, "%v", err)
	}
	return File{Name: path, Data: data}, nil
}

// ReadFiles reads the files at paths in order (see ReadFile).
func ReadFiles(paths ...string) ([]File, error) {
	files := make([]File, 0, len(paths))
	for _, path := range paths {
		f, err := ReadFile(path)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// ReadRuns is how the CLI (crystal score) and the screen (an upload) read
// predictions for items: ReadPredictionSet, then CheckPredictions, then
// Group. Errors wrap ErrInput.
func ReadRuns(items []crystal.Item, files []File) ([]Run, error) {
	preds, err := ReadPredictionSet(files)
	if err != nil {
		return nil, err
	}
	if err := CheckPredictions(items, preds); err != nil {
		return nil, err
	}
	return Group(preds), nil
}

// ReadPredictionSet reads prediction files in order (ReadPredictions each; a
// record without "model" is named after its file's base name without
// extension) and returns all their predictions in order. A (model, id) pair
// may appear in one file only; a repeat in another file is an error wrapping
// ErrInput that names both files. ReadRuns and ReadPredictionFiles read
// predictions through it.
func ReadPredictionSet(files []File) ([]Prediction, error) {
	var all []Prediction
	seen := map[[2]string]string{}
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f.Name), filepath.Ext(f.Name))
		preds, err := ReadPredictions(bytes.NewReader(f.Data), f.Name, base)
		if err != nil {
			return nil, err
		}
		for _, p := range preds {
			k := [2]string{p.Model, p.ID}
			if other, dup := seen[k]; dup {
				return nil, inputErr(f.Name, 0, "model %q answered item %q in %s already", p.Model, p.ID, other)
			}
			seen[k] = f.Name
		}
		all = append(all, preds...)
	}
	return all, nil
}

// CheckPredictions refuses an input set that cannot be a comparison:
// ErrNoPredictions when preds is empty, ErrNoKnownID when no prediction has
// the id of one of items (the message counts both and quotes the first
// prediction's id). Predictions for some unknown ids are fine: the table
// notes them (crystal.Report.Unknown). Both the CLI and the screen apply it.
func CheckPredictions(items []crystal.Item, preds []Prediction) error {
	if len(preds) == 0 {
		return ErrNoPredictions
	}
	ids := make(map[string]bool, len(items))
	for _, it := range items {
		ids[it.ID] = true
	}
	for _, p := range preds {
		if ids[p.ID] {
			return nil
		}
	}
	return fmt.Errorf("%w: none of the %d predictions has the id of one of the %d reference items (the first is %q)",
		ErrNoKnownID, len(preds), len(items), preds[0].ID)
}

// ErrImage reports an item image that cannot be shown (ResolveImage).
var ErrImage = errors.New("crystal image")

// ImageType is the sniffed type (http.DetectContentType) of image bytes and
// whether it is one a page may show inline: PNG, JPEG, GIF or WebP — never
// SVG, which can carry script.
func ImageType(b []byte) (string, bool) {
	ct := http.DetectContentType(b)
	switch ct {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return ct, true
	}
	return ct, false
}

// ResolveImage returns the bytes and type of an item's image reference (spec
// crystal.md "Data"): a data URI is decoded (evident/internal/datauri);
// anything else is looked up with open (nil: no files). The bytes must be an
// image ImageType accepts. Errors wrap ErrImage: a malformed data URI, a
// reference open cannot find ("was not uploaded with the run"), bytes that
// are not such an image. An http(s) reference is not fetched; callers say so
// before asking.
func ResolveImage(ref string, open func(ref string) ([]byte, error)) ([]byte, string, error) {
	var b []byte
	if datauri.Is(ref) {
		var err error
		if _, b, err = datauri.Decode(ref); err != nil {
			return nil, "", fmt.Errorf("%w: %v", ErrImage, err)
		}
	} else {
		var err error
		if open == nil {
			err = os.ErrNotExist
		} else {
			b, err = open(ref)
		}
		if err != nil {
			return nil, "", fmt.Errorf("%w: %q was not uploaded with the run", ErrImage, ref)
		}
	}
	ct, ok := ImageType(b)
	if !ok {
		return nil, "", fmt.Errorf("%w: %q is not a PNG, JPEG, GIF or WebP image (%s)", ErrImage, short(ref, 60), ct)
	}
	return b, ct, nil
}

// short is s's first line cut to at most n runes on a grapheme cluster
// boundary (internal/clip), with an ellipsis; it reads no more of s than
// that (a reference may be a data URI of megabytes).
func short(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if k := clip.Runes(s, n); k < len(s) {
		s = s[:k] + "…"
	}
	return s
}
