package web

import (
	"context"
	"slices"
	"sync"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/evalrun"
	"evident/runstore"
	"evident/store"
)

// runData is what the screen computes once per run (runs never change after
// commit): its records, the dataset it judged, the ten checks and the
// per-model report.
type runData struct {
	info    store.RunInfo
	dataset *store.DatasetInfo
	recs    []persona.Record
	index   map[string]int // turn_id → position in recs
	turns   map[string]*persona.Turn
	cards   map[string]persona.Card
	prompts map[string]string // turn_id → prompt_id

	checks    *batch.CheckReport
	checksErr error
	models    evalrun.ModelReport

	reviewOnce sync.Once
	review     *review // the review queues, built on first use (reviewOf)
}

const cachedRuns = 4

// run returns the run's data, computing and caching it on first use.
func (s *Server) run(ctx context.Context, id int64) (*runData, error) {
	if d := s.cached(id); d != nil {
		return d, nil
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if d := s.cached(id); d != nil {
		return d, nil
	}
	d, err := loadRun(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	s.cacheMu.Lock()
	s.cache[id] = d
	s.order = append(s.order, id)
	if len(s.order) > cachedRuns {
		delete(s.cache, s.order[0])
		s.order = s.order[1:]
	}
	s.cacheMu.Unlock()
	return d, nil
}

func (s *Server) cached(id int64) *runData {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	d := s.cache[id]
	if d != nil { // most recently used goes last
		if i := slices.Index(s.order, id); i >= 0 {
			s.order = append(slices.Delete(s.order, i, i+1), id)
		}
	}
	return d
}

func loadRun(ctx context.Context, db *store.DB, id int64) (*runData, error) {
	info, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	recs, err := db.Records(ctx, id, store.Filter{})
	if err != nil {
		return nil, err
	}
	d := &runData{info: info, recs: recs, index: make(map[string]int, len(recs)),
		turns: map[string]*persona.Turn{}, cards: map[string]persona.Card{}}
	for i, r := range recs {
		if _, dup := d.index[r.TurnID]; !dup {
			d.index[r.TurnID] = i
		}
	}
	var turns []persona.Turn
	if info.DatasetID != 0 {
		ds, err := db.Dataset(ctx, info.DatasetID)
		if err != nil {
			return nil, err
		}
		d.dataset = &ds
		if turns, err = db.Turns(ctx, info.DatasetID); err != nil {
			return nil, err
		}
		for i := range turns {
			d.turns[turns[i].TurnID] = &turns[i]
		}
		cards, err := db.Cards(ctx, info.DatasetID)
		if err != nil {
			return nil, err
		}
		for _, c := range cards {
			d.cards[c.CharacterID] = c
		}
	}
	d.prompts = evalrun.PromptsOf(turns)
	d.models = evalrun.CompareModels(recs, d.prompts)
	d.checks, d.checksErr = runstore.Check(ctx, db, info)
	return d, nil
}
