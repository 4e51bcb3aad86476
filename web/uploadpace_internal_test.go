package web

import (
	"context"
	"errors"
	"io"
	"log"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"evident/store"
)

// fakeTimers is an afterFunc whose periods end when the test says: each
// armed period's end is sent on armed, in order, and runs when called.
type fakeTimers struct {
	armed   chan func()
	stopped chan struct{} // one value a stop
}

func newFakeTimers() *fakeTimers {
	return &fakeTimers{armed: make(chan func(), 64), stopped: make(chan struct{}, 64)}
}

func (f *fakeTimers) after(d time.Duration, fn func()) func() bool {
	f.armed <- fn
	return func() bool { f.stopped <- struct{}{}; return true }
}

// endless gives as many bytes as asked, until eof is set.
type endless struct{ eof bool }

func (e *endless) Read(p []byte) (int, error) {
	if e.eof {
		return 0, io.EOF
	}
	return len(p), nil
}

func (e *endless) Close() error { return nil }

// The pace with its defaults (32 KiB/s over each 10 s: 320 KiB a
// period), each step a read of n bytes, the end of a period, the body's
// end or the handler's stop. want is how many cuts after the last step;
// a cut body answers every later read with the error.
func TestTheUploadPace(t *testing.T) {
	const quota = 320 << 10
	type step struct {
		read      int
		end, eof  bool
		stop      bool
		wantCuts  int
		wantError bool
	}
	r := func(n int) step { return step{read: n} }
	end := step{end: true}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a client sending 1 byte a second is cut when its first 10 s end", []step{
			r(1), r(1), r(1), r(1), r(1), r(1), r(1), r(1), r(1), r(1), end, {read: 1, wantCuts: 1, wantError: true}}},
		{"an upload one byte short of 320 KiB in its first 10 s is cut", []step{
			r(quota - 1), end, {read: 1, wantCuts: 1, wantError: true}}},
		{"an upload bringing 320 KiB every 10 s is never cut", []step{
			r(quota), end, r(quota / 2), r(quota / 2), end, r(quota), end, {eof: true}, {read: 1}}},
		{"a burst does not carry into the next period", []step{
			r(10 << 20), end, r(1), end, {read: 1, wantCuts: 1, wantError: true}}},
		{"a body that ends within its first period is not cut", []step{
			r(100), {eof: true}, end, {read: 1}}},
		{"no period is checked after the handler stops reading", []step{
			r(1), {stop: true}, end, {read: 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			timers := newFakeTimers()
			src := &endless{}
			cuts := 0
			b := newPacedBody(src, DefaultUploadGrace, DefaultUploadMinRate, timers.after, func() { cuts++ })
			var ends []func()
			for i, st := range tc.steps {
				// Every period the body armed, in order.
				for len(timers.armed) > 0 {
					ends = append(ends, <-timers.armed)
				}
				var err error
				switch {
				case st.end:
					if len(ends) == 0 {
						t.Fatalf("step %d: no period armed", i)
					}
					ends[0]()
					ends = ends[1:]
				case st.eof:
					src.eof = true
					if _, err = b.Read(make([]byte, 10)); err != io.EOF {
						t.Fatalf("step %d: read at the end: %v", i, err)
					}
					src.eof = false // what a client could still send is not read by the handler
				case st.stop:
					b.stop()
				default:
					_, err = b.Read(make([]byte, st.read))
				}
				if st.end || st.stop || st.eof {
					continue
				}
				if cuts != st.wantCuts {
					t.Fatalf("step %d: %d cuts, want %d", i, cuts, st.wantCuts)
				}
				var slow *uploadTooSlowError
				if got := errors.As(err, &slow); got != st.wantError {
					t.Fatalf("step %d: read error %v, want the pace's: %v", i, err, st.wantError)
				}
				if slow != nil && slow.Error() != "upload too slow: under 320 KiB in 10s (32 KiB/s averaged); cut" {
					t.Fatalf("the error says %q", slow.Error())
				}
			}
		})
	}
}

