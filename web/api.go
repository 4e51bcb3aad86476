package web

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"evident/persona"
	"evident/persona/ingest"
	"evident/persona/live"
	"evident/persona/speech"
	"evident/runstore"
	"evident/store"
)

// The live judging API (issue 17; README "Live API"):
//
//	POST /api/v1/turns[?dataset=N&profile=seed|extended]
//	GET  /api/v1/turns/{turn_id}
//
// POST takes chat_turn rows (the columns of the chat_turn table, decoded by
// persona/ingest exactly as a JSON Lines file is): one JSON object, a JSON
// array of objects, or JSON Lines with Content-Type application/x-ndjson.
// It answers with the verdict records (persona/schema.json) in the same
// shape: one object, a JSON array, or JSON Lines. Each turn is judged in
// arrival order against its session's live state (persona/live), stored in
// the store (store/live.go), so recall works across requests and restarts.
// Cards and lexicon are those of dataset N, or of the latest dataset.
//
// Errors are JSON objects {"error": text} with, for a row, "row" (1-based
// position in the request) and, for JSON Lines, "line": 400 a row that does
// not decode (or a body that is not JSON), 401 a missing or wrong token, 403
// a cross-site request, 404 no such dataset or turn, 409 a turn_id already
// judged with a different row, 413 a body over the limit or a row over a
// row limit (names or bytes), 415 another content type, 422 a turn whose
// character_id has no card or that would take its session's state over
// the state limit, 503 a request whose dataset's cards kept changing while
// it was judged or whose body does not fit LiveBodyBudget (with
// Retry-After). An error of a live limit (persona/live.Limits) also names
// it: "limit" (names_per_row, row_bytes or state_bytes), "max" its value,
// "got" what the row has and "turn_id". A request is judged whole or not
// at all: on any error nothing of it is stored.
//
// Decisions where the spec is silent:
//   - Auth: with Options.Token or Options.APIToken set, a request must carry
//     "Authorization: Bearer T" with either; with neither, the API answers on
//     loopback only, as the screen does. The screen's login cookie does not
//     open the API (no cookie, no CSRF to check). Wrong tokens count with
//     the login form's per client address: past the limits, 429 with
//     Retry-After (ratelimit.go).
//   - Only application/json and application/x-ndjson bodies are read: a
//     browser cannot send either cross-site without a preflight, which this
//     server never answers.
//   - The body limit is Options.MaxLiveBody (DefaultMaxLiveBody, 4 MiB; a
//     Content-Length over it is refused before the body is read), the
//     bodies held at once LiveBodyBudget limits; a row's and a session's
//     limits are persona/live's (SetLiveLimits; defaults: 1,000 distinct
//     named_entities and 1 MiB of reply_text plus user_message a row, 2 MiB
//     of state a session). Row limits are checked for every row before any
//     is judged (413, a size of the row); the state limit while judging
//     (422: the same row would be judged in a session that holds less).
//     The profile is per request (the dataset's live run records the
//     profile it was created with).
//   - The judge of a dataset is kept between requests and rebuilt when a card
//     of the dataset is added or updated (the review queue's "add to canon"
//     takes effect on the next request). A kept judge answers a request
//     without a query of its own: store.JudgeLiveKeyed checks the cards'
//     version inside the transaction that stores the records (one query a
//     group, on the live writer's connection: the per-request query on a
//     pooled connection was about 6 % of a single-turn request's CPU), and
//     a request whose judge turns out stale is judged again with the cards
//     stored then (maxJudgeAttempts times at most; then 503). A request with
//     no kept judge, or naming a character the kept judge has no card for
//     (before a 422), asks the store; concurrent ones share that query
//     (keyFlight): each takes the answer of a query that started after it
//     arrived.
//   - Options.APIToken follows --token's rule (MinTokenLength characters at
//     least); New refuses a shorter one.
//   - A re-send (same turn_id, same row) answers the stored record, status
//     200, with header Evident-Repeat: N (the number of re-sent rows).

