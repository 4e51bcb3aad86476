package web

import (
	"context"
	"errors"
	"slices"
	"sync"

	"evident/persona"
	"evident/persona/evalrun"
	"evident/runstore"
	"evident/store"
)

// runData is what the screen keeps per run between requests: the run row,
// its dataset row and the dataset's cards (small, bounded by the number of
// characters), and, once the review screen has asked, the run's review
// queues (bounded by what the queues show; review.go). Records and turns
// are read a page at a time from the store (issue 13): no page holds a run.
type runData struct {
	info    store.RunInfo
	dataset *store.DatasetInfo
	cards   map[string]persona.Card
	live    bool // a live run (POST /api/v1/turns): it grows, its summary is never stored

	reviewMu sync.Mutex
	review   *review // the review queues, read or computed on first use (reviewOf)
}

const cachedRuns = 4

// head returns the run's head (info, dataset, cards), cached.
func (s *Server) head(ctx context.Context, id int64) (*runData, error) {
	if d := s.cached(id); d != nil {
		return d, nil
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if d := s.cached(id); d != nil {
		return d, nil
	}
	d, err := loadHead(ctx, s.db, id)
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

func (s *Server) forget(id int64) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	delete(s.cache, id)
	if i := slices.Index(s.order, id); i >= 0 {
		s.order = slices.Delete(s.order, i, i+1)
	}
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

func loadHead(ctx context.Context, db *store.DB, id int64) (*runData, error) {
	info, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &runData{info: info, cards: map[string]persona.Card{}}
	if d.live, err = db.IsLiveRun(ctx, id); err != nil {
		return nil, err
	}
	if info.DatasetID != 0 {
		ds, err := db.Dataset(ctx, info.DatasetID)
		if err != nil {
			return nil, err
		}
		d.dataset = &ds
		cards, err := db.Cards(ctx, info.DatasetID)
		if err != nil {
			return nil, err
		}
		for _, c := range cards {
			d.cards[c.CharacterID] = c
		}
	}
	return d, nil
}

// summary is the run's whole-run figures: the one stored at judge time
// (runstore.Summarize), else — an older store, or a run still growing —
// counted now with indexed SQL (store.CountRun), with no checks, model
// report or disagreements (stored is then false).
func (s *Server) summary(ctx context.Context, d *runData) (sum store.RunSummary, stored bool, err error) {
	sum, err = s.db.StoredSummary(ctx, d.info.ID)
	if err == nil {
		return sum, true, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return sum, false, err
	}
	sum, err = s.db.CountRun(ctx, d.info.ID, false)
	return sum, false, err
}

// pageTurns is the input rows one page needs: each record's own turn and
// the earlier turn its recall cites, looked up by (dataset_id, turn_id).
func (s *Server) pageTurns(ctx context.Context, d *runData, recs []*persona.Record) (map[string]persona.Turn, error) {
	if d.info.DatasetID == 0 || len(recs) == 0 {
		return map[string]persona.Turn{}, nil
	}
	seen := map[string]bool{}
	var ids []string
	for _, r := range recs {
		for _, id := range []string{r.TurnID, deref(r.RecallSourceTurn)} {
			if id != "" && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	out := map[string]persona.Turn{}
	for len(ids) > 0 {
		n := min(len(ids), store.MaxLookup)
		m, err := s.db.TurnsByID(ctx, d.info.DatasetID, ids[:n])
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			out[k] = v
		}
		ids = ids[n:]
	}
	return out, nil
}

// pageGold is the gold labels of a page's records.
func (s *Server) pageGold(ctx context.Context, recs []*persona.Record) (map[string]store.Gold, error) {
	out := map[string]store.Gold{}
	for i := 0; i < len(recs); i += store.MaxLookup {
		var ids []string
		for _, r := range recs[i:min(len(recs), i+store.MaxLookup)] {
			ids = append(ids, r.TurnID)
		}
		m, err := s.db.GoldOf(ctx, ids)
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			out[k] = v
		}
	}
	return out, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// storedChecks and storedModels decode the summary's parts for the panels.
func storedChecks(sum store.RunSummary) (*runstore.StoredChecks, error) {
	return runstore.SummaryChecks(sum)
}

func storedModels(sum store.RunSummary) (evalrun.ModelReport, error) {
	return runstore.SummaryModels(sum)
}
