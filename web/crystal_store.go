package web

// CRYSTAL runs read from the store (issue 16 item 3): runs saved with
// `crystal score --db` or uploaded on this screen (when it has a store) are
// listed on /crystal after this lifetime's in-memory ones, with ids "db-N"
// (N the store's crystal run id). A run kept page by page (store schema
// 0007) is read one page at a time: the table from its saved summary, the
// index from store.CrystalItems (keyset on the item position: ?after=P or
// ?before=P), an item page from store.CrystalItem and its image from
// store.CrystalImage; nothing reads the whole table. A run saved under an
// older schema is reopened whole from its saved table and inputs, as
// before.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strconv"
	"strings"

	"evident/crystal"
	"evident/crystal/embedder"
	"evident/crystal/report"
	"evident/store"
)

// storedCrystalPrefix marks a run id read from the store.
const storedCrystalPrefix = "db-"

// storedRun is what a crystalRun read page by page keeps: the store's id
// and summary.
type storedRun struct {
	id   int64
	info store.CrystalRunInfo
}

// summaryTable is the table of a saved summary: every model's means and
// counts, no per-item scores (enough for the table, its notes and the
// text and JSON downloads).
func summaryTable(sum report.Summary) report.Table {
	t := report.Table{Items: sum.Items, Profile: sum.Profile, Similarity: sum.Similarity, Lexical: sum.Lexical,
		Threshold: sum.Threshold, Inclusive: sum.Inclusive, Order: sum.Order, Alpha: sum.Alpha, Weights: sum.Weights}
	for _, m := range sum.Models {
		t.Rows = append(t.Rows, report.Row{Model: m.Model, Report: crystal.Report{Profile: sum.Profile, Similarity: sum.Similarity,
			Threshold: sum.Threshold, Order: sum.Order, Alpha: sum.Alpha, Weights: sum.Weights, Items: sum.Items,
			Missing: m.Missing, Unparseable: m.Unparseable, StepItems: m.StepItems, Unknown: m.Unknown,
			Accuracy: m.Accuracy, MatchF1: m.MatchF1, Precision: m.Precision, Recall: m.Recall, LIS: m.LIS,
			OrderedF1: m.OrderedF1, CPR: m.CPR, AvgSteps: m.AvgSteps, Skipped: m.Skipped, TrainReward: m.TrainReward,
			TruncatedSteps: m.TruncatedSteps, TruncatedItems: m.TruncatedItems}})
	}
	return t
}

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
		r := &crystalRun{ID: storedCrystalPrefix + strconv.FormatInt(in.ID, 10), Name: in.Name, Source: in.Source,
			Created: in.Created, table: summaryTable(in.Report)}
		h := r.head()
		h.Items = in.Items
		out = append(out, h)
	}
	return out
}

// storedCrystal reopens run id ("db-N") from the store; false when id is
// not of that form or the store has no such run. A paged run comes back
// with its summary only (see the file comment).
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
	t := summaryTable(info.Report)
	sim := storedSimilarity(t)
	var r *crystalRun
	if info.Paged {
		r = newCrystalRun(nil, nil, t, sim, info.Created)
		r.stored = &storedRun{id: n, info: info}
	} else {
		items, runs, whole, err := s.db.CrystalTable(ctx, n)
		if err != nil {
			return nil, false, err
		}
		r = newCrystalRun(items, runs, whole, storedSimilarity(whole), info.Created)
	}
	r.ID, r.Name, r.Source = id, info.Name, info.Source
	db := s.db
	r.images = func(ref string) ([]byte, error) {
		b, _, err := db.CrystalImage(ctx, n, ref)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fs.ErrNotExist
		}
		return b, err
	}
	return r, true, nil
}

// storedSimilarity is the similarity a stored run's unmatched steps are
// explained with: the profile's lexical one, or a stand-in that says the
// embedding model is not loaded here.
func storedSimilarity(t report.Table) embedder.Similarity {
	if t.Lexical {
		return crystal.LexicalFor(t.Profile)
	}
	return unavailableSimilarity{name: t.Similarity}
}

