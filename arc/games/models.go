package games

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed models
var models embed.FS

// ModelFiles are the file names of a Starlark world model (the names
// evident/arc/worldmodel loads).
var ModelFiles = []string{"world_model_engine.star", "world_model_state_io.star", "world_model_main_planner.star"}

// ModelSource returns the source of one file of the reference world model
// of the game with the given game_id. It fails for an unknown game or file.
func ModelSource(gameID, name string) ([]byte, error) {
	b, err := fs.ReadFile(models, "models/"+gameID+"/"+name)
	if err != nil {
		return nil, fmt.Errorf("games: no reference model file %s for %q", name, gameID)
	}
	return b, nil
}

// WriteModel writes the three files of the reference world model of the
// game with the given game_id into dir (the agent workspace), replacing
// files of the same names. It fails for an unknown game or on I/O errors.
func WriteModel(gameID, dir string) error {
	for _, n := range ModelFiles {
		b, err := ModelSource(gameID, n)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			return fmt.Errorf("games: %w", err)
		}
	}
	return nil
}