// Two trickling uploads from one address cannot take both slots: the
// second is refused at once, another address's ordinary upload goes
// through while the first still holds its slot, and when the first's 10 s
// end short of 320 KiB it is cut with 408 (its pending read ended by the
// connection's read deadline) and its slot is free again. A real loopback
// server; the period's end is the test's, so nothing waits on time.
// (Before, two trickling uploads held both slots for up to five minutes.)
func TestATricklingUploadIsCutAndAnotherAddressUploadsMeanwhile(t *testing.T) {
	db, err := store.Open(context.Background(), store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(db, Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	timers := newFakeTimers()
	s.uploadGate().after = timers.after
	ts := httptest.NewServer(s)
	defer ts.Close()
	other := dialFrom(t, "127.0.0.2") // another client address on the loopback

	// The trickling upload from 127.0.0.1: its parts' headers, one byte
	// of the file, then nothing.
	pr, pw := io.Pipe()
	defer pw.Close()
	mw := multipart.NewWriter(pw)
	slow := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/gold", pr)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
		}
		slow <- resp
	}()
	fw, _ := mw.CreateFormFile("gold", "gold.jsonl")
	fw.Write([]byte("{"))
	endFirstPeriod := <-timers.armed // it holds a slot: its pace has started

	t.Run("a second upload from the same address is refused at once", func(t *testing.T) {
		resp := postGold(t, http.DefaultClient, ts.URL, "x")
		if resp.status != http.StatusServiceUnavailable || resp.retryAfter != "10" ||
			!strings.Contains(resp.body, "이 주소에서 보낸 다른 올리기를 처리하는 중입니다(한 주소에 1개까지)") {
			t.Fatalf("%d Retry-After %q\n%s", resp.status, resp.retryAfter, resp.body)
		}
	})
	t.Run("a second upload from the same address that trickles too is refused at once, not after its body", func(t *testing.T) {
		pr2, pw2 := io.Pipe()
		defer pw2.Close()
		mw2 := multipart.NewWriter(pw2)
		got := make(chan int, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/gold", pr2)
			req.Header.Set("Content-Type", mw2.FormDataContentType())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				got <- 0
				return
			}
			resp.Body.Close()
			got <- resp.StatusCode
		}()
		fw2, _ := mw2.CreateFormFile("gold", "gold.jsonl")
		fw2.Write([]byte("{")) // and nothing more while the answer is awaited
		select {
		case st := <-got:
			if st != http.StatusServiceUnavailable {
				t.Fatalf("%d, want 503", st)
			}
		case <-time.After(time.Minute): // a bound on a hang, not a wait: the answer comes at once
			t.Fatal("no answer while the refused body trickles: the server drains it first")
		}
	})
	t.Run("another address's upload goes through while the trickle holds its slot", func(t *testing.T) {
		if n := s.uploadGate().inFlight(); n != 1 {
			t.Fatalf("%d uploads in flight, want the trickle's", n)
		}
		resp := postGold(t, other, ts.URL, csrfOf(t, other, ts.URL))
		if resp.status != http.StatusSeeOther {
			t.Fatalf("%d\n%s", resp.status, resp.body)
		}
		<-timers.armed // its own pace, never ended
	})
	t.Run("at the end of its first 10 s the trickle is cut with 408 and frees its slot", func(t *testing.T) {
		endFirstPeriod()
		resp := <-slow
		if resp == nil {
			t.FailNow()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "올리기가 너무 느립니다") ||
			!strings.Contains(string(b), "올리기는 10초마다 320 KiB(평균 32 KiB/s) 이상 보내야 하는데, 그보다 느려 끊었습니다") {
			t.Fatalf("%d\n%s", resp.StatusCode, b)
		}
		if n := s.uploadGate().inFlight(); n != 0 {
			t.Fatalf("%d uploads in flight after the cut", n)
		}
		if resp := postGold(t, jarClient(), ts.URL, "x"); resp.status != http.StatusForbidden { // read, then its made-up CSRF token refused
			t.Fatalf("an upload from the cut address afterwards: %d\n%s", resp.status, resp.body)
		}
	})
}

// dialFrom is a client whose connections leave from local address ip (any
// 127.x.y.z is loopback on Linux); the test is skipped where that address
// cannot be bound.
func dialFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("%s cannot be bound here (%v): no second loopback address for another client", ip, err)
	}
	ln.Close()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c := jarClient()
	c.Transport = &http.Transport{DialContext: d.DialContext}
	return c
}

func jarClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	resp, err := c.Get(base + "/upload")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := csrfField.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no csrf token on /upload: %d", resp.StatusCode)
	}
	return string(m[1])
}

type answer struct {
	status           int
	retryAfter, body string
}

// postGold uploads a one-label gold file with csrf.
func postGold(t *testing.T, c *http.Client, base, csrf string) answer {
	t.Helper()
	var body strings.Builder
	mw := multipart.NewWriter(&body)
	mw.WriteField("csrf", csrf)
	fw, _ := mw.CreateFormFile("gold", "gold.jsonl")
	io.WriteString(fw, `{"turn_id":"T-0001","verdict":"설정대로 말함"}`+"\n")
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/gold", strings.NewReader(body.String()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header.Get("Retry-After"), string(b)}
}
