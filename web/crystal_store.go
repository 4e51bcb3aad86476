package web

// CRYSTAL runs read from the store (issue 16 item 3): runs saved with
// `crystal score --db` are listed on /crystal after this lifetime's ones,
// with ids "db-N" (N the store's crystal run id), and reopened from the
// table and inputs saved with them, without rescoring.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"evident/crystal"
	"evident/crystal/embedder"
	"evident/crystal/report"
	"evident/store"
)

// storedCrystalPrefix marks a run id read from the store.
const storedCrystalPrefix = "db-"

// storedCrystalHeads lists the store's CRYSTAL runs, newest first; a store
// that cannot be read lists none (the page still shows the others) and the
// error goes to the log.
func (s *Server) storedCrystalHeads(ctx context.Context) []crystalHead {
	if s.db == nil {
		return nil
	}
	infos, err := s.db.CrystalRuns(ctx)
	if err != nil {
		s.opt.Log.Printf("crystal runs from the store: %v", err)
		return nil
	}
	var out []crystalHead
	for _, in := range infos {
		sum := in.Report
		t := report.Table{Items: sum.Items, Profile: sum.Profile, Similarity: sum.Similarity, Lexical: sum.Lexical,
			Threshold: sum.Threshold, Inclusive: sum.Inclusive, Order: sum.Order, Alpha: sum.Alpha, Weights: sum.Weights}
		for _, m := range sum.Models {
			t.Rows = append(t.Rows, report.Row{Model: m.Model})
		}
		r := &crystalRun{ID: storedCrystalPrefix + strconv.FormatInt(in.ID, 10), Name: in.Name, Source: in.Source,
			Created: in.Created, table: t}
		h := r.head()
		h.Items = in.Items
		out = append(out, h)
	}
	return out
}

// storedCrystal reopens run id ("db-N") from the store; false when id is
// not of that form or the store has no such run.
func (s *Server) storedCrystal(ctx context.Context, id string) (*crystalRun, bool, error) {
	num, ok := strings.CutPrefix(id, storedCrystalPrefix)
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n <= 0 || s.db == nil {
		return nil, false, nil
	}
	info, err := s.db.CrystalRun(ctx, n)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	items, runs, t, err := s.db.CrystalTable(ctx, n)
	if err != nil {
		return nil, false, err
	}
	var sim embedder.Similarity = crystal.LexicalFor(t.Profile)
	if !t.Lexical {
		sim = unavailableSimilarity{name: t.Similarity}
	}
	r := newCrystalRun(items, runs, t, sim, info.Created)
	r.ID, r.Name, r.Source = id, info.Name, info.Source
	r.images = func(string) ([]byte, error) { return nil, fs.ErrNotExist } // images are not saved
	return r, true, nil
}

// unavailableSimilarity stands for an embedding similarity the screen
// cannot load (a stored run scored with --embedder onnx): the saved scores
// show, recomputing similarities for unmatched steps says why it cannot.
type unavailableSimilarity struct{ name string }

func (u unavailableSimilarity) Name() string { return u.name }

func (u unavailableSimilarity) Similarities(context.Context, []string, []string) ([][]float64, error) {
	return nil, fmt.Errorf("the run was scored with %s, which the screen does not load", u.name)
}
