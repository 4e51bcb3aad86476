package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"evident/arc/workspace"
)

// TestPlotInitialFullFramesUnpaddedOnly: as baseline1's
// plot_initial_full_frames.py reads level int(N) from level_{int(N)}.txt,
// only level_N.txt with N unpadded is a frame; level_02.txt and
// level_+3.txt are not plotted (no PNG is written for them).
func TestPlotInitialFullFramesUnpaddedOnly(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, workspace.FullFramesDir)
	os.MkdirAll(full, 0o755)
	for _, n := range []string{"level_2.txt", "level_02.txt", "level_+3.txt", "level_10.txt"} {
		if err := os.WriteFile(filepath.Join(full, n), []byte("01\n23\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := workspace.PlotInitialFullFrames(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(full, "level_10.png"), filepath.Join(full, "level_2.png")}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("wrote %v, want %v", got, want)
	}
	for _, n := range []string{"level_02.png", "level_+3.png"} {
		if _, err := os.Stat(filepath.Join(full, n)); err == nil {
			t.Errorf("%s was written", n)
		}
	}
}

// TestASCIIToPNGNamesAByteOrderMark: a frame saved with a UTF-8 BOM is
// refused with words for it, not the mark's first byte as a character.
func TestASCIIToPNGNamesAByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "frame.txt")
	os.WriteFile(in, []byte("\xef\xbb\xbf01\n23\n"), 0o644)
	err := workspace.ASCIIToPNG(in, filepath.Join(dir, "frame.png"), 8)
	want := in + ":1:1: the file starts with a UTF-8 byte-order mark (bytes EF BB BF); an ASCII frame holds hex digits only: save it without the mark"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "frame.png")); err == nil {
		t.Error("a PNG was written")
	}
}
