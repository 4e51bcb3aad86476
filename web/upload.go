package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"

	"evident/persona"
	queues "evident/persona/review"

	"evident/persona/demo"
	"evident/persona/evalrun"
	"evident/persona/ingest"
	"evident/persona/speech"
	"evident/runstore"
	"evident/store"
)

type uploadPage struct {
	RunID       int64
	MaxMiB      int64
	MaxInFlight int    // MaxUploadsInFlight
	Stored      string // the dataset that lends cards and lexicon when left out
	Name        string
	Profile     string
	KeepGoing   bool
	Error       string
	Detail      string
	Rejects     []persona.Reject
	More        int
	GoldError   string
	GoldDetail  string
}

func (s *Server) newUploadPage(ctx context.Context) *uploadPage {
	p := &uploadPage{MaxMiB: s.opt.MaxUpload >> 20, MaxInFlight: MaxUploadsInFlight, Profile: "seed"}
	if run, err := s.db.LatestRun(ctx); err == nil {
		p.RunID = run.ID
	}
	if ds, ok := s.lender(ctx); ok {
		p.Stored = fmt.Sprintf("#%d %s", ds.ID, ds.Name)
	}
	return p
}

// lender is the newest dataset with cards and a lexicon, whose tables an
// upload of only a turn log reuses.
func (s *Server) lender(ctx context.Context) (store.DatasetInfo, bool) {
	sets, err := s.db.Datasets(ctx)
	if err != nil {
		return store.DatasetInfo{}, false
	}
	for _, ds := range sets {
		if ds.Cards > 0 {
			return ds, true
		}
	}
	return store.DatasetInfo{}, false
}

func (s *Server) uploadForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "upload", s.newUploadPage(r.Context()))
}

// form is a multipart form read whole under the size limit.
type form struct {
	fields map[string]string
	files  map[string]file   // the last file of each field
	all    map[string][]file // every file of each field, in order (inputs with multiple)
}

type file struct {
	name string
	data []byte
}

// errNotMultipart is the upload forms' answer to a request that is not a
// multipart form (a script posting JSON, say), in the screen's language.
var errNotMultipart = errors.New("올리기는 multipart/form-data 양식으로 보내야 합니다(이 화면의 올리기 양식이 그렇게 보냅니다). 아무것도 가져오지 않았습니다")

// multipartOf is r.MultipartReader, its refusal worded as errNotMultipart
// (net/http says "request Content-Type isn't multipart/form-data").
func multipartOf(r *http.Request) (*multipart.Reader, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", errNotMultipart, err)
	}
	return mr, nil
}

// readForm reads every part of a multipart request, capped at max bytes in
// all. Files are held in memory (the cap bounds them); the CRYSTAL upload
// uses it. /upload and /gold spool to disk instead (readSpooled).
func readForm(w http.ResponseWriter, r *http.Request, max int64) (*form, error) {
	r.Body = http.MaxBytesReader(w, r.Body, max)
	mr, err := multipartOf(r)
	if err != nil {
		return nil, err
	}
	f := &form{fields: map[string]string{}, files: map[string]file{}, all: map[string][]file{}}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return f, nil
		}
		if err != nil {
			return nil, err
		}
		if err := f.add(part); err != nil {
			return nil, err
		}
	}
}

