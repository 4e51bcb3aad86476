package web

// The CRYSTAL view (spec crystal.md; issue 5 item 6): score runs of the
// reasoning-step scorer, the paper-style table per run, an item × model index
// and, per item, the reference and predicted steps side by side with the
// matched pairs linked. Scores, match acceptance, the explanation of
// unmatched steps, the table's notes and formulas, image references and the
// upload's checks all come from evident/crystal and evident/crystal/report;
// the screen only lays them out (package doc, "CRYSTAL"). Three files by
// role: crystal.go the runs this server holds and the handlers,
// crystal_view.go the page values built from a run, crystal_upload.go the
// upload form.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"evident/crystal"
	"evident/crystal/demo"
	"evident/crystal/embedder"
	"evident/crystal/report"
	"evident/store"
)

// crystalKeep is how many uploaded CRYSTAL runs the screen keeps in memory;
// the oldest upload is dropped when another arrives. The demo runs stay.
const crystalKeep = 10

// crystalIndexPage is how many items one page of a run's index lists.
const crystalIndexPage = 100

// crystalRun is one scored comparison: items, every model's replies and the
// table crystal/report made of them. It never changes after it is built.
type crystalRun struct {
	ID      string // "demo", "demo-paper", or the upload's number
	Name    string
	Source  string // where the references and predictions came from
	Created time.Time
	Demo    bool

	items   []crystal.Item
	index   map[string]int // item id → position in items (and in every PerItem)
	runs    []report.Run
	replies map[string]map[string]crystal.Reply // model → item id → reply
	rows    map[string]int                      // model → position in table.Rows
	table   report.Table
	sim     embedder.Similarity // the similarity the table was scored with
	images  func(ref string) ([]byte, error)
	// stored is set for a run read from the store page by page
	// (crystal_store.go): items, replies and per-item scores are then not
	// held here but read per page.
	stored *storedRun
}

// crystalRuns holds the runs of this server's lifetime (see crystalKeep).
type crystalRuns struct {
	mu   sync.Mutex
	runs []*crystalRun // demo runs first, then uploads, oldest first
	next int
}

func (c *crystalRuns) get(id string) (*crystalRun, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.runs {
		if r.ID == id {
			return r, true
		}
	}
	return nil, false
}

func (c *crystalRuns) list() []*crystalRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.runs)
}

// add numbers an uploaded run and keeps it, dropping the oldest upload when
// more than crystalKeep are held.
func (c *crystalRuns) add(r *crystalRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	r.ID = strconv.Itoa(c.next)
	c.runs = append(c.runs, r)
	uploads := 0
	for _, x := range c.runs {
		if !x.Demo {
			uploads++
		}
	}
	if uploads > crystalKeep {
		for i, x := range c.runs {
			if !x.Demo {
				c.runs = slices.Delete(c.runs, i, i+1)
				break
			}
		}
	}
}

// scoreCrystal scores runs against items with the model-free lexical
// similarity of profile p (the only similarity the screen offers: the
// embedding one needs a model directory and an onnx build).
func scoreCrystal(ctx context.Context, items []crystal.Item, runs []report.Run, p crystal.Profile) (*crystalRun, error) {
	sim := crystal.LexicalFor(p)
	t, err := report.Score(ctx, items, runs, crystal.Config{Profile: p, Similarity: sim})
	if err != nil {
		return nil, err
	}
	return newCrystalRun(items, runs, t, sim, time.Now()), nil
}

// newCrystalRun indexes a scored table for the pages.
func newCrystalRun(items []crystal.Item, runs []report.Run, t report.Table, sim embedder.Similarity, created time.Time) *crystalRun {
	r := &crystalRun{Created: created, items: items, index: make(map[string]int, len(items)), runs: runs,
		replies: map[string]map[string]crystal.Reply{}, rows: map[string]int{}, table: t, sim: sim}
	for i, it := range items {
		r.index[it.ID] = i
	}
	for _, run := range runs {
		r.replies[run.Model] = run.Replies
	}
	for k, row := range t.Rows {
		r.rows[row.Model] = k
	}
	return r
}

// demoCrystal scores the embedded sample (crystal/demo) under both profiles:
// "demo" (seed, the table of crystal/demo/testdata/table_seed.golden) and
// "demo-paper".
func demoCrystal(ctx context.Context) ([]*crystalRun, error) {
	items, err := demo.Items()
	if err != nil {
		return nil, err
	}
	runs, err := demo.Predictions()
	if err != nil {
		return nil, err
	}
	images := demo.Images()
	open := func(ref string) ([]byte, error) {
		if !fs.ValidPath(ref) {
			return nil, fs.ErrNotExist
		}
		return fs.ReadFile(images, ref)
	}
	var out []*crystalRun
	for _, d := range []struct {
		id string
		p  crystal.Profile
	}{{"demo", crystal.ProfileSeed}, {"demo-paper", crystal.ProfilePaper}} {
		r, err := scoreCrystal(ctx, items, runs, d.p)
		if err != nil {
			return nil, fmt.Errorf("crystal demo (%s): %w", d.p, err)
		}
		r.ID, r.Demo, r.images = d.id, true, open
		r.Name = "Demo sample · " + string(d.p) + " profile"
		r.Source = "embedded sample (crystal/demo): 15 items, three fictional models"
		out = append(out, r)
	}
	return out, nil
}

