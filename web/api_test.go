package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"evident/persona"
	"evident/persona/demo"
	"evident/store"
	"evident/web"
)

// demoRows returns the demo chat_turn rows as they are in turns.jsonl.
func demoRows(t *testing.T) [][]byte {
	t.Helper()
	rows, err := demo.Turns().Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]byte
	for {
		buf, rerr := rows.ReadRows(nil, 512, 1<<20)
		for _, r := range buf {
			out = append(out, append([]byte(nil), r.JSON...))
		}
		if rerr == io.EOF {
			return out
		}
		if rerr != nil {
			t.Fatal(rerr)
		}
	}
}

// api sends a request to the live API with an optional bearer token.
func (c *client) api(method, path, contentType, token string, body []byte) page {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return c.do(req)
}

func records(t *testing.T, body string) []persona.Record {
	t.Helper()
	var out []persona.Record
	dec := json.NewDecoder(strings.NewReader(body))
	for dec.More() {
		var r persona.Record
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%v in %s", err, body)
		}
		out = append(out, r)
	}
	return out
}

func canon(t *testing.T, r persona.Record) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The demo log sent live — its first half one turn per request, then the
// server and the store closed and reopened, then the rest as one JSON Lines
// batch — gets the records of the batch run of the same log (run 1), in
// arrival order, and each is readable again by GET. Recall across requests
// and across the restart is what makes the second half agree.
func TestLiveAPIRecordsEqualTheBatchRunAcrossRequestsAndARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evident.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := web.EnsureDemo(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	want, err := db.Records(context.Background(), 1, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	rows := demoRows(t)
	if len(rows) != len(want) {
		t.Fatalf("%d demo rows, %d batch records", len(rows), len(want))
	}
	half := len(rows) / 2
	var got []persona.Record
	s, err := web.New(db, web.Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	c := newClient(t, ts.URL)
	for i, row := range rows[:half] {
		p := c.api(http.MethodPost, "/api/v1/turns", "application/json", "", row)
		if p.status != http.StatusOK {
			t.Fatalf("row %d: %d %s", i+1, p.status, p.body)
		}
		got = append(got, records(t, p.body)...)
	}
	ts.Close()
	db.Close()

	if db, err = store.Open(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c = serve(t, db, web.Options{})
	p := c.api(http.MethodPost, "/api/v1/turns?dataset=1", "application/x-ndjson", "", append(bytes.Join(rows[half:], []byte("\n")), '\n'))
	if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "application/x-ndjson") {
		t.Fatalf("batch: %d %s %s", p.status, p.header.Get("Content-Type"), p.body)
	}
	got = append(got, records(t, p.body)...)
	if len(got) != len(want) {
		t.Fatalf("%d live records, want %d", len(got), len(want))
	}
	recalls := 0
	for i := range want {
		if canon(t, got[i]) != canon(t, want[i]) {
			t.Errorf("turn %s:\nlive  %s\nbatch %s", want[i].TurnID, canon(t, got[i]), canon(t, want[i]))
		}
		if err := persona.ValidateJSON([]byte(canon(t, got[i]))); err != nil {
			t.Errorf("turn %s: schema: %v", got[i].TurnID, err)
		}
		if i >= half && want[i].RecallSourceTurn != nil {
			recalls++
		}
	}
	if recalls == 0 {
		t.Fatal("no recall in the second half: the restart is not tested")
	}
	one := c.api(http.MethodGet, "/api/v1/turns/"+want[3].TurnID, "", "", nil)
	if one.status != http.StatusOK || canon(t, records(t, one.body)[0]) != canon(t, want[3]) {
		t.Fatalf("GET %s: %d %s", want[3].TurnID, one.status, one.body)
	}
	if p := c.api(http.MethodGet, "/api/v1/turns/NOPE", "", "", nil); p.status != http.StatusNotFound || !strings.Contains(p.body, `"error"`) {
		t.Fatalf("GET of an unknown turn: %d %s", p.status, p.body)
	}
	// The live turns are a run on the screen.
	runID, ok, err := db.LiveRunID(context.Background(), 1)
	if err != nil || !ok {
		t.Fatalf("no live run: %v", err)
	}
	info, err := db.Run(context.Background(), runID)
	if err != nil || info.Tally.Judged != len(want) {
		t.Fatalf("live run %d: %+v, %v; want %d judged", runID, info.Tally, err, len(want))
	}
	if page := c.ok(fmt.Sprintf("/runs/%d", runID)); !strings.Contains(page, want[0].TurnID) {
		t.Fatalf("the screen's page of live run %d does not show %s", runID, want[0].TurnID)
	}
	if page := c.ok("/runs"); !strings.Contains(page, fmt.Sprintf("/runs/%d", runID)) {
		t.Fatalf("the run list does not link live run %d", runID)
	}
}

const (
	chrTurn = `{"turn_id": "%s", "session_id": "LIVE-1", "character_id": "CHR-0100", "model_id": "m", "created_at": "%s", "user_message": "%s", "reply_text": "%s", "first_person": "나", "named_entities": %s, "honorific_level": "반말", "user_asked_recall": %s}`
)

func turnJSON(id, at, msg, reply, named, asked string) []byte {
	return []byte(sprintf(chrTurn, id, at, msg, reply, named, asked))
}

// A re-send of the same row answers the stored record (Evident-Repeat); a
// different row with a judged turn_id is 409 naming its row, and nothing of
// that request is stored; a late created_at is judged against what arrived
// before it and says so in its hedge.
func TestLiveAPIIdempotencyConflictsAndLateTurns(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	t1 := turnJSON("L1", "2026-10-03T21:05:00+09:00", "가족은?", "동생 도윤이가 있어.", `["도윤"]`, "false")
	first := c.api(http.MethodPost, "/api/v1/turns", "application/json", "", t1)
	if first.status != http.StatusOK {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	again := c.api(http.MethodPost, "/api/v1/turns", "application/json", "", t1)
	if again.status != http.StatusOK || again.body != first.body || again.header.Get("Evident-Repeat") != "1" {
		t.Fatalf("re-send: %d %q repeat %q; want the first body", again.status, again.body, again.header.Get("Evident-Repeat"))
	}
	changed := turnJSON("L1", "2026-10-03T21:05:00+09:00", "가족은?", "혼자야.", `[]`, "false")
	fresh := turnJSON("L9", "2026-10-03T21:06:00+09:00", "응", "그래.", `[]`, "false")
	p := c.api(http.MethodPost, "/api/v1/turns", "application/json", "", []byte("["+string(fresh)+","+string(changed)+"]"))
	if p.status != http.StatusConflict || !strings.Contains(p.body, `"row":2`) {
		t.Fatalf("conflict: %d %s; want 409 at row 2", p.status, p.body)
	}
	if p := c.api(http.MethodGet, "/api/v1/turns/L9", "", "", nil); p.status != http.StatusNotFound {
		t.Fatalf("the conflicting request stored its other row: %d", p.status)
	}
	late := turnJSON("L2", "2026-10-03T21:01:00+09:00", "동생 이름이 뭐였지?", "글쎄, 모르겠어.", `[]`, "true")
	p = c.api(http.MethodPost, "/api/v1/turns", "application/json", "", late)
	if p.status != http.StatusOK {
		t.Fatalf("late: %d %s", p.status, p.body)
	}
	r := records(t, p.body)[0]
	if r.Verdict != persona.RecallFailed || r.RecallSourceTurn == nil || *r.RecallSourceTurn != "L1" {
		t.Fatalf("late turn: %s source %v; want %s citing L1", r.Verdict, r.RecallSourceTurn, persona.RecallFailed)
	}
	if r.Hedge == nil || !strings.Contains(*r.Hedge, "L1보다 이르지만 늦게 도착해") {
		t.Fatalf("late turn's hedge %v does not say it arrived late", r.Hedge)
	}
}

// Tokens, content types, limits and bad rows get JSON errors with the row.
func TestLiveAPIAuthLimitsAndErrors(t *testing.T) {
	db := demoStore(t)
	const screen, apiTok = "screen-token-0123456789abcdef", "api-token-0123456789abcdef"
	c := serve(t, db, web.Options{Token: screen, APIToken: apiTok, MaxLiveBody: 2048})
	row := turnJSON("A1", "2026-10-03T21:05:00+09:00", "안녕", "안녕.", `[]`, "false")
	unknown := bytes.Replace(row, []byte("CHR-0100"), []byte("CHR-NONE"), 1)
	bad := []byte(`{"turn_id": "A3", "session_id": "S"}`)
	tests := []struct {
		name, ct, token string
		body            []byte
		status          int
		contains        string
	}{
		{"no token is 401", "application/json", "", row, http.StatusUnauthorized, "token"},
		{"a wrong token is 401", "application/json", "nope-nope-nope-nope-nope", row, http.StatusUnauthorized, "token"},
		{"the screen's token opens the API", "application/json", screen, row, http.StatusOK, `"turn_id":"A1"`},
		{"the API token opens the API", "application/json", apiTok, row, http.StatusOK, `"turn_id":"A1"`},
		{"a form post is 415", "text/plain", apiTok, row, http.StatusUnsupportedMediaType, "content type"},
		{"a body over the limit is 413", "application/json", apiTok, bytes.Repeat([]byte(" "), 4096), http.StatusRequestEntityTooLarge, "larger than 2048"},
		{"a row missing columns is 400 with its row and line", "application/x-ndjson", apiTok, []byte(string(row) + "\n" + string(bad) + "\n"), http.StatusBadRequest, `"row":2,"line":2`},
		{"an unknown character is 422 with its row", "application/json", apiTok, []byte("[" + string(row) + "," + string(unknown) + "]"), http.StatusUnprocessableEntity, `"row":2`},
		{"not JSON is 400", "application/json", apiTok, []byte("hello"), http.StatusBadRequest, "not a JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := c.api(http.MethodPost, "/api/v1/turns", tc.ct, tc.token, tc.body)
			if p.status != tc.status || !strings.Contains(p.body, tc.contains) {
				t.Fatalf("%d %s; want %d containing %s", p.status, p.body, tc.status, tc.contains)
			}
			if p.status != http.StatusOK && !json.Valid([]byte(p.body)) {
				t.Fatalf("error body is not JSON: %s", p.body)
			}
		})
	}
	if p := c.api(http.MethodGet, "/api/v1/turns/A1", "", "", nil); p.status != http.StatusUnauthorized {
		t.Fatalf("GET without a token: %d", p.status)
	}

	// A body of unknown length (chunked) is read up to the limit too.
	chunked := func(body io.Reader, length int64) page {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, c.base+"/api/v1/turns", body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+apiTok)
		return c.do(req)
	}
	if p := chunked(io.MultiReader(bytes.NewReader(row)), 0); p.status != http.StatusOK || !strings.Contains(p.body, `"turn_id":"A1"`) {
		t.Fatalf("a chunked row: %d %s", p.status, p.body)
	}
	if p := chunked(io.MultiReader(bytes.NewReader(bytes.Repeat([]byte(" "), 4096))), 0); p.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.body, "larger than 2048") {
		t.Fatalf("a chunked body over the limit: %d %s; want 413", p.status, p.body)
	}
	// A body whose Content-Length is over the limit is refused before a
	// byte of it is read: its bytes never come (the pipe is never
	// written), and the answer comes all the same.
	pr, pw := io.Pipe()
	defer pw.Close()
	if p := chunked(pr, 1<<30); p.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.body, "larger than 2048") {
		t.Fatalf("a body declared over the limit: %d %s; want 413 at once", p.status, p.body)
	}

	// Without any token the API answers on loopback only.
	open := serve(t, db, web.Options{})
	req, _ := http.NewRequest(http.MethodGet, open.base+"/api/v1/turns/A1", nil)
	req.Host = "example.com"
	if p := open.do(req); p.status != http.StatusForbidden {
		t.Fatalf("no-token server on a non-loopback host: %d %s", p.status, p.body)
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// benchTurns are n demo turns made distinct: copy k of the demo log gets
// turn_ids and session_ids suffixed with k, so sessions keep their recall.
func benchTurns(b *testing.B, db *store.DB, n int) [][]byte {
	b.Helper()
	turns, err := db.Turns(context.Background(), 1)
	if err != nil {
		b.Fatal(err)
	}
	out := make([][]byte, 0, n)
	for k := 0; len(out) < n; k++ {
		for _, tu := range turns {
			if len(out) == n {
				break
			}
			tu.TurnID = fmt.Sprintf("%s-%d", tu.TurnID, k)
			tu.SessionID = fmt.Sprintf("%s-%d", tu.SessionID, k)
			v, err := json.Marshal(&tu)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

func benchServer(b *testing.B) (*store.DB, string) {
	b.Helper()
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "evident.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if _, _, err := web.EnsureDemo(context.Background(), db); err != nil {
		b.Fatal(err)
	}
	s, err := web.New(db, web.Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	b.Cleanup(ts.Close)
	return db, ts.URL
}

// BenchmarkLiveAPISingleTurn sends one turn per request from 50 concurrent
// clients over loopback to a file store and reports the latency quantiles
// (issue 17 target: p99 ≤ 5 ms).
func BenchmarkLiveAPISingleTurn(b *testing.B) {
	db, base := benchServer(b)
	rows := benchTurns(b, db, b.N)
	postConcurrently(b, base+"/api/v1/turns", rows)
}

// postConcurrently POSTs each of rows (application/json) from 50 concurrent
// clients (EVIDENT_BENCH_CLIENTS), b.N in all, and reports p50 and p99
// latency, requests per second (as turns/s: one turn a request) and the
// process's CPU (user+system) per request over the same span, cpu-µs/turn:
// the clients' and the server's together, which the machine's load does not
// inflate as it does the wall-clock figures.
func postConcurrently(b *testing.B, url string, rows [][]byte) {
	clients := 50
	if n, err := strconv.Atoi(os.Getenv("EVIDENT_BENCH_CLIENTS")); err == nil && n > 0 {
		clients = n // to compare with one client
	}
	lat := make([]time.Duration, b.N)
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	hc := &http.Client{Transport: tr}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := processCPU()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				resp, err := hc.Post(url, "application/json", bytes.NewReader(rows[i]))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(t0)
				if resp.StatusCode != http.StatusOK {
					b.Errorf("row %d: %d", i, resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu := processCPU() - cpu0
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/turn")
}

// BenchmarkLiveAPIBatch sends 1,000-turn JSON Lines batches and reports
// turns per second (issue 17 target: ≥ 20,000).
func BenchmarkLiveAPIBatch(b *testing.B) {
	db, base := benchServer(b)
	const per = 1000
	rows := benchTurns(b, db, per*b.N)
	b.ResetTimer()
	for i := range b.N {
		body := append(bytes.Join(rows[i*per:(i+1)*per], []byte("\n")), '\n')
		resp, err := http.Post(base+"/api/v1/turns", "application/x-ndjson", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("batch %d: %d", i, resp.StatusCode)
		}
	}
	b.ReportMetric(float64(per*b.N)/b.Elapsed().Seconds(), "turns/s")
}
