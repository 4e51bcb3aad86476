// Command crystalgen writes the synthetic paper-size CRYSTAL set of package
// evident/bench/crystalset (6,372 items, 20 models by default) as the files
// `evident crystal score` reads: DIR/refs.json (keyed by item id) and
// DIR/preds.jsonl ({id, model, reasoning_steps, answer} per line).
//
//	go run ./bench/crystalgen -out /tmp/crystal-bench
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"evident/bench/crystalset"
)

func main() {
	out := flag.String("out", "", "output directory (created)")
	items := flag.Int("items", 6372, "items")
	models := flag.Int("models", 20, "models")
	seed := flag.Uint64("seed", 1, "generator seed")
	flag.Parse()
	if err := run(*out, crystalset.Config{Items: *items, Models: *models, Seed: *seed}); err != nil {
		fmt.Fprintln(os.Stderr, "crystalgen:", err)
		os.Exit(1)
	}
}

func run(dir string, c crystalset.Config) error {
	if dir == "" {
		return fmt.Errorf("-out is required")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s := crystalset.Generate(c)
	refs := make(map[string]any, len(s.Items))
	for _, it := range s.Items {
		refs[it.ID] = map[string]any{"question": it.Question, "answer": it.Answer, "reference_steps": it.ReferenceSteps}
	}
	b, err := json.Marshal(refs)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "refs.json"), b, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "preds.jsonl"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, r := range s.Runs {
		for _, it := range s.Items {
			rep, ok := r.Replies[it.ID]
			if !ok {
				continue
			}
			if err := enc.Encode(map[string]any{"id": it.ID, "model": r.Model, "reasoning_steps": rep.Steps, "answer": rep.Answer}); err != nil {
				f.Close()
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
