package web

import (
	"context"
	"fmt"
	"io"
	"log"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"evident/store"
)

// TestUploadsInFlight: two uploads from two addresses whose bodies are
// still arriving hold both slots; a third is answered 503 with
// Retry-After and a Korean message before its body is read; once the two
// end, an upload is taken again. (One address holds one slot at most:
// TestATricklingUploadIsCutAndAnotherAddressUploadsMeanwhile.) Spooled files have no name in TMPDIR. The handler runs in-process so the test knows, without timing,
// when an upload holds its slot: a write to a body pipe returns only once
// the handler has read it, and the handler reads only after taking a slot.
func TestUploadsInFlight(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	db, err := store.Open(context.Background(), store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	s.uploadGate().after = newFakeTimers().after // no period ends: this test is not about the pace
	post := func(body io.Reader, contentType string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/gold", body)
		req.Host = "127.0.0.1:8080"
		req.Header.Set("Content-Type", contentType)
		return req
	}
	type slow struct {
		pw   *io.PipeWriter
		done chan *httptest.ResponseRecorder
	}
	var held []slow
	for i := range MaxUploadsInFlight {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		req := post(pr, mw.FormDataContentType())
		req.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i+10)
		sl := slow{pw: pw, done: make(chan *httptest.ResponseRecorder, 1)}
		go func() {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			pr.Close()
			sl.done <- rec
		}()
		// Returns once the handler has read it, so it holds a slot.
		fw, err := mw.CreateFormFile("gold", "gold.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		// Read by the handler's copy into its spool file.
		if _, err := io.WriteString(fw, `{"turn_id":"T-0001","verdict":"설정대로 말함"}`+"\n"); err != nil {
			t.Fatal(err)
		}
		held = append(held, sl)
	}
	if n := s.uploadGate().inFlight(); n != MaxUploadsInFlight {
		t.Fatalf("%d uploads in flight, want %d", n, MaxUploadsInFlight)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("spool files have names in TMPDIR while uploads are read: %v", left)
	}

	var body strings.Builder
	mw := multipart.NewWriter(&body)
	mw.WriteField("csrf", "x")
	mw.Close()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, post(strings.NewReader(body.String()), mw.FormDataContentType()))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "10" ||
		!strings.Contains(rec.Body.String(), "지금은 올리기를 더 받을 수 없습니다") ||
		!strings.Contains(rec.Body.String(), "다른 올리기 2개를 처리하는 중입니다") {
		t.Fatalf("third upload: %d Retry-After %q\n%s", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	}

	for _, sl := range held {
		sl.pw.CloseWithError(io.ErrUnexpectedEOF) // the client went away
		if r := <-sl.done; r.Code != http.StatusBadRequest {
			t.Fatalf("a broken upload answered %d", r.Code)
		}
	}
	if n := s.uploadGate().inFlight(); n != 0 {
		t.Fatalf("%d uploads in flight after both ended", n)
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, post(strings.NewReader(body.String()), mw.FormDataContentType()))
	if rec.Code == http.StatusServiceUnavailable {
		t.Fatalf("an upload after the others ended was refused: %s", rec.Body.String())
	}
	if rec.Code != http.StatusForbidden { // read, then refused for its made-up CSRF token
		t.Fatalf("upload after the others: %d\n%s", rec.Code, rec.Body.String())
	}
}
