package web

import (
	"evident/persona"
	"evident/runstore"
	"fmt"
	"net/http"
	"strings"
)

type runsPage struct {
	Latest   int64
	Runs     []runRow
	Datasets []datasetRow
	Accepted string // endings the review accepted, "니까 · 십쇼"; "" for none
}

type runRow struct {
	ID               int64
	URL, Started     string
	Dataset          string
	Profile          string
	Judged, Rejected int
	ByVerdict        []verdictCount
}

type datasetRow struct {
	ID                    int64
	Name, Imported        string
	Turns, Cards, Lexicon int
	Runs                  int
	JudgeURL              string
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	runs, err := s.db.Runs(ctx)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	sets, err := s.db.Datasets(ctx)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	names := map[int64]string{}
	perSet := map[int64]int{}
	for _, ds := range sets {
		names[ds.ID] = ds.Name
	}
	p := &runsPage{}
	accepted, err := runstore.AcceptedEndings(ctx, s.db)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	p.Accepted = strings.Join(accepted, " · ")
	for i, run := range runs {
		if i == 0 {
			p.Latest = run.ID
		}
		perSet[run.DatasetID]++
		row := runRow{ID: run.ID, URL: fmt.Sprintf("/runs/%d", run.ID), Started: localTime(run.StartedAt),
			Dataset: names[run.DatasetID], Profile: run.Profile, Judged: run.Tally.Judged, Rejected: run.Tally.Rejected}
		if run.DatasetID != 0 {
			row.Dataset = fmt.Sprintf("#%d %s", run.DatasetID, names[run.DatasetID])
		}
		for _, v := range persona.Verdicts {
			row.ByVerdict = append(row.ByVerdict, verdictCount{string(v), verdictClass[v], run.Tally.ByVerdict[v]})
		}
		p.Runs = append(p.Runs, row)
	}
	for _, ds := range sets {
		p.Datasets = append(p.Datasets, datasetRow{ID: ds.ID, Name: ds.Name, Imported: localTime(ds.ImportedAt),
			Turns: ds.Turns, Cards: ds.Cards, Lexicon: ds.Lexicon, Runs: perSet[ds.ID],
			JudgeURL: fmt.Sprintf("/datasets/%d/judge", ds.ID)})
	}
	s.render(w, r, http.StatusOK, "runs", p)
}