func (f *form) add(part *multipart.Part) error {
	defer part.Close()
	name := part.FormName()
	if part.FileName() == "" {
		b, err := io.ReadAll(io.LimitReader(part, 4096))
		if err != nil {
			return err
		}
		f.fields[name] = strings.TrimSpace(string(b))
		return nil
	}
	b, err := io.ReadAll(part)
	if err != nil {
		return err
	}
	fn := part.FileName()
	if i := strings.LastIndexAny(fn, `/\`); i >= 0 { // some browsers send a path
		fn = fn[i+1:]
	}
	if len(b) > 0 || fn != "" {
		f.files[name] = file{name: fn, data: b}
		f.all[name] = append(f.all[name], file{name: fn, data: b})
	}
	return nil
}

// MaxUploadsInFlight caps the uploads (/upload and /gold) a server reads
// and imports at once (twelve concurrent 60 MiB uploads took 1.7 GB when
// they were held in memory). The next one is answered 503 with
// Retry-After (uploadRetryAfter) and a Korean message, before its body is
// read. A slot is held while the body arrives only as long as it keeps
// its pace (uploadpace.go: Options.UploadMinRate averaged over each
// Options.UploadGrace), then while the upload is imported.
const MaxUploadsInFlight = 2

// MaxUploadsPerClient is how many of the slots one client address holds
// at once (clientKey: an IPv4 address, an IPv6 /64): with it, one client
// cannot take every slot while others wait; its next upload is answered
// 503 as above, saying its own upload is still in flight.
const MaxUploadsPerClient = 1

// uploadRetryAfter is the Retry-After of a refused upload, in seconds.
const uploadRetryAfter = 10

// uploadGate counts one server's uploads in flight, in all and per
// client (a table of at most MaxUploadsInFlight addresses).
type uploadGate struct {
	mu  sync.Mutex
	n   int
	per map[netip.Addr]int
	// after is the clock of the slots' pace (uploadpace.go); nil means
	// time.AfterFunc. Tests set it before the first upload.
	after afterFunc
}

// Why an upload got no slot.
const (
	gateFull   = "full"   // MaxUploadsInFlight are taken
	gateClient = "client" // this client holds MaxUploadsPerClient
)

// uploadGates holds each Server's gate (a Server's fields live in
// server.go; the gate is this file's business).
var uploadGates sync.Map // *Server → *uploadGate

func (s *Server) uploadGate() *uploadGate {
	g, _ := uploadGates.LoadOrStore(s, &uploadGate{})
	return g.(*uploadGate)
}

// enter takes a slot for client c; refused is "" when it did, else
// gateClient when c holds MaxUploadsPerClient already, gateFull when
// MaxUploadsInFlight are taken.
func (g *uploadGate) enter(c netip.Addr) (release func(), refused string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.per[c] >= MaxUploadsPerClient {
		return nil, gateClient
	}
	if g.n >= MaxUploadsInFlight {
		return nil, gateFull
	}
	if g.per == nil {
		g.per = map[netip.Addr]int{}
	}
	g.n++
	g.per[c]++
	return func() {
		g.mu.Lock()
		g.n--
		if g.per[c]--; g.per[c] <= 0 {
			delete(g.per, c)
		}
		g.mu.Unlock()
	}, ""
}

// inFlight is the number of uploads holding a slot.
func (g *uploadGate) inFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// busyUpload answers an upload that got no slot (why: gateFull or
// gateClient): 503, Retry-After, nothing read or imported.
func (s *Server) busyUpload(w http.ResponseWriter, r *http.Request, page *uploadPage, gold bool, why string) {
	msg := "지금은 올리기를 더 받을 수 없습니다"
	detail := fmt.Sprintf("다른 올리기 %d개를 처리하는 중입니다. %d초쯤 뒤에 다시 올려 주세요. 아무것도 가져오지 않았습니다.",
		MaxUploadsInFlight, uploadRetryAfter)
	if why == gateClient {
		detail = fmt.Sprintf("이 주소에서 보낸 다른 올리기를 처리하는 중입니다(한 주소에 %d개까지). 그것이 끝난 뒤에 다시 올려 주세요. 아무것도 가져오지 않았습니다.",
			MaxUploadsPerClient)
	}
	if gold {
		page.GoldError, page.GoldDetail = msg, detail
	} else {
		page.Error, page.Detail = msg, detail
	}
	w.Header().Set("Retry-After", fmt.Sprint(uploadRetryAfter))
	// The body is not read: close the connection after the answer, so
	// net/http does not first drain up to 256 KiB of it (a trickling body
	// held the refusal back for the five-minute read timeout).
	w.Header().Set("Connection", "close")
	s.render(w, r, http.StatusServiceUnavailable, "upload", page)
}

// spooledFile is one uploaded file, copied to an unnamed temporary file
// (created in os.TempDir and unlinked at once, so nothing is left behind
// however the process ends) instead of memory.
type spooledFile struct {
	name string
	f    *os.File
	size int64
}

// open returns a fresh reader of the whole file; several may be open at
// once (ReadAt).
func (sf spooledFile) open() (io.ReadCloser, error) {
	return io.NopCloser(io.NewSectionReader(sf.f, 0, sf.size)), nil
}

// spooledForm is a multipart form whose files are spooled to disk.
type spooledForm struct {
	fields map[string]string
	files  map[string]spooledFile // the last file of each field
	temps  []*os.File
}

// Close closes (and so frees) every spooled file.
func (f *spooledForm) Close() {
	for _, t := range f.temps {
		t.Close()
	}
	f.temps = nil
}

// readSpooled reads every part of a multipart request, capped at max bytes
// in all (http.MaxBytesReader, as readForm); each file goes to its own
// unnamed temporary file, so memory stays flat whatever the upload's size.
// The caller closes the form; on error it is closed already.
func readSpooled(w http.ResponseWriter, r *http.Request, max int64) (*spooledForm, error) {
	r.Body = http.MaxBytesReader(w, r.Body, max)
	mr, err := multipartOf(r)
	if err != nil {
		return nil, err
	}
	f := &spooledForm{fields: map[string]string{}, files: map[string]spooledFile{}}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return f, nil
		}
		if err == nil {
			err = f.add(part)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
	}
}

func (f *spooledForm) add(part *multipart.Part) error {
	defer part.Close()
	name := part.FormName()
	if part.FileName() == "" {
		b, err := io.ReadAll(io.LimitReader(part, 4096))
		if err != nil {
			return err
		}
		f.fields[name] = strings.TrimSpace(string(b))
		return nil
	}
	tmp, err := os.CreateTemp("", "evident-upload-*")
	if err != nil {
		return fmt.Errorf("spool upload: %w", err)
	}
	os.Remove(tmp.Name()) // unnamed from now on (unix); the open file stays readable
	f.temps = append(f.temps, tmp)
	n, err := io.Copy(tmp, part)
	if err != nil {
		return err
	}
	fn := part.FileName()
	if i := strings.LastIndexAny(fn, `/\`); i >= 0 { // some browsers send a path
		fn = fn[i+1:]
	}
	if n > 0 || fn != "" {
		f.files[name] = spooledFile{name: fn, f: tmp, size: n}
	}
	return nil
}

// formFail answers a multipart form that could not be read.
func (s *Server) formFail(w http.ResponseWriter, r *http.Request, err error, page *uploadPage, gold bool) {
	status, msg := http.StatusBadRequest, "올린 양식을 읽지 못했습니다"
	detail := err.Error()
	var tooBig *http.MaxBytesError
	var tooSlow *uploadTooSlowError
	switch {
	case errors.As(err, &tooBig):
		status, msg = http.StatusRequestEntityTooLarge, "올린 파일이 너무 큽니다"
		detail = fmt.Sprintf("한 번에 올릴 수 있는 크기는 모두 합쳐 %d MiB 입니다. 파일을 나눠 올리거나 evident import 를 쓰세요. 아무것도 가져오지 않았습니다.", s.opt.MaxUpload>>20)
	case errors.As(err, &tooSlow):
		status, msg = http.StatusRequestTimeout, "올리기가 너무 느립니다"
		detail = tooSlow.korean()
	}
	if gold {
		page.GoldError, page.GoldDetail = msg, detail
	} else {
		page.Error, page.Detail = msg, detail
	}
	s.render(w, r, status, "upload", page)
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	page := s.newUploadPage(ctx)
	release, why := s.uploadGate().enter(clientKey(r))
	if why != "" {
		s.busyUpload(w, r, page, false, why)
		return
	}
	defer release()
	pace := s.paceBody(w, r)
	f, err := readSpooled(w, r, s.opt.MaxUpload)
	pace.stop()
	if err != nil {
		s.formFail(w, r, err, page, false)
		return
	}
	defer f.Close()
	if !s.csrfOK(r, f.fields["csrf"]) {
		s.csrfFail(w, r)
		return
	}
	page.Name, page.KeepGoing = f.fields["name"], f.fields["keep_going"] != ""
	if p := f.fields["profile"]; p != "" {
		page.Profile = p
	}
	reject := func(msg, detail string) {
		page.Error, page.Detail = msg, detail
		s.render(w, r, http.StatusUnprocessableEntity, "upload", page)
	}
	profile, err := speech.ByName(page.Profile)
	if err != nil {
		reject("말투 프로필을 모릅니다", err.Error())
		return
	}
	var t runstore.Tables
	for _, in := range []struct {
		field, label string
		dst          *ingest.Source
	}{{"turns", "회차 로그(chat_turn)", &t.Turns}, {"cards", "캐릭터 카드(character_card)", &t.Cards}, {"lexicon", "소재 사전(topic_lexicon)", &t.Lexicon}} {
		up, ok := f.files[in.field]
		if !ok {
			continue
		}
		format, err := ingest.FormatOf(up.name)
		if err == nil && format == ingest.CardFile && in.field != "cards" {
			err = errors.New("a character card file is not a table")
		}
		if err != nil {
			want := ".jsonl(.ndjson), .json(배열), .csv"
			if in.field == "cards" {
				want += ", 캐릭터 카드 파일 .png·.charx·.json(카드 하나)"
			}
			reject(in.label+" 파일 형식을 알 수 없습니다",
				fmt.Sprintf("%q: 확장자로 형식을 고릅니다 — %s 가운데 하나여야 합니다. 아무것도 가져오지 않았습니다.", up.name, want))
			return
		}
		var src ingest.Source = ingest.NewTable(up.name, format, up.open)
		if in.field == "turns" {
			src = ingest.CapRows(src, MaxUploadRow, "the screen judges rows up to this size; judge longer ones with evident judge --db")
		}
		*in.dst = src
	}
	if t.Turns == nil {
		reject("회차 로그 파일이 없습니다", "chat_turn 표(회차 로그)는 꼭 올려야 합니다.")
		return
	}
	if t.Cards == nil || t.Lexicon == nil {
		ds, ok := s.lender(ctx)
		if !ok {
			reject("카드와 사전이 필요합니다", "저장된 데이터가 없어 캐릭터 카드 표와 소재 사전 표를 함께 올려야 합니다.")
			return
		}
		if t.Cards == nil {
			if t.Cards, err = s.storedCards(ctx, ds); err != nil {
				s.storeFail(w, r, err)
				return
			}
		}
		if t.Lexicon == nil {
			if t.Lexicon, err = s.storedLexicon(ctx, ds); err != nil {
				s.storeFail(w, r, err)
				return
			}
		}
	}
	name := page.Name
	if name == "" {
		name = t.Turns.Name()
	}
	s.jobs.Lock()
	res, err := runstore.Run(ctx, s.db, t, runstore.Options{Name: name, Profile: profile, Strict: !page.KeepGoing, Workers: s.opt.Workers})
	s.jobs.Unlock()
	if res.Run.ID != 0 {
		s.IndexInBackground() // the run is stored; its search index follows
	}
	var rej *runstore.RejectsError
	switch {
	case errors.As(err, &rej):
		page.Rejects = rej.Rejects
		if len(page.Rejects) > 200 {
			page.Rejects, page.More = page.Rejects[:200], len(rej.Rejects)-200
		}
		reject(fmt.Sprintf("판정할 수 없는 행이 %d개 있어 아무것도 가져오지 않았습니다", len(rej.Rejects)),
			"아래 줄을 고쳐 다시 올리거나, 이 행들을 빼고 가져오려면 ‘거부된 행은 빼고 가져오기’를 고르세요.")
		return
	case errors.Is(err, runstore.ErrEmpty):
		reject("회차 로그가 비어 있습니다", "chat_turn 표에 행이 하나도 없습니다. 아무것도 가져오지 않았습니다.")
		return
	case err != nil && res.DatasetID != 0:
		s.fail(w, r, http.StatusInternalServerError, "가져왔지만 판정하지 못했습니다",
			fmt.Sprintf("데이터셋 #%d 은 저장됐습니다. 실행 목록에서 다시 판정할 수 있습니다. (%v)", res.DatasetID, err))
		return
	case err != nil:
		reject("파일을 읽지 못해 아무것도 가져오지 않았습니다", err.Error())
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/runs/%d", res.Run.ID), http.StatusSeeOther)
}

// storedCards and storedLexicon return a stored dataset's table as an input
// (JSON Lines in memory) for an upload that left it out.
func (s *Server) storedCards(ctx context.Context, ds store.DatasetInfo) (ingest.Source, error) {
	cards, err := s.db.Cards(ctx, ds.ID)
	if err != nil {
		return nil, err
	}
	return jsonlInput(fmt.Sprintf("저장된 데이터셋 #%d 카드", ds.ID), len(cards), func(i int) any { return &cards[i] })
}

func (s *Server) storedLexicon(ctx context.Context, ds store.DatasetInfo) (ingest.Source, error) {
	lex, err := s.db.Lexicon(ctx, ds.ID)
	if err != nil {
		return nil, err
	}
	return jsonlInput(fmt.Sprintf("저장된 데이터셋 #%d 사전", ds.ID), len(lex), func(i int) any { return &lex[i] })
}

func jsonlInput(name string, n int, row func(int) any) (ingest.Source, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := 0; i < n; i++ {
		if err := enc.Encode(row(i)); err != nil {
			return nil, err
		}
	}
	data := buf.Bytes()
	return ingest.NewTable(name, ingest.JSONL, func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}), nil
}

// goldUpload stores a gold file (evalrun's format) and returns to the run.
func (s *Server) goldUpload(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	page := s.newUploadPage(ctx)
	release, why := s.uploadGate().enter(clientKey(r))
	if why != "" {
		s.busyUpload(w, r, page, true, why)
		return
	}
	defer release()
	pace := s.paceBody(w, r)
	f, err := readSpooled(w, r, s.opt.MaxUpload)
	pace.stop()
	if err != nil {
		s.formFail(w, r, err, page, true)
		return
	}
	defer f.Close()
	if !s.csrfOK(r, f.fields["csrf"]) {
		s.csrfFail(w, r)
		return
	}
	up, ok := f.files["gold"]
	if !ok || up.size == 0 {
		page.GoldError, page.GoldDetail = "정답 파일이 없습니다", "JSON Lines {turn_id, verdict, note} 파일을 골라 주세요."
		s.render(w, r, http.StatusUnprocessableEntity, "upload", page)
		return
	}
	labels, err := evalrun.ReadGold(io.NewSectionReader(up.f, 0, up.size))
	if err != nil {
		page.GoldError = "정답 파일을 읽지 못해 아무것도 저장하지 않았습니다"
		page.GoldDetail = up.name + ": " + err.Error()
		s.render(w, r, http.StatusUnprocessableEntity, "upload", page)
		return
	}
	if err := s.db.PutGold(ctx, goldRows(labels), up.name); err != nil {
		s.storeFail(w, r, err)
		return
	}
	to := "/"
	if id, err := strconv.ParseInt(f.fields["run"], 10, 64); err == nil && id > 0 {
		to = fmt.Sprintf("/runs/%d#gold", id)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// goldRows converts evalrun's gold labels to the store's.
func goldRows(labels []evalrun.Gold) []store.Gold {
	out := make([]store.Gold, len(labels))
	for i, g := range labels {
		out[i] = store.Gold{TurnID: g.TurnID, Verdict: g.Verdict, Note: g.Note}
	}
	return out
}

// judgeDataset judges a stored dataset again with the chosen profile.
func (s *Server) judgeDataset(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "찾는 데이터셋이 없습니다", "데이터셋 번호는 1 이상의 정수입니다.")
		return
	}
	profile, err := speech.ByName(r.PostFormValue("profile"))
	if err != nil {
		s.fail(w, r, http.StatusUnprocessableEntity, "말투 프로필을 모릅니다", err.Error())
		return
	}
	if r.PostFormValue("reviewed") != "" { // the endings the review queue accepted
		accepted, err := runstore.AcceptedEndings(r.Context(), s.db)
		if err != nil {
			s.storeFail(w, r, err)
			return
		}
		var extra []string
		for _, e := range accepted {
			if !queues.HasEnding(profile, e) {
				extra = append(extra, e)
			}
		}
		profile = profile.With(extra, nil)
	}
	s.jobs.Lock()
	run, err := runstore.JudgeDataset(r.Context(), s.db, id, runstore.Options{Profile: profile, Workers: s.opt.Workers}, nil)
	s.jobs.Unlock()
	if run.ID != 0 {
		s.IndexInBackground()
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			s.fail(w, r, http.StatusNotFound, "찾는 데이터셋이 없습니다", err.Error())
			return
		}
		s.fail(w, r, http.StatusInternalServerError, "판정하지 못했습니다", err.Error())
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/runs/%d", run.ID), http.StatusSeeOther)
}

// EnsureDemo imports and judges the embedded demo (persona/demo) when the
// store holds no dataset and no run yet — the first start of evident serve
// opens on the demo character's past conversations — and reports whether it
// did.
func EnsureDemo(ctx context.Context, db *store.DB) (store.RunInfo, bool, error) {
	sets, err := db.Datasets(ctx)
	if err != nil {
		return store.RunInfo{}, false, err
	}
	runs, err := db.Runs(ctx)
	if err != nil {
		return store.RunInfo{}, false, err
	}
	if len(sets) > 0 || len(runs) > 0 {
		return store.RunInfo{}, false, nil
	}
	tables := runstore.Tables{Turns: demo.Turns(), Cards: demo.Cards(), Lexicon: demo.Lexicon()}
	res, err := runstore.Run(ctx, db, tables, runstore.Options{Name: "데모 · 등대지기 도담과 세 캐릭터", Strict: true})
	if err != nil {
		return store.RunInfo{}, false, err
	}
	return res.Run, true, nil
}
