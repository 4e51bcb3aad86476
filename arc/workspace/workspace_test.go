package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/workspace"
)

func TestReadConfig(t *testing.T) {
	dir := t.TempDir()
	if _, err := workspace.Init(dir, workspace.Options{Python: true, EvidentBin: "/opt/evident"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := workspace.ReadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := (workspace.Config{EvidentBin: "/opt/evident", ServerURL: "http://127.0.0.1:8001", Model: "python"}); cfg != want {
		t.Errorf("config %+v, want %+v", cfg, want)
	}
	p := filepath.Join(dir, workspace.ConfigFile)
	for _, tc := range []struct{ name, body, want string }{
		{"bad JSON names the file", `{"evident_bin": `, p + ": unexpected end of JSON input"},
		{"a server URL without a scheme is refused", `{"server_url": "127.0.0.1:8001", "model": "starlark"}`, p + `: server_url: server URL "127.0.0.1:8001"`},
		{"an unknown model kind is refused", `{"server_url": "http://h", "model": "lua"}`, p + `: model "lua"`},
		{"a file over 64 KiB is refused", `{"x": "` + strings.Repeat("a", 1<<16) + `"}`, p + ": larger than 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(p, []byte(tc.body), 0o644)
			if _, err := workspace.ReadConfig(dir); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want it to start with %q", err, tc.want)
			}
		})
	}
}

func TestPlotInitialFullFrames(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, workspace.FullFramesDir)
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "level_1.txt"), []byte("0123\n4567\n89AB\n"), 0o644)
	got, err := workspace.PlotInitialFullFrames(dir)
	if err != nil || len(got) != 1 || got[0] != filepath.Join(full, "level_1.png") {
		t.Fatalf("got %v, %v", got, err)
	}
	st, err := os.Stat(got[0])
	if err != nil || st.Size() == 0 {
		t.Fatalf("no PNG: %v", err)
	}
	t.Run("a level that is not a number is an error naming the file, after the PNGs before it", func(t *testing.T) {
		os.WriteFile(filepath.Join(full, "level_x.txt"), []byte("0\n"), 0o644)
		got, err := workspace.PlotInitialFullFrames(dir)
		if len(got) != 1 || err == nil || !strings.Contains(err.Error(), filepath.Join(full, "level_x.txt")) {
			t.Errorf("got %v, %v", got, err)
		}
	})
	t.Run("a bad frame is an error naming the file", func(t *testing.T) {
		os.Remove(filepath.Join(full, "level_x.txt"))
		os.WriteFile(filepath.Join(full, "level_2.txt"), []byte("01\nZZ\n"), 0o644)
		_, err := workspace.PlotInitialFullFrames(dir)
		if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(full, "level_2.txt")+":") {
			t.Errorf("error %v", err)
		}
	})
}
