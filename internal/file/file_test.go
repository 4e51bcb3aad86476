package file

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadCapped(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		path  string
		limit int64
		want  string
		err   error
	}{
		{"a file at the limit is read whole", p, 5, "12345", nil},
		{"a file over the limit is an error naming it", p, 4, "", ErrTooLarge},
		{"a missing file matches fs.ErrNotExist", filepath.Join(dir, "nope"), 5, "", fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ReadCapped(tt.path, tt.limit)
			if tt.err != nil {
				if !errors.Is(err, tt.err) || (tt.err == ErrTooLarge && !strings.Contains(err.Error(), tt.path)) {
					t.Fatalf("err %v, want %v naming the file", err, tt.err)
				}
				return
			}
			if err != nil || string(b) != tt.want {
				t.Fatalf("%q, %v", b, err)
			}
		})
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "state.json")
	for _, content := range []string{"first", "second"} {
		if err := WriteAtomic(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != content {
			t.Fatalf("file holds %q, want %q", b, content)
		}
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Fatalf("folder holds %d entries, want only the file (no temporary left)", len(ents))
	}
	if err := WriteAtomic(filepath.Join(p, "under-a-file"), []byte("x")); err == nil {
		t.Fatal("writing below a regular file succeeded")
	}
}
