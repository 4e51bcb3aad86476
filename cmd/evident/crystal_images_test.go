package main

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/store"
)

func TestCrystalScoreDBKeepsTheImageFilesItsItemsName(t *testing.T) {
	dir := t.TempDir()
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "pics"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pics", "a.png"), pic.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pics", "fake.png"), []byte("<svg></svg>"), 0o644); err != nil {
		t.Fatal(err)
	}
	refs := `{"id": "i1", "image": "pics/a.png", "question": "How many?", "answer": "2", "reference_steps": ["Two dots."]}
{"id": "i2", "image": "pics/missing.png", "question": "How many?", "answer": "3", "reference_steps": ["Three dots."]}
{"id": "i3", "image": "pics/fake.png", "question": "How many?", "answer": "4", "reference_steps": ["Four dots."]}
`
	preds := `{"id": "i1", "model": "m", "reasoning_steps": ["Two dots."], "answer": "2"}
`
	for name, body := range map[string]string{"refs.jsonl": refs, "preds.jsonl": preds} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "evident.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	paged, err := db.CrystalPaged(context.Background())
	db.Close()
	if err != nil || !paged {
		t.Fatalf("schema %d keeps no crystal pages: %v", store.LatestSchemaVersion(), err)
	}
	_, errOut, code := crystalRun(t, "score", "--refs", filepath.Join(dir, "refs.jsonl"), "--preds", filepath.Join(dir, "preds.jsonl"), "--db", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"kept 1 image file(s) with the run", "2 not kept", "pics/missing.png: ", "pics/fake.png: reads as text/"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	db, err = store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b, ct, err := db.CrystalImage(context.Background(), 1, "pics/a.png")
	if err != nil || ct != "image/png" || !bytes.Equal(b, pic.Bytes()) {
		t.Errorf("pics/a.png: %d bytes %s, %v", len(b), ct, err)
	}
	if _, _, err := db.CrystalImage(context.Background(), 1, "pics/missing.png"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("pics/missing.png: %v, want ErrNotFound", err)
	}
}
