package report

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/crystal"
	"evident/internal/located"
)

var twoItems = []crystal.Item{{ID: "a", Answer: "1", ReferenceSteps: []string{"s"}}, {ID: "b", Answer: "2", ReferenceSteps: []string{"t"}}}

func TestReadRuns(t *testing.T) {
	for _, c := range []struct {
		name    string
		files   []File
		wantErr error
		want    string // error text, or "model:ids" of the runs
	}{
		{"a model answering in two files is one run named after neither", []File{
			{"m1.jsonl", []byte(`{"id": "a", "model": "x", "answer": "1"}` + "\n")},
			{"dir/m2.jsonl", []byte(`{"id": "b", "model": "x", "answer": "2"}` + "\n")}}, nil, "x:2"},
		{"a prediction without a model is named after its file's base name", []File{
			{"dir/lumen.jsonl", []byte(`{"id": "a", "answer": "1"}` + "\n")}}, nil, "lumen:1"},
		{"some unknown ids are kept for the table's notes", []File{
			{"p.jsonl", []byte(`{"id": "a", "answer": "1"}` + "\n" + `{"id": "zz", "answer": "1"}` + "\n")}}, nil, "p:2"},
		{"the same model and item in two files names both files", []File{
			{"one.jsonl", []byte(`{"id": "a", "model": "x", "answer": "1"}` + "\n")},
			{"two.jsonl", []byte(`{"id": "a", "model": "x", "answer": "2"}` + "\n")}}, ErrInput, `two.jsonl: model "x" answered item "a" in one.jsonl already`},
		{"no prediction at all is ErrNoPredictions", []File{{"p.jsonl", []byte("\n")}}, ErrNoPredictions, "no predictions"},
		{"predictions for none of the items are ErrNoKnownID", []File{
			{"p.jsonl", []byte(`{"id": "other", "answer": "1"}` + "\n")}}, ErrNoKnownID,
			`none of the 1 predictions has the id of one of the 2 reference items (the first is "other")`},
		{"a bad line names its file and line", []File{{"p.jsonl", []byte(`{"id": "a", "answer": "1"}` + "\n{\n")}}, ErrInput, "p.jsonl:2:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs, err := ReadRuns(twoItems, c.files)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err = %v, want %v containing %q", err, c.wantErr, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range runs {
				got = append(got, r.Model+":"+string(rune('0'+len(r.Replies))))
			}
			if strings.Join(got, ",") != c.want {
				t.Errorf("runs %v, want %s", got, c.want)
			}
		})
	}
}

func TestReadFileIsCappedAndNamed(t *testing.T) {
	_, err := ReadFile(filepath.Join(t.TempDir(), "absent.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "absent.jsonl") || !errors.Is(err, ErrInput) {
		t.Errorf("err = %v, want ErrInput naming absent.jsonl", err)
	}
	path := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(path, []byte(`{"id": "a"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil || f.Name != path || string(f.Data) != `{"id": "a"}` {
		t.Errorf("ReadFile = %+v, %v", f, err)
	}
}

func TestResolveImage(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	open := func(ref string) ([]byte, error) {
		switch ref {
		case "x.png":
			return png, nil
		case "x.svg":
			return []byte("<svg></svg>"), nil
		}
		return nil, fs.ErrNotExist
	}
	for _, c := range []struct {
		name, ref string
		open      func(string) ([]byte, error)
		ct, err   string
	}{
		{"a data URI is decoded without opening anything", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==", nil, "image/png", ""},
		{"a file reference is opened", "x.png", open, "image/png", ""},
		{"a reference not among the files was not uploaded", "y.png", open, "", `"y.png" was not uploaded with the run`},
		{"without files nothing but data URIs resolves", "x.png", nil, "", `"x.png" was not uploaded with the run`},
		{"SVG is refused: it can carry script", "x.svg", open, "", `"x.svg" is not a PNG, JPEG, GIF or WebP image`},
		{"a data URI that is not base64 is refused", "data:image/png,abc", nil, "", "data URI is not base64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, ct, err := ResolveImage(c.ref, c.open)
			if c.err != "" {
				if !errors.Is(err, ErrImage) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want ErrImage containing %q", err, c.err)
				}
				return
			}
			if err != nil || ct != c.ct || string(b[:4]) != "\x89PNG" {
				t.Errorf("ResolveImage = %d bytes, %q, %v; want a PNG", len(b), ct, err)
			}
		})
	}
}

func TestTableDescriptions(t *testing.T) {
	tab := Table{Similarity: "lexical", Lexical: true, Threshold: 0.3, Inclusive: true, Order: crystal.OrderKendall, Alpha: 0.5,
		Weights: crystal.RewardWeights{Answer: 0.7, Step: 0.3, Lambda: 0.3}}
	for _, c := range []struct{ name, got, want string }{
		{"the seed's inclusive rule", MatchRule(true, 0.3), "similarity ≥ 0.30"},
		{"the paper's strict rule", MatchRule(false, 0.35), "similarity > 0.35"},
		{"lexical says it has no model", tab.SimilarityLabel(), "lexical (word overlap, no model)"},
		{"Ord.F1 with Kendall", tab.OrdF1Formula(), "Ord.F1 = F1 × (0.50 + 0.50 × Kendall (τ+1)/2)"},
		{"CPR with the seed's weights", tab.CPRFormula(), "CPR = 0.70 + 0.30 × F1 if correct, 0.30 × 0.30 × F1 if wrong"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("%q, want %q", c.got, c.want)
			}
		})
	}
}

func TestInputErrorsCarryTheirPosition(t *testing.T) {
	_, err := ReadPredictions(strings.NewReader(`{"id": "a", "answer": "1"}`+"\n{\n"), "p.jsonl", "m")
	e, ok := located.As(err)
	if !errors.Is(err, ErrInput) || !ok || e.File != "p.jsonl" || e.Line != 2 {
		t.Errorf("err = %v (located %+v); want ErrInput at p.jsonl line 2", err, e)
	}
}

// TestShortCutsOnWholeClusters: a reference quoted in an error is cut to 60
// runes between grapheme clusters — never inside a family emoji (four people
// joined by U+200D, seven runes) — and only its first line is shown.
func TestShortCutsOnWholeClusters(t *testing.T) {
	family := "👨\u200d👩\u200d👧\u200d👦"
	tests := []struct{ name, in, want string }{
		{"a short reference is kept", "x.svg", "x.svg"},
		{"a long one loses the family that would cross 60 runes, whole",
			strings.Repeat(family, 9), strings.Repeat(family, 8) + "…"},
		{"only the first line", "a.png\nb.png", "a.png …"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := short(tc.in, 60); got != tc.want {
				t.Errorf("short = %q, want %q", got, tc.want)
			}
		})
	}
}