// storedIndex is buildIndex for a paged run: the same filters (model,
// outcome, q) applied by store.CrystalItems, one page of crystalIndexPage
// items from the keyset cursor in ?after= or ?before=.
func (s *Server) storedIndex(ctx context.Context, r *crystalRun, q url.Values) (crystalIndex, error) {
	x := r.buildIndex(q) // the filter values, options and columns; no rows (no items in memory)
	x.Total = r.stored.info.Items
	cursor := func(key string) int {
		v, err := strconv.Atoi(q.Get(key))
		if err != nil || v < 0 {
			return -1
		}
		return v
	}
	sq := store.CrystalItemQuery{Model: -1, Outcome: x.Outcome, Q: x.Q, After: cursor("after"), Before: cursor("before"), Limit: crystalIndexPage}
	if k, ok := r.rows[x.Model]; ok && x.Model != "" {
		sq.Model = k
	}
	page, err := s.db.CrystalItems(ctx, r.stored.id, sq)
	if err != nil {
		return x, err
	}
	x.Matching = page.Matching
	x.Rows = nil
	for _, row := range page.Rows {
		it := row.Item
		ir := crystalIndexRow{ID: it.ID, URL: r.itemURL(it.ID, x.Model), Question: firstLine(it.Question, 110), Gold: it.Answer}
		for _, m := range x.Columns {
			cell := row.Cells[r.rows[m]]
			c := crystalCell{Model: m, URL: r.itemURL(it.ID, m), F1: f3(cell.F1)}
			switch {
			case cell.Missing:
				c.Class, c.Mark, c.F1, c.Title = "missing", "–", "", "no prediction"
			case cell.Correct:
				c.Class, c.Mark, c.Title = "right", "✓", "answer correct ("+string(cell.Rule)+")"
			default:
				c.Class, c.Mark, c.Title = "wrong", "✗", "answer wrong ("+string(cell.Rule)+")"
			}
			if cell.Unparseable {
				c.Title += ", unparseable reply"
			}
			if !cell.Missing {
				c.Title += ", Match F1 " + f3(cell.F1)
			}
			ir.Cells = append(ir.Cells, c)
		}
		x.Rows = append(x.Rows, ir)
	}
	pages := max(1, (page.Matching+crystalIndexPage-1)/crystalIndexPage)
	x.Page = min(page.Before/crystalIndexPage+1, pages)
	x.Pager = pager{Page: x.Page, Pages: pages}
	if len(page.Rows) > 0 {
		if page.HasPrev {
			x.Pager.Prev = x.URL("before", strconv.Itoa(page.Rows[0].Pos))
		}
		if page.HasNext {
			x.Pager.Next = x.URL("after", strconv.Itoa(page.Rows[len(page.Rows)-1].Pos))
		}
	}
	return x, nil
}

// storedItem is the item page of a paged run: the item and every model's
// score and reply read from the store (store.CrystalItem), laid out by
// itemPage on a one-item run. ok is false when the run has no such item.
func (s *Server) storedItem(ctx context.Context, r *crystalRun, id, model string) (*crystalItemPage, bool, error) {
	d, err := s.db.CrystalItem(ctx, r.stored.id, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	one, k := r.oneItem(d), r.rows[model]
	p := one.itemPage(ctx, 0, k)
	p.Run.Items = r.stored.info.Items
	p.Prev, p.Next = "", ""
	if d.PrevID != "" {
		p.Prev = r.itemURL(d.PrevID, model)
	}
	if d.NextID != "" {
		p.Next = r.itemURL(d.NextID, model)
	}
	return p, true, nil
}

// oneItem is r narrowed to the one item of d: its table rows carry d's
// scores, its replies d's replies.
func (r *crystalRun) oneItem(d store.CrystalItemDetail) *crystalRun {
	t := r.table
	t.Rows = make([]report.Row, len(r.table.Rows))
	var runs []report.Run
	for k, row := range r.table.Rows {
		row.Report.PerItem = []crystal.ItemScore{d.Scores[k]}
		t.Rows[k] = row
		run := report.Run{Model: row.Model, Replies: map[string]crystal.Reply{}}
		if d.Replies[k] != nil {
			run.Replies[d.Item.ID] = *d.Replies[k]
		}
		runs = append(runs, run)
	}
	one := newCrystalRun([]crystal.Item{d.Item}, runs, t, r.sim, r.Created)
	one.ID, one.Name, one.Source, one.images = r.ID, r.Name, r.Source, r.images
	return one
}

// writeStoredItems writes a paged run's per-item evidence as JSON Lines,
// as report.Table.WriteItems does, reading the store's evidence rows a page
// at a time.
func (s *Server) writeStoredItems(ctx context.Context, w io.Writer, id int64) error {
	const page = 1000
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for off := 0; ; off += page {
		rows, total, err := s.db.CrystalEvidence(ctx, id, page, off)
		if err != nil {
			return err
		}
		for _, e := range rows {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		if off+page >= total {
			break
		}
	}
	return bw.Flush()
}

// unavailableSimilarity stands for an embedding similarity the screen
// cannot load (a stored run scored with --embedder onnx): the saved scores
// show, recomputing similarities for unmatched steps says why it cannot.
type unavailableSimilarity struct{ name string }

func (u unavailableSimilarity) Name() string { return u.name }

func (u unavailableSimilarity) Similarities(context.Context, []string, []string) ([][]float64, error) {
	return nil, fmt.Errorf("the run was scored with %s, which the screen does not load", u.name)
}
