package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"evident/store"
)

// webCLI runs the store-backed commands in-process (registered here, so the
// tests do not depend on main.go's command list).
func webCLI(ctx context.Context, t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &cli.Command{Name: "evident", Writer: &out, ErrWriter: &errOut,
		ExitErrHandler: func(context.Context, *cli.Command, error) {}, Commands: webCommands()}
	err := a.Run(ctx, append([]string{"evident"}, args...))
	return out.String(), errOut.String(), err
}

func openDB(t *testing.T, path string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

const demoTally = "judged 195 (금지 소재 접촉 15 · 세계관 밖 고유명사 18 · 말투 어긋남 36 · 앞 회차를 기억 못 함 9 · 설정대로 말함 117), rejected 0"

func TestImportCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	t.Run("import --demo stores the demo as a dataset and judges it into run 1", func(t *testing.T) {
		dbPath := filepath.Join(dir, "demo.db")
		out, _, err := webCLI(ctx, t, "import", "--demo", "--db", dbPath)
		if err != nil {
			t.Fatal(err)
		}
		want := "dataset #1: 195 turns, 4 cards, 49 lexicon rows (0 rows rejected) in " + dbPath + "\nrun #1: " + demoTally + "\n"
		if out != want {
			t.Errorf("out %q\nwant %q", out, want)
		}
	})
	cardsPath := write(t, dir, "cards.jsonl", `{"character_id":"C1","name":"하나","honorific_rule":"반말","first_person":"나"}`+"\n")
	lexPath := write(t, dir, "lexicon.csv", "term,topic\n선거,현실 정치\n")
	badTurns := write(t, dir, "bad.jsonl", `{"turn_id":"A1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"그래."}
{"turn_id":"A2","session_id":"S","character_id":"C1"
`)
	t.Run("a rejected row makes import exit 1, name the line and store nothing", func(t *testing.T) {
		dbPath := filepath.Join(dir, "bad.db")
		_, errOut, err := webCLI(ctx, t, "import", "--turns", badTurns, "--cards", cardsPath, "--lexicon", lexPath, "--db", dbPath)
		var ec cli.ExitCoder
		if !errors.As(err, &ec) || ec.ExitCode() != 1 || !strings.Contains(err.Error(), "1 rows rejected; nothing was imported") {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(errOut, "reject "+badTurns+":2: ") {
			t.Errorf("stderr %q", errOut)
		}
		if sets, _ := openDB(t, dbPath).Datasets(ctx); len(sets) != 0 {
			t.Errorf("%d datasets stored", len(sets))
		}
	})
	t.Run("--keep-going stores the rest and keeps the reject on the run", func(t *testing.T) {
		dbPath := filepath.Join(dir, "keep.db")
		out, _, err := webCLI(ctx, t, "import", "--turns", badTurns, "--cards", cardsPath, "--lexicon", lexPath, "--db", dbPath, "--keep-going", "--name", "시험")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "dataset #1: 1 turns, 1 cards, 1 lexicon rows (1 rows rejected)") || !strings.Contains(out, "rejected 1") {
			t.Errorf("out %q", out)
		}
		db := openDB(t, dbPath)
		sets, _ := db.Datasets(ctx)
		rej, _ := db.Rejects(ctx, 1)
		if len(sets) != 1 || sets[0].Name != "시험" || len(rej) != 1 || rej[0].Line != 2 {
			t.Errorf("datasets %+v, rejects %+v", sets, rej)
		}
	})
	t.Run("--no-judge only imports", func(t *testing.T) {
		dbPath := filepath.Join(dir, "nojudge.db")
		out, _, err := webCLI(ctx, t, "import", "--demo", "--db", dbPath, "--no-judge")
		if err != nil || strings.Contains(out, "run #") {
			t.Fatalf("out %q, %v", out, err)
		}
		if runs, _ := openDB(t, dbPath).Runs(ctx); len(runs) != 0 {
			t.Errorf("%d runs", len(runs))
		}
	})
}