// checkAPIToken is the token rule of Options.APIToken (serve --api-token),
// the same as --token's (web.MinTokenLength characters at least, or empty
// for none); New refuses a shorter one, naming the flag.
func checkAPIToken(token string) error {
	if n := utf8.RuneCountInString(token); token != "" && n < MinTokenLength {
		return fmt.Errorf("--api-token is %d characters; use at least %d random characters (e.g. openssl rand -base64 24)", n, MinTokenLength)
	}
	return nil
}

// maxAPIRows caps the rows of one request, whatever their size.
const maxAPIRows = 100_000

// jsonContentType is the Content-Type header of the API's JSON answers,
// set as the header map's value (net/http only reads it): one slice for
// every request instead of one a request.
var jsonContentType = []string{"application/json; charset=utf-8"}

// apiError is the JSON error body; Limit, Max, Got and TurnID are set for a
// row over a live limit (persona/live.LimitError).
type apiError struct {
	Error  string `json:"error"`
	Row    int    `json:"row,omitempty"`
	Line   int    `json:"line,omitempty"`
	Limit  string `json:"limit,omitempty"`
	Max    int    `json:"max,omitempty"`
	Got    int    `json:"got,omitempty"`
	TurnID string `json:"turn_id,omitempty"`
}

func apiFail(w http.ResponseWriter, status int, e apiError) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(e)
}

// serveAPI is the API's safety layer (token, cross-site), in place of the
// screen's sessions and CSRF; it reports whether it answered r.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) bool {
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		return false
	}
	tokens := []string{s.opt.Token, s.opt.APIToken}
	if s.opt.Token == "" && s.opt.APIToken == "" {
		if !loopbackHost(r.Host) {
			apiFail(w, http.StatusForbidden, apiError{Error: "a server started without a token answers on loopback addresses only"})
			return true
		}
	} else if !s.bearerAuthed(w, r, tokens) { // 401, or 429 past the wrong-token limits (ratelimit.go)
		return true
	}
	if r.Method == http.MethodPost && crossSite(r) {
		apiFail(w, http.StatusForbidden, apiError{Error: "cross-site request"})
		return true
	}
	s.mux.ServeHTTP(w, r)
	return true
}

// bearerOK reports whether h is "Bearer T" with T one of the non-empty
// tokens, compared in constant time.
func bearerOK(h string, tokens []string) bool {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	tok = strings.TrimSpace(tok)
	good := false
	for _, t := range tokens {
		if t != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(t)) == 1 {
			good = true
		}
	}
	return good
}

