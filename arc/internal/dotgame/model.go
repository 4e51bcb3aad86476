package dotgame

import (
	"embed"
	"os"
	"path/filepath"
)

//go:embed model/*.star naive/*.star
var files embed.FS

// ModelFiles are the names of the reference world model's files.
var ModelFiles = []string{"world_model_engine.star", "world_model_state_io.star", "world_model_main_planner.star"}

// Model returns the source of one reference model file by name.
func Model(name string) []byte {
	b, err := files.ReadFile("model/" + name)
	if err != nil {
		panic(err)
	}
	return b
}

// NaiveStateIO is a slow but correct world_model_state_io.star (cell-by-cell
// renderer) for benchmarks.
func NaiveStateIO() []byte {
	b, err := files.ReadFile("naive/world_model_state_io.star")
	if err != nil {
		panic(err)
	}
	return b
}

// WriteModel writes the reference model's three files into dir.
func WriteModel(dir string) error {
	for _, n := range ModelFiles {
		if err := os.WriteFile(filepath.Join(dir, n), Model(n), 0o644); err != nil {
			return err
		}
	}
	return nil
}