func TestReportAndEvalCommands(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "e.db")

	t.Run("report and eval on an empty store say there is no run yet", func(t *testing.T) {
		_, _, err := webCLI(ctx, t, "report", "--db", dbPath, "--html", filepath.Join(dir, "r.html"))
		if err == nil || !strings.Contains(err.Error(), "no run yet") {
			t.Errorf("err = %v", err)
		}
	})
	if _, _, err := webCLI(ctx, t, "import", "--demo", "--db", dbPath); err != nil {
		t.Fatal(err)
	}
	t.Run("report writes one self-contained HTML file of the run", func(t *testing.T) {
		path := filepath.Join(dir, "report.html")
		_, errOut, err := webCLI(ctx, t, "report", "--db", dbPath, "--run", "1", "--html", path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		html := string(b)
		if !strings.Contains(html, "<style>") || strings.Contains(html, "<script") || strings.Contains(html, "<link") ||
			regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).MatchString(html) {
			t.Error("the report is not self-contained")
		}
		for _, v := range []string{"금지 소재 접촉", "세계관 밖 고유명사", "말투 어긋남", "앞 회차를 기억 못 함", "설정대로 말함", "15회차", "117회차"} {
			if !strings.Contains(html, v) {
				t.Errorf("report lacks %q", v)
			}
		}
		if errOut != "wrote "+path+" (run #1, 195 turns)\n" {
			t.Errorf("stderr %q", errOut)
		}
		for _, c := range []string{"0", "-5"} {
			if _, _, err := webCLI(ctx, t, "report", "--db", dbPath, "--html", path, "--cap", c); err == nil || !strings.Contains(err.Error(), "--cap "+c+": a report holds at least 1 turn") {
				t.Errorf("--cap %s: %v", c, err)
			}
		}
		// a capped report says so (the file says how many matched)
		_, errOut, err = webCLI(ctx, t, "report", "--db", dbPath, "--run", "1", "--html", path, "--cap", "10")
		if err != nil || errOut != "wrote "+path+" (run #1 of 195 turns: at most the first 10 of the filter)\n" {
			t.Errorf("--cap 10: stderr %q, %v", errOut, err)
		}
		if _, _, err := webCLI(ctx, t, "report", "--db", dbPath, "--run", "7", "--html", path); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("--run 7: %v", err)
		}
	})
	t.Run("report --html through a link writes the link's target", func(t *testing.T) {
		target := write(t, dir, "target.html", "old")
		link := filepath.Join(dir, "link.html")
		symlink(t, "target.html", link)
		if _, _, err := webCLI(ctx, t, "report", "--db", dbPath, "--run", "1", "--html", link); err != nil {
			t.Fatal(err)
		}
		isLink(t, link, "target.html")
		if b, _ := os.ReadFile(target); !strings.Contains(string(b), "설정대로 말함") {
			t.Errorf("target holds %.60q, want the report", b)
		}
		noHidden(t, dir)
	})
	gold := filepath.Join("..", "..", "persona", "demo", "data", "gold.jsonl")
	t.Run("eval prints agreement, kappa, confusion, disagreements and McNemar, and stores the gold", func(t *testing.T) {
		out, _, err := webCLI(ctx, t, "eval", "--gold", gold, "--db", dbPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"run #1 · 120 gold labels",
			"agreement 108/120 = 90.0 % (95 % Wilson 83.3 – 94.2 %) · Cohen kappa 0.848",
			"  말투           1       0      21       0       1",
			"    1  설정대로 말함 → 세계관 밖 고유명사 · off-canon 「금성호」: T-010037",
			"models on 52 shared prompts",
			"claude-sonnet vs gpt-4o-mini: n 52, only claude-sonnet 2, only gpt-4o-mini 32, both 1, neither 17, p = 6.94e-08",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("eval output lacks %q\n%s", want, out)
			}
		}
		g, err := openDB(t, dbPath).Gold(ctx)
		if err != nil || len(g) != 120 || g["T-010037"].Source != "gold.jsonl" {
			t.Errorf("%d labels stored (%v)", len(g), err)
		}
	})
	t.Run("eval --json carries the same numbers", func(t *testing.T) {
		out, _, err := webCLI(ctx, t, "eval", "--gold", gold, "--db", dbPath, "--json")
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Run       int64 `json:"run"`
			Agreement struct {
				N, Agreed int
				Kappa     float64
			} `json:"agreement"`
			Models struct {
				Prompts int `json:"prompts"`
				Pairs   []struct {
					P float64 `json:"p"`
				} `json:"pairs"`
			} `json:"models"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Run != 1 || rep.Agreement.N != 120 || rep.Agreement.Agreed != 108 || rep.Models.Prompts != 52 || len(rep.Models.Pairs) != 3 {
			t.Errorf("%+v", rep)
		}
	})
	t.Run("a bad gold file is refused with its line and nothing new is stored", func(t *testing.T) {
		bad := write(t, dir, "bad-gold.jsonl", `{"turn_id":"T-010001","verdict":"설정대로 말함"}`+"\n"+`{"turn_id":"T-010001","verdict":"말투 어긋남"}`+"\n")
		_, _, err := webCLI(ctx, t, "eval", "--gold", bad, "--db", dbPath)
		if err == nil || !strings.Contains(err.Error(), "gold line 2") {
			t.Errorf("err = %v", err)
		}
		if g, _ := openDB(t, dbPath).Gold(ctx); g["T-010001"].Source != "gold.jsonl" {
			t.Error("a refused gold file replaced a label")
		}
	})
}

// lineWriter collects stderr and reports the first line containing a marker.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen chan string
	mark string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, line := range strings.Split(w.buf.String(), "\n") {
		if strings.Contains(line, w.mark) && w.seen != nil {
			w.seen <- line
			w.seen = nil
		}
	}
	return len(p), nil
}

// served is an `evident serve` running in this process (startServe).
type served struct {
	addr string      // its address, "http://127.0.0.1:PORT/"
	done chan error  // its Run's result, once ctx ends
	log  *lineWriter // its standard error
}

// startServe runs `evident serve ARGS` in this process until ctx ends and
// returns once it says it is serving; the minute's bound only turns a hang
// into a failure.
func startServe(t *testing.T, ctx context.Context, args ...string) served {
	t.Helper()
	seen := make(chan string, 1)
	s := served{done: make(chan error, 1), log: &lineWriter{seen: seen, mark: "serving http://"}}
	a := &cli.Command{Name: "evident", Writer: &bytes.Buffer{}, ErrWriter: s.log,
		ExitErrHandler: func(context.Context, *cli.Command, error) {}, Commands: webCommands()}
	go func() { s.done <- a.Run(ctx, append([]string{"evident", "serve"}, args...)) }()
	select {
	case line := <-seen:
		s.addr = regexp.MustCompile(`http://[^/]+/`).FindString(line)
	case err := <-s.done:
		t.Fatalf("serve ended: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("serve did not start")
	}
	return s
}

func TestServeCommand(t *testing.T) {
	ctx := context.Background()
	t.Run("serve refuses every interface without a token", func(t *testing.T) {
		_, _, err := webCLI(ctx, t, "serve", "--demo", "--addr", "0.0.0.0:0")
		if err == nil || !strings.Contains(err.Error(), "without --token") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("--demo cannot be combined with --db", func(t *testing.T) {
		if _, _, err := webCLI(ctx, t, "serve", "--demo", "--db", "x.db", "--addr", "127.0.0.1:0"); err == nil {
			t.Error("no error")
		}
	})
	t.Run("serve judges the demo into an empty store and answers until stopped", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		dbPath := filepath.Join(t.TempDir(), "s.db")
		srv := startServe(t, ctx, "--db", dbPath, "--addr", "127.0.0.1:0")
		addr, done, errw := srv.addr, srv.done, srv.log
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(addr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/runs/1" {
			t.Errorf("GET / = %d → %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		errw.mu.Lock()
		log := errw.buf.String()
		errw.mu.Unlock()
		if !strings.Contains(log, "empty store: imported and judged the demo as run #1: "+demoTally) {
			t.Errorf("stderr %q", log)
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v after stop", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("serve did not stop")
		}
	})
	t.Run("serve indexes again, in the background, the runs of a store whose search sidecar was lost", func(t *testing.T) {
		dbPath := filepath.Join(t.TempDir(), "s.db")
		// serveUntil runs serve on dbPath until stderr has a line with mark,
		// then stops it and returns stderr.
		serveUntil := func(mark string) string {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			seen := make(chan string, 1)
			errw := &lineWriter{seen: seen, mark: mark}
			a := &cli.Command{Name: "evident", Writer: &bytes.Buffer{}, ErrWriter: errw,
				ExitErrHandler: func(context.Context, *cli.Command, error) {}, Commands: webCommands()}
			done := make(chan error, 1)
			go func() { done <- a.Run(ctx, []string{"evident", "serve", "--db", dbPath, "--addr", "127.0.0.1:0"}) }()
			select {
			case <-seen:
			case err := <-done:
				t.Fatalf("serve ended before %q: %v", mark, err)
			case <-time.After(60 * time.Second):
				t.Fatalf("serve did not say %q", mark)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("serve returned %v after stop", err)
			}
			errw.mu.Lock()
			defer errw.mu.Unlock()
			return errw.buf.String()
		}
		// A fresh store gets the demo run, stored at once and indexed in
		// the background; the next start finds nothing to index (serve has
		// ended when serveUntil returns, so a line would be in the log).
		if log := serveUntil("search index: 1 run(s) indexed in "); !strings.Contains(log, "search index: indexing 1 run(s) in the background") {
			t.Errorf("first start: stderr %q", log)
		}
		if log := serveUntil("serving http://"); strings.Contains(log, "search index:") {
			t.Fatalf("every run is indexed, yet serve said %q", log)
		}
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(store.SidePath(dbPath) + suffix)
		}
		log := serveUntil("search index: 1 run(s) indexed in ")
		if !strings.Contains(log, "search index: indexing 1 run(s) in the background") {
			t.Errorf("stderr %q", log)
		}
		db := openDB(t, dbPath)
		if ok, err := db.TextIndexed(ctx, 1); !ok || err != nil {
			t.Errorf("run 1 after serve: TextIndexed = %v, %v", ok, err)
		}
	})
}

func TestReviewExportCommand(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "r.db")
	db := openDB(t, dbPath)
	first, err := db.Decide(ctx, store.Decision{Queue: store.QueueOffCanon, Key: "CHR-0100/나비", Value: "add", Who: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Decide(ctx, store.Decision{Queue: store.QueueEnding, Key: "니까", Value: "add", Who: "편집자"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Undo(ctx, first, "편집자"); err != nil {
		t.Fatal(err)
	}
	decode := func(t *testing.T, out string) []store.Decision {
		t.Helper()
		var ds []store.Decision
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var d store.Decision
			if err := json.Unmarshal([]byte(l), &d); err != nil {
				t.Fatalf("%v: %q", err, l)
			}
			ds = append(ds, d)
		}
		return ds
	}
	t.Run("review export prints every decision as JSON Lines, the undone one included", func(t *testing.T) {
		out, _, err := webCLI(ctx, t, "review", "export", "--db", dbPath)
		if err != nil {
			t.Fatal(err)
		}
		ds := decode(t, out)
		if len(ds) != 2 || ds[0].Key != "CHR-0100/나비" || ds[0].UndoneAt == nil || ds[0].UndoneBy != "편집자" ||
			ds[1].Key != "니까" || ds[1].Who != "편집자" || ds[1].UndoneAt != nil || ds[1].At.IsZero() {
			t.Errorf("%+v", ds)
		}
	})
	t.Run("--out writes the same lines to a file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "decisions.jsonl")
		out, _, err := webCLI(ctx, t, "review", "export", "--db", dbPath, "--out", path)
		if err != nil || out != "" {
			t.Fatalf("%q, %v", out, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(decode(t, string(b))) != 2 {
			t.Errorf("file:\n%s", b)
		}
	})
}