// apiTurn is GET /api/v1/turns/{turn_id}: the stored record of a live turn.
func (s *Server) apiTurn(w http.ResponseWriter, r *http.Request) {
	rec, err := s.db.LiveRecord(r.Context(), r.PathValue("turn_id"))
	if errors.Is(err, store.ErrNotFound) {
		apiFail(w, http.StatusNotFound, apiError{Error: fmt.Sprintf("no live turn %q", r.PathValue("turn_id"))})
		return
	}
	if err != nil {
		s.opt.Log.Printf("web: %s %s: %v", r.Method, r.URL.Path, err)
		apiFail(w, http.StatusInternalServerError, apiError{Error: "the store failed: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(append(rec, '\n'))
}

// apiShape is how a request sent its rows, and so how records go back.
type apiShape int

const (
	shapeObject apiShape = iota
	shapeArray
	shapeLines
)

// MaxUploadRow caps one chat_turn row of an upload to the screen, in bytes
// of its text (ingest.Size): 1 MiB. A longer row is a reject at its line
// (ingest.CapRows), so the upload is refused with it listed unless the
// uploader keeps going: a run holds many times a row while judging it (a
// 55 MB row took the server to 1.5 GB), and two uploads may be in flight.
// evident judge takes rows of any length.
const MaxUploadRow = 1 << 20

// MaxLiveRowText is the default cap of one live row's reply_text plus
// user_message (serve --live-max-row-bytes; persona/live.DefaultMaxRowBytes):
// 1 MiB. The batch judge reads rows of any length, but a request's memory
// grows with its rows' text many times over (evidence, summary, the stored
// record and its search index): a test user's 42 MB reply took the server
// from 230 MB to 1.6 GB. A longer row is refused with 413 and its row
// number.
const MaxLiveRowText = live.DefaultMaxRowBytes

// SetLiveLimits sets the live API's row and session limits (serve
// --live-max-names, --live-max-row-bytes, --live-max-state-bytes; zero
// fields are persona/live's defaults). A negative limit is refused with an
// error naming it, and the limits are left as they were. Safe to call while
// serving: a request judges with the limits it read when it began.
func (s *Server) SetLiveLimits(l live.Limits) error {
	if err := l.Check(); err != nil {
		return err
	}
	l = l.Resolved()
	s.api.limits.Store(&l)
	return nil
}

// liveLimits returns the live API's limits (SetLiveLimits, else the
// defaults).
func (s *Server) liveLimits() live.Limits {
	if l := s.api.limits.Load(); l != nil {
		return *l
	}
	return live.DefaultLimits()
}

// limitFail answers a turn over a live limit: 413 for a row limit, 422 for
// the state limit (the row would fit a session holding less), the body
// naming the limit, its value, what the row has, and the row.
func limitFail(w http.ResponseWriter, le *live.LimitError, row, line int) {
	status := http.StatusRequestEntityTooLarge
	var msg string
	switch le.Limit {
	case live.LimitRowBytes:
		msg = fmt.Sprintf("turn %q: reply_text and user_message hold %d bytes: the live API judges rows of at most %d (--live-max-row-bytes; judge longer rows in batch: evident judge)", le.TurnID, le.Got, le.Max)
	case live.LimitNames:
		msg = fmt.Sprintf("turn %q names %d distinct entities: the live API judges rows naming at most %d (--live-max-names)", le.TurnID, le.Got, le.Max)
	default:
		status = http.StatusUnprocessableEntity
		msg = fmt.Sprintf("turn %q would make session %q's state %d bytes: a session holds at most %d (--live-max-state-bytes); nothing of this request was stored", le.TurnID, le.SessionID, le.Got, le.Max)
	}
	apiFail(w, status, apiError{Error: msg, Row: row, Line: line, Limit: le.Limit, Max: le.Max, Got: le.Got, TurnID: le.TurnID})
}

// apiTurns is POST /api/v1/turns.
func (s *Server) apiTurns(w http.ResponseWriter, r *http.Request) {
	ct := r.Header.Get("Content-Type")
	if ct != "application/json" && ct != "application/x-ndjson" { // the common two need no parsing
		ct, _, _ = mime.ParseMediaType(ct)
	}
	var shape apiShape
	switch ct {
	case "application/json":
	case "application/x-ndjson", "application/jsonl", "application/json-lines":
		shape = shapeLines
	default:
		apiFail(w, http.StatusUnsupportedMediaType, apiError{Error: fmt.Sprintf("content type %q: send application/json (an object or an array) or application/x-ndjson", ct)})
		return
	}
	var held int64
	client := clientKey(r)
	defer func() { s.api.bodies.give(client, held) }()
	// A body must keep coming, as an upload must (uploadpace.go): a client
	// trickling its bodies cannot hold the budget for the read timeout.
	pace := s.paceBody(w, r)
	body, err := readBody(w, r, s.opt.MaxLiveBody, func(n int64) bool {
		// One client: one body's buffer, at most the limit plus the
		// bytes.MinRead a read wants spare.
		if !s.api.bodies.take(client, n, LiveBodyBudget*s.opt.MaxLiveBody, s.opt.MaxLiveBody+bytes.MinRead) {
			return false
		}
		held += n
		return true
	})
	pace.stop()
	if err != nil {
		var mb *http.MaxBytesError
		var slow *uploadTooSlowError
		switch {
		case errors.As(err, &slow):
			w.Header().Set("Connection", "close")
			apiFail(w, http.StatusRequestTimeout, apiError{Error: fmt.Sprintf("body too slow: under %d KiB in %v (%d KiB/s averaged; serve --upload-grace, --upload-min-rate); send it faster", slow.Quota>>10, slow.Period, perSecond(slow.Quota, slow.Period)>>10)})
		case errors.As(err, &mb):
			apiFail(w, http.StatusRequestEntityTooLarge, apiError{Error: fmt.Sprintf("body larger than %d bytes: send at most that much a request (split the batch)", mb.Limit)})
		case errors.Is(err, errBodyBudget):
			w.Header().Set("Retry-After", fmt.Sprint(apiRetryAfter))
			w.Header().Set("Connection", "close") // answer now, not after draining the body
			apiFail(w, http.StatusServiceUnavailable, apiError{Error: fmt.Sprintf("the server holds other requests' bodies (at most %d bytes at once): retry after %d s", LiveBodyBudget*s.opt.MaxLiveBody, apiRetryAfter)})
		default:
			apiFail(w, http.StatusBadRequest, apiError{Error: "read body: " + err.Error()})
		}
		return
	}
	if shape != shapeLines {
		switch b := bytes.TrimLeft(body, " \t\r\n\ufeff"); {
		case len(b) > 0 && b[0] == '[':
			shape = shapeArray
		case len(b) > 0 && b[0] == '{':
		default:
			apiFail(w, http.StatusBadRequest, apiError{Error: "the body is not a JSON object or array of chat_turn rows"})
			return
		}
	}
	turns, e := decodeAPITurns(body, shape)
	if e != nil {
		apiFail(w, http.StatusBadRequest, *e)
		return
	}
	if len(turns) == 0 {
		apiFail(w, http.StatusBadRequest, apiError{Error: "no chat_turn row in the body"})
		return
	}

	profile, err := speech.ByName(r.URL.Query().Get("profile"))
	if err != nil {
		apiFail(w, http.StatusBadRequest, apiError{Error: err.Error()})
		return
	}
	key, j, fresh, ok := s.apiDataset(w, r, profile, false)
	if !ok {
		return
	}
	var lts []store.LiveTurn
	meta := store.RunMeta{Profile: profile.Name, Endings: runstore.Endings(profile)}
	lim := s.liveLimits()
	var res []store.LiveResult
	for attempt := 1; ; attempt++ {
		// The first row over a row limit or without a card in j is the one
		// answered; a kept judge is asked about once before a 422 (it may
		// be older than the store).
		i, le := badRow(j, lim, turns)
		if le != nil {
			limitFail(w, le, i+1, turns[i].line)
			return
		}
		if i >= 0 && !fresh {
			if key, j, fresh, ok = s.apiDataset(w, r, profile, true); !ok {
				return
			}
			attempt--
			continue
		}
		if i >= 0 {
			apiFail(w, http.StatusUnprocessableEntity, apiError{Error: fmt.Sprintf("unknown character_id %q: dataset %d has no card for it", turns[i].turn.CharacterID, key.ID),
				Row: i + 1, Line: turns[i].line})
			return
		}
		if lts == nil {
			lts = make([]store.LiveTurn, len(turns))
			for i := range turns {
				lts[i] = store.LiveTurn{Turn: &turns[i].turn, Digest: live.Digest(&turns[i].turn)}
			}
		}
		judge := j
		res, _, err = s.db.JudgeLiveKeyed(r.Context(), key, meta, lts, func(i int, st *live.State) (persona.Record, live.Change, error) {
			rec, o, err := lim.Step(judge, st, lts[i].Turn)
			return rec, o.Change, err
		})
		var ke *store.LiveKeyError
		if !errors.As(err, &ke) || attempt == maxJudgeAttempts {
			break
		}
		if ke.Err != nil { // the dataset is gone
			apiNoDataset(w, r, key.Asked)
			return
		}
		// The cards changed since the judge was built: judge with theirs.
		if j, err = s.apiJudgeFor(r, ke.Now, profile); err != nil {
			s.opt.Log.Printf("web: %s %s: %v", r.Method, r.URL.Path, err)
			apiFail(w, http.StatusInternalServerError, apiError{Error: "cannot build the judge of dataset " + strconv.FormatInt(ke.Now.ID, 10) + ": " + err.Error()})
			return
		}
		key, fresh = ke.Now, true
	}
	var re *store.LiveRowError
	var ke *store.LiveKeyError
	var le *live.LimitError
	switch {
	case errors.As(err, &re) && errors.As(err, &le):
		limitFail(w, le, re.Row+1, turns[re.Row].line)
		return
	case errors.As(err, &ke):
		apiFail(w, http.StatusServiceUnavailable, apiError{Error: fmt.Sprintf("the cards of dataset %d changed %d times while this request was judged; send it again", key.ID, maxJudgeAttempts)})
		return
	case errors.As(err, &re) && errors.Is(err, store.ErrLiveConflict):
		apiFail(w, http.StatusConflict, apiError{Error: "turn_id " + strconv.Quote(turns[re.Row].turn.TurnID) + " was already sent with a different row (before, or earlier in this request)",
			Row: re.Row + 1, Line: turns[re.Row].line})
		return
	case errors.As(err, &re):
		apiFail(w, http.StatusUnprocessableEntity, apiError{Error: re.Err.Error(), Row: re.Row + 1, Line: turns[re.Row].line})
		return
	case err != nil:
		s.opt.Log.Printf("web: %s %s: %v", r.Method, r.URL.Path, err)
		apiFail(w, http.StatusInternalServerError, apiError{Error: "the store failed: " + err.Error()})
		return
	}
	repeats := 0
	for _, x := range res {
		if x.Repeat {
			repeats++
		}
	}
	if repeats > 0 {
		w.Header().Set("Evident-Repeat", strconv.Itoa(repeats))
	}
	if shape == shapeObject { // the common single turn: no copy into a buffer
		w.Header()["Content-Type"] = jsonContentType
		w.Write(append(res[0].Record, '\n')) // the record's own bytes (JudgeLive's copy), grown in place when it can
		return
	}
	var out bytes.Buffer
	switch shape {
	case shapeArray:
		w.Header()["Content-Type"] = jsonContentType
		out.WriteByte('[')
		for i, x := range res {
			if i > 0 {
				out.WriteByte(',')
			}
			out.Write(x.Record)
		}
		out.WriteString("]\n")
	case shapeLines:
		w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
		for _, x := range res {
			out.Write(x.Record)
			out.WriteByte('\n')
		}
	}
	w.Write(out.Bytes())
}

// readBody reads r's body, at most limit bytes (else an
// *http.MaxBytesError, at once when Content-Length already says more). Its
// buffer starts at the body's length (Content-Length, plus bytes.MinRead,
// which a read wants spare) or 64 KiB, whichever is less, and doubles up
// to that length (limit when it is not given); before each allocation it
// asks grow for the bytes added, and stops with errBodyBudget when grow
// says no. So a request holds the budget for what it has sent, not for
// what it says it will send: a client that opens a body and sends nothing
// holds 64 KiB at most.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, grow func(n int64) bool) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	end := limit + bytes.MinRead // MaxBytesReader fails past limit: the buffer is never full
	if n := r.ContentLength; n >= 0 {
		end = n + bytes.MinRead // the reader ends at Content-Length
	}
	size := min(end, 64<<10)
	if !grow(size) {
		return nil, errBodyBudget
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			size := min(2*int64(cap(buf)), end)
			if size <= int64(cap(buf)) {
				return buf, &http.MaxBytesError{Limit: limit}
			}
			if !grow(size - int64(cap(buf))) {
				return buf, errBodyBudget
			}
			grown := make([]byte, len(buf), size)
			buf = grown[:copy(grown, buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// errBodyBudget is readBody's error when the body does not fit
// LiveBodyBudget.
var errBodyBudget = errors.New("web: the live API's body budget is spent")

// DefaultMaxLiveBody caps one live API request body (Options.MaxLiveBody):
// 4 MiB, a batch of about 8,000 demo turns. A request's memory is many
// times its body (decoded turns, records, the stored rows and the answer:
// a 48.5 MB batch of 95,000 turns took a server from 66 MB to 974 MB), so
// the API takes less than an upload, which is spooled to a file and judged
// in chunks.
const DefaultMaxLiveBody = 4 << 20

// LiveBodyBudget bounds the live API's request bodies held at once, all
// requests together, at LiveBodyBudget × the body limit (16 MiB by
// default): a request takes its buffer's bytes from the budget as the
// buffer grows (readBody) and gives them back when it has answered; one
// whose buffer does not fit is answered 503 with Retry-After
// (apiRetryAfter seconds). (Eight concurrent bodies over the limit took a
// server to 1.6 GB before they were refused.) One client address holds at
// most one body's buffer of it (the limit and 512 bytes), all its requests
// together, so the others
// always have the rest; and a body must come at the upload pace
// (Options.UploadMinRate over each Options.UploadGrace), or it is cut with
// 408: 257 connections trickling 64 KiB bodies had held the whole budget
// for the five-minute read timeout.
const LiveBodyBudget = 4

// apiRetryAfter is the Retry-After of a request refused for the budget.
const apiRetryAfter = 1

// bodyBudget counts the body bytes the live API holds (LiveBodyBudget), in
// all and per client address (clientKey). A client's entry lives while it
// holds bytes, so the table is bounded by the requests in flight.
type bodyBudget struct {
	mu       sync.Mutex
	held     int64
	byClient map[netip.Addr]int64
}

// take reserves n more bytes for client, of max in all and perClient for
// any one client; false when they are not free.
func (b *bodyBudget) take(client netip.Addr, n, max, perClient int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held+n > max || b.byClient[client]+n > perClient {
		return false
	}
	if b.byClient == nil {
		b.byClient = map[netip.Addr]int64{}
	}
	b.held += n
	b.byClient[client] += n
	return true
}

// give returns n bytes client took.
func (b *bodyBudget) give(client netip.Addr, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	if left := b.byClient[client] - n; left > 0 {
		b.byClient[client] = left
	} else {
		delete(b.byClient, client)
	}
}

// apiRow is one decoded row of a request and its line in the body.
type apiRow struct {
	turn persona.Turn
	line int
}

// decodeAPITurns decodes the rows of body; the error names the first row
// that does not decode.
func decodeAPITurns(body []byte, shape apiShape) ([]apiRow, *apiError) {
	if shape == shapeObject {
		t, err := ingest.DecodeTurn(ingest.Raw{Line: 1, JSON: bytes.TrimSpace(body)})
		if err != nil {
			return nil, &apiError{Error: err.Error(), Row: 1}
		}
		return []apiRow{{turn: t, line: 1}}, nil
	}
	f := ingest.JSONArray
	if shape == shapeLines {
		f = ingest.JSONL
	}
	rows, err := ingest.NewTable("request", f, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }).Open()
	if err != nil {
		return nil, &apiError{Error: err.Error()}
	}
	defer rows.Close()
	var out []apiRow
	var buf []ingest.Raw
	for {
		var rerr error
		buf, rerr = rows.ReadRows(buf[:0], 512, 1<<20)
		for _, raw := range buf {
			row := len(out) + 1
			if row > maxAPIRows {
				return nil, &apiError{Error: fmt.Sprintf("more than %d rows in one request", maxAPIRows), Row: row}
			}
			e := &apiError{Row: row}
			if shape == shapeLines {
				e.Line = raw.Line
			}
			if raw.Err != nil {
				e.Error = raw.Err.Error()
				return nil, e
			}
			t, err := ingest.DecodeTurn(raw)
			if err != nil {
				e.Error = err.Error()
				return nil, e
			}
			out = append(out, apiRow{turn: t, line: e.Line})
		}
		if rerr == io.EOF {
			return out, nil
		}
		if rerr != nil {
			return nil, &apiError{Error: rerr.Error(), Row: len(out) + 1}
		}
	}
}

// apiCache keeps the judge built for each dataset and profile until the
// dataset's cards change (store.LiveJudgeKey's version), so a request does
// not re-read cards and lexicon. The zero value is ready.
type apiCache struct {
	bodies bodyBudget                  // request bodies held (LiveBodyBudget)
	limits atomic.Pointer[live.Limits] // SetLiveLimits'; nil: the defaults

	mu     sync.Mutex
	judges map[apiJudgeKey]apiJudged
	asked  map[int64]store.LiveKey // by asked dataset id (0: the latest): the last key answered
	keys   keyFlight
}

// keyFlight shares store.LiveJudgeKey's query among concurrent requests:
// each request takes the answer of a query that started after it arrived
// (so a card updated before a request is seen by it, as with a query of its
// own), but 50 concurrent requests share one or two queries instead of
// running 50 (each on a pooled connection of its own). Per asked dataset id
// (0: the latest). The zero value is ready.
type keyFlight struct {
	mu sync.Mutex
	m  map[int64]*keySlot
}

type keySlot struct {
	running, queued *keyCall
}

type keyCall struct {
	done    chan struct{}
	id      int64
	version string
	err     error
}

// do returns query(id)'s answer from a query started after the call.
func (f *keyFlight) do(id int64, query func(id int64) (int64, string, error)) (int64, string, error) {
	f.mu.Lock()
	if f.m == nil {
		f.m = map[int64]*keySlot{}
	}
	sl := f.m[id]
	if sl == nil {
		sl = &keySlot{}
		f.m[id] = sl
	}
	if c := sl.queued; c != nil { // not started yet: it starts after now
		f.mu.Unlock()
		<-c.done
		return c.id, c.version, c.err
	}
	c := &keyCall{done: make(chan struct{})}
	if r := sl.running; r != nil { // started before this call: queue the next
		sl.queued = c
		f.mu.Unlock()
		<-r.done
		f.mu.Lock()
		sl.queued, sl.running = nil, c
	} else {
		sl.running = c
	}
	f.mu.Unlock()
	c.id, c.version, c.err = query(id)
	f.mu.Lock()
	if sl.running == c {
		sl.running = nil
	}
	if sl.running == nil && sl.queued == nil && f.m[id] == sl {
		delete(f.m, id) // ids come from requests: keep only those in flight
	}
	f.mu.Unlock()
	close(c.done)
	return c.id, c.version, c.err
}

type apiJudgeKey struct {
	dataset int64
	profile string
}

type apiJudged struct {
	version string
	judge   *persona.Judge
}

// maxJudgeAttempts is how many times a request is judged when the cards
// of its dataset keep changing under it (store.LiveKeyError each time).
const maxJudgeAttempts = 3

// badRow returns the index of the first row over a row limit of lim (and
// its *live.LimitError) or whose character_id has no card in j (le nil),
// or -1. Linear in the rows.
func badRow(j *persona.Judge, lim live.Limits, turns []apiRow) (i int, le *live.LimitError) {
	for i := range turns {
		if err := lim.CheckRow(&turns[i].turn); err != nil {
			return i, err.(*live.LimitError)
		}
		if _, ok := j.Card(turns[i].turn.CharacterID); !ok {
			return i, nil
		}
	}
	return -1, nil
}

// apiNoDataset answers 404 for asked (0: the latest dataset).
func apiNoDataset(w http.ResponseWriter, r *http.Request, asked int64) {
	msg := fmt.Sprintf("no dataset %d (none has that id, or its import has not finished)", asked)
	if r.URL.Query().Get("dataset") == "" {
		msg = "the store holds no dataset: import cards and a lexicon first (evident import)"
	}
	apiFail(w, http.StatusNotFound, apiError{Error: msg})
}

// apiDataset returns the key (store.LiveJudgeKey's answer) of the dataset
// a request names (?dataset=N), or of the latest one, and the judge for it
// and profile; it answers the request itself when there is none or the
// store fails. Unless fresh is set, a judge kept for the asked id and
// profile answers without a query (fresh reports whether it asked): the
// key goes to store.JudgeLiveKeyed, which checks it in its transaction, so
// a kept judge whose cards have changed judges nothing.
func (s *Server) apiDataset(w http.ResponseWriter, r *http.Request, profile *speech.Profile, fresh bool) (store.LiveKey, *persona.Judge, bool, bool) {
	var asked int64
	if q := r.URL.Query().Get("dataset"); q != "" {
		var err error
		if asked, err = strconv.ParseInt(q, 10, 64); err != nil || asked <= 0 {
			apiFail(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("dataset %q: want a positive integer", q)})
			return store.LiveKey{}, nil, false, false
		}
	}
	c := &s.api
	if !fresh {
		c.mu.Lock()
		key, ok := c.asked[asked]
		got, ok2 := c.judges[apiJudgeKey{key.ID, profile.Name}]
		c.mu.Unlock()
		if ok && ok2 && got.version == key.Version {
			return key, got.judge, false, true
		}
	}
	ctx := context.WithoutCancel(r.Context()) // the query may answer other requests too
	id, version, err := c.keys.do(asked, func(id int64) (int64, string, error) { return s.db.LiveJudgeKey(ctx, id) })
	if errors.Is(err, store.ErrNotFound) {
		apiNoDataset(w, r, asked)
		return store.LiveKey{}, nil, false, false
	}
	if err != nil {
		apiFail(w, http.StatusInternalServerError, apiError{Error: "the store failed: " + err.Error()})
		return store.LiveKey{}, nil, false, false
	}
	key := store.LiveKey{Asked: asked, ID: id, Version: version}
	j, err := s.apiJudgeFor(r, key, profile)
	if err != nil {
		s.opt.Log.Printf("web: %s %s: %v", r.Method, r.URL.Path, err)
		apiFail(w, http.StatusInternalServerError, apiError{Error: "cannot build the judge of dataset " + strconv.FormatInt(id, 10) + ": " + err.Error()})
		return store.LiveKey{}, nil, false, false
	}
	return key, j, true, true
}

// apiJudgeFor returns the judge of key's dataset and cards for profile, the
// kept one when it was built for key.Version, else one built now; it keeps
// it, and key as the asked id's latest answer.
func (s *Server) apiJudgeFor(r *http.Request, key store.LiveKey, profile *speech.Profile) (*persona.Judge, error) {
	jk := apiJudgeKey{key.ID, profile.Name}
	c := &s.api
	c.mu.Lock()
	got, ok := c.judges[jk]
	c.mu.Unlock()
	j := got.judge
	if !ok || got.version != key.Version {
		var err error
		if j, err = s.apiJudge(r, key.ID, profile); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	if c.judges == nil {
		c.judges, c.asked = map[apiJudgeKey]apiJudged{}, map[int64]store.LiveKey{}
	}
	c.judges[jk] = apiJudged{version: key.Version, judge: j}
	if len(c.asked) >= maxAskedKeys && c.asked[key.Asked] == (store.LiveKey{}) {
		clear(c.asked) // ids come from requests: keep a bounded few
	}
	c.asked[key.Asked] = key
	c.mu.Unlock()
	return j, nil
}

// maxAskedKeys caps apiCache.asked (asked ids come from requests).
const maxAskedKeys = 1024

// apiJudge builds the judge of dataset ds from its cards and lexicon as
// stored now.
func (s *Server) apiJudge(r *http.Request, ds int64, profile *speech.Profile) (*persona.Judge, error) {
	cards, err := s.db.Cards(r.Context(), ds)
	if err != nil {
		return nil, err
	}
	lex, err := s.db.Lexicon(r.Context(), ds)
	if err != nil {
		return nil, err
	}
	return persona.NewJudge(cards, lex, profile)
}