// ---- handlers ------------------------------------------------------------------

func (s *Server) crystalRunsPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "crystal_runs", s.newCrystalRunsPage(r.Context()))
}

func (s *Server) crystalRun(w http.ResponseWriter, r *http.Request) (*crystalRun, bool) {
	run, ok := s.crystal.get(r.PathValue("run"))
	if !ok {
		var err error
		run, ok, err = s.storedCrystal(r.Context(), r.PathValue("run"))
		if err != nil {
			s.crystalFail(w, r, http.StatusInternalServerError, "The CRYSTAL run could not be read from the store", err.Error())
			return nil, false
		}
	}
	if !ok {
		s.crystalFail(w, r, http.StatusNotFound, "No such CRYSTAL run",
			"The runs of this server are listed on /crystal. Runs kept in the store (uploads on a screen with a store, crystal score --db) stay; uploads on a screen without one live in memory and are gone after a restart.")
	}
	return run, ok
}

func (s *Server) crystalFail(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	s.render(w, r, status, "error", &errorPage{Title: title, Detail: detail, Status: status, English: true})
}

func (s *Server) crystalRunPage(w http.ResponseWriter, r *http.Request) {
	run, ok := s.crystalRun(w, r)
	if !ok {
		return
	}
	p := run.runPage(r.URL.Query())
	if run.stored != nil {
		x, err := s.storedIndex(r.Context(), run, r.URL.Query())
		if err != nil {
			s.crystalFail(w, r, http.StatusInternalServerError, "The CRYSTAL run's items could not be read from the store", err.Error())
			return
		}
		p.Index = x
	}
	s.render(w, r, http.StatusOK, "crystal_run", p)
}

// ---- downloads ---------------------------------------------------------------

func (s *Server) crystalDownload(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		run, ok := s.crystalRun(w, r)
		if !ok {
			return
		}
		var buf bytes.Buffer
		var err error
		ct, name := "text/plain; charset=utf-8", "table.txt"
		switch kind {
		case "text":
			err = run.table.WriteText(&buf)
		case "json":
			ct, name = "application/json", "table.json"
			err = run.table.WriteJSON(&buf)
		default:
			ct, name = "application/x-ndjson; charset=utf-8", "items.jsonl"
			if run.stored != nil {
				err = s.writeStoredItems(r.Context(), &buf, run.stored.id)
			} else {
				err = run.table.WriteItems(&buf, run.items, run.runs)
			}
		}
		if err != nil {
			s.crystalFail(w, r, http.StatusInternalServerError, "The file could not be written", err.Error())
			return
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="crystal-%s-%s"`, safeFileName(run.ID), name))
		w.Write(buf.Bytes())
	}
}

func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

func (s *Server) crystalItem(w http.ResponseWriter, r *http.Request) {
	run, ok := s.crystalRun(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	i, ok := run.index[id]
	if run.stored != nil {
		ok = len(run.table.Rows) > 0 // the item is looked up below
	}
	if !ok {
		s.crystalFail(w, r, http.StatusNotFound, "No such item in this run",
			fmt.Sprintf("Run %s has no item %q; its index lists every item.", run.ID, id))
		return
	}
	if len(run.table.Rows) == 0 {
		s.crystalFail(w, r, http.StatusNotFound, "This run has no model", "There is nothing to show per item.")
		return
	}
	model := r.URL.Query().Get("model")
	if model == "" {
		model = run.table.Rows[0].Model
	}
	k, ok := run.rows[model]
	if !ok {
		s.crystalFail(w, r, http.StatusNotFound, "No such model in this run",
			fmt.Sprintf("Run %s has no model %q; the models are %s.", run.ID, model, strings.Join(run.head().Models, ", ")))
		return
	}
	var p *crystalItemPage
	if run.stored != nil {
		var err error
		if p, ok, err = s.storedItem(r.Context(), run, id, model); err != nil {
			s.crystalFail(w, r, http.StatusInternalServerError, "The item could not be read from the store", err.Error())
			return
		}
		if !ok {
			s.crystalFail(w, r, http.StatusNotFound, "No such item in this run",
				fmt.Sprintf("Run %s has no item %q; its index lists every item.", run.ID, id))
			return
		}
	} else {
		p = run.itemPage(r.Context(), i, k)
	}
	s.render(w, r, http.StatusOK, "crystal_item", p)
}

// crystalImage serves an item's image from this origin (the site's CSP
// allows no other).
func (s *Server) crystalImage(w http.ResponseWriter, r *http.Request) {
	run, ok := s.crystalRun(w, r)
	if !ok {
		return
	}
	var ref string
	if run.stored != nil {
		d, err := s.db.CrystalItem(r.Context(), run.stored.id, r.PathValue("id"))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		ref = strings.TrimSpace(d.Item.Image)
	} else if i, ok := run.index[r.PathValue("id")]; ok {
		ref = strings.TrimSpace(run.items[i].Image)
	}
	if ref == "" {
		http.NotFound(w, r)
		return
	}
	b, ct, err := run.image(ref)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.Write(b)
}
