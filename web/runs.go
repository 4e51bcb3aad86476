package web

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"evident/persona"
	"evident/persona/speech"
	"evident/runstore"
	"evident/store"
)

// The run list (GET /runs) shows, beside each run's tally, what it was
// judged with (issue 13 item 3): the speech profile, the endings added to
// it, and the version of the character cards (the first 12 hex digits of
// the run's character_card fingerprint, RunMeta.Fingerprints). A cell that
// differs from the previous run of the same dataset (the next older one in
// the list) is marked "바뀜" with a class, so a re-judge with another
// profile, a newly accepted ending or an edited card shows at a glance.
//
// Decisions where the spec is silent:
//   - "Added endings" are the run's endings (RunMeta.Endings, runstore's
//     list with exceptions written "!noun") less the built-in endings and
//     exceptions of the profile it names (speech.ByName); a profile of
//     another name has no built-in list, so all its endings count as added.
//   - Runs judged from files (no dataset) are compared with nothing: two
//     such runs may have read different files.
//   - The oldest run of a dataset has nothing to differ from: no marks.

type runsPage struct {
	Latest   int64
	Runs     []runRow
	Datasets []datasetRow
	Accepted string // endings the review accepted, "니까 · 십쇼"; "" for none
	// Crystal lists the CRYSTAL runs kept in the store (crystal score --db,
	// the screen's uploads), newest first, linking /crystal/db-N (issue 16
	// item 3: listed with the judge's runs).
	Crystal []crystalRunRow
}

// crystalRunRow is one stored CRYSTAL run in the run list.
type crystalRunRow struct {
	URL, Name, Created  string
	Profile, Similarity string
	Items, Models       int
}

type runRow struct {
	ID               int64
	URL, Started     string
	Dataset          string
	Profile          string
	Judged, Rejected int
	ByVerdict        []verdictCount
	// Added is the endings added to the profile, "니까 · 십쇼" ("" for none);
	// Cards the character_card fingerprint's first 12 hex digits ("" when
	// the run has none).
	Added, Cards string
	// Prev is the previous run of the same dataset (0: none); the three
	// flags say which of Profile, Added and Cards differ from it.
	Prev                                       int64
	ProfileChanged, AddedChanged, CardsChanged bool
}

// cardsVersionLen is how many hex digits of the character_card fingerprint
// the run list shows (48 bits: two card versions of one dataset do not
// collide in practice).
const cardsVersionLen = 12

// addedEndings is run's endings less the built-in endings and exceptions of
// the profile it names (see the decisions above), in the run's order.
func addedEndings(run store.RunInfo) []string {
	var base []string
	if p, err := speech.ByName(run.Profile); err == nil && run.Profile != "" {
		base = append(base, p.Endings...)
		for _, e := range p.Exceptions {
			base = append(base, "!"+e)
		}
	}
	var out []string
	for _, e := range run.Endings {
		if !slices.Contains(base, e) && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// cardsVersion is the short card version of a run ("" without one).
func cardsVersion(run store.RunInfo) string {
	fp := run.Fingerprints["character_card"]
	if len(fp) > cardsVersionLen {
		fp = fp[:cardsVersionLen]
	}
	return fp
}

// markChanges sets each row's Prev and the three flags (runs newest first,
// rows in the same order).
func markChanges(runs []store.RunInfo, rows []runRow) {
	for i := range rows {
		if runs[i].DatasetID == 0 {
			continue
		}
		for j := i + 1; j < len(runs); j++ {
			if runs[j].DatasetID != runs[i].DatasetID {
				continue
			}
			r, p := &rows[i], &rows[j]
			r.Prev = p.ID
			r.ProfileChanged = r.Profile != p.Profile
			r.AddedChanged = r.Added != p.Added
			r.CardsChanged = r.Cards != p.Cards
			break
		}
	}
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
			Dataset: names[run.DatasetID], Profile: run.Profile, Judged: run.Tally.Judged, Rejected: run.Tally.Rejected,
			Added: strings.Join(addedEndings(run), " · "), Cards: cardsVersion(run)}
		if run.DatasetID != 0 {
			row.Dataset = fmt.Sprintf("#%d %s", run.DatasetID, names[run.DatasetID])
		}
		for _, v := range persona.Verdicts {
			row.ByVerdict = append(row.ByVerdict, verdictCount{string(v), verdictClass[v], run.Tally.ByVerdict[v]})
		}
		p.Runs = append(p.Runs, row)
	}
	markChanges(runs, p.Runs)
	crystalRuns, err := s.db.CrystalRuns(ctx)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	for _, c := range crystalRuns {
		p.Crystal = append(p.Crystal, crystalRunRow{URL: fmt.Sprintf("/crystal/%s%d", storedCrystalPrefix, c.ID),
			Name: c.Name, Created: localTime(c.Created), Profile: string(c.Profile), Similarity: c.Similarity,
			Items: c.Items, Models: c.Models})
	}
	for _, ds := range sets {
		p.Datasets = append(p.Datasets, datasetRow{ID: ds.ID, Name: ds.Name, Imported: localTime(ds.ImportedAt),
			Turns: ds.Turns, Cards: ds.Cards, Lexicon: ds.Lexicon, Runs: perSet[ds.ID],
			JudgeURL: fmt.Sprintf("/datasets/%d/judge", ds.ID)})
	}
	s.render(w, r, http.StatusOK, "runs", p)
}
