package web

// The upload pace (README "Security model", "The screen"): an upload that
// holds one of the MaxUploadsInFlight slots must keep bringing its body,
// or it is cut, so trickling clients cannot keep other uploads out.

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// The upload pace's defaults (Options.UploadGrace, Options.UploadMinRate;
// serve --upload-grace, --upload-min-rate).
const (
	// DefaultUploadGrace is the first period of an upload, from when it
	// takes its slot, and the length of each later one.
	DefaultUploadGrace = 10 * time.Second
	// DefaultUploadMinRate is the least an upload must bring, in bytes a
	// second averaged over each period (32 KiB/s: 320 KiB every 10 s,
	// 256 kbit/s, below any broadband or mobile uplink). An upload whose
	// body ends within a period is never cut for it.
	DefaultUploadMinRate = 32 << 10
)

// uploadTooSlowError is the error of a body cut by its pace: fewer than
// Quota bytes arrived in a Period.
type uploadTooSlowError struct {
	Period time.Duration
	Quota  int64
}

func (e *uploadTooSlowError) Error() string {
	return fmt.Sprintf("upload too slow: under %d KiB in %v (%d KiB/s averaged); cut",
		e.Quota>>10, e.Period, perSecond(e.Quota, e.Period)>>10)
}

// korean is the upload form's 408 detail.
func (e *uploadTooSlowError) korean() string {
	return fmt.Sprintf("올리기는 %d초마다 %d KiB(평균 %d KiB/s) 이상 보내야 하는데, 그보다 느려 끊었습니다(serve --upload-grace, --upload-min-rate). "+
		"연결이 느리면 evident import 로 가져오세요. 아무것도 가져오지 않았습니다.",
		int(e.Period/time.Second), e.Quota>>10, perSecond(e.Quota, e.Period)>>10)
}

func perSecond(quota int64, period time.Duration) int64 {
	return int64(float64(quota) / period.Seconds())
}

// afterFunc runs f once after d and returns a stop function
// (time.AfterFunc's); tests replace it to end periods without waiting.
type afterFunc func(d time.Duration, f func()) (stop func() bool)

func realAfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// pacedBody is an upload's request body under its pace: the body must
// bring at least quota bytes in each period, counted from when the upload
// took its slot, until it ends (EOF) or the handler stops reading (stop).
// At the end of a period short of its quota the pending read is cut
// through cut (the connection's read deadline set in the past, which
// net/http supports for HTTP/1 and HTTP/2), and every read from then on
// returns *uploadTooSlowError. Bytes beyond one period's quota do not count
// for the next, so a client cannot send a burst and then trickle.
type pacedBody struct {
	body   io.ReadCloser
	period time.Duration
	quota  int64
	after  afterFunc
	cut    func()

	mu       sync.Mutex
	got      int64 // bytes in this period
	done     bool
	tooSlow  *uploadTooSlowError
	stopTime func() bool
	restore  func() // run by stop; nil for none
}

// paceBody puts r's body under the pace of s's options and starts its
// first period; the caller stops it once the form is read.
func (s *Server) paceBody(w http.ResponseWriter, r *http.Request) *pacedBody {
	rc := http.NewResponseController(w)
	after := s.uploadGate().after
	if after == nil {
		after = realAfterFunc
	}
	orig := r.Body
	b := newPacedBody(orig, s.opt.UploadGrace, s.opt.UploadMinRate, after,
		func() { rc.SetReadDeadline(time.Unix(1, 0)) }) // ErrNotSupported: the next read fails instead
	r.Body = b
	// stop gives the request its own body back: net/http then knows what
	// of it is unread (a body it does not know it drains first, up to
	// 256 KiB, before it answers: a refused body that never came held the
	// answer back for the read timeout).
	b.restore = func() { r.Body = orig }
	return b
}

// newPacedBody puts body under a pace of rate bytes a second averaged
// over each period, and starts the first period.
func newPacedBody(body io.ReadCloser, period time.Duration, rate int64, after afterFunc, cut func()) *pacedBody {
	b := &pacedBody{body: body, period: period, quota: int64(float64(rate) * period.Seconds()), after: after, cut: cut}
	b.mu.Lock()
	b.stopTime = after(period, b.periodEnd)
	b.mu.Unlock()
	return b
}

// periodEnd checks the period that just ended and starts the next one.
func (b *pacedBody) periodEnd() {
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return
	}
	if b.got < b.quota {
		b.tooSlow = &uploadTooSlowError{Period: b.period, Quota: b.quota}
		b.done = true
		b.mu.Unlock()
		b.cut()
		return
	}
	b.got = 0
	b.stopTime = b.after(b.period, b.periodEnd)
	b.mu.Unlock()
}

func (b *pacedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if e := b.tooSlow; e != nil {
		b.mu.Unlock()
		return 0, e
	}
	b.mu.Unlock()
	n, err := b.body.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got += int64(n)
	if b.tooSlow != nil && err != nil && err != io.EOF { // the cut read
		return n, b.tooSlow
	}
	if err == io.EOF && !b.done {
		b.done = true
		b.stopTime()
	}
	return n, err
}

func (b *pacedBody) Close() error { return b.body.Close() }

// stop ends the pace (the handler has read what it needs): no period
// check comes after it, and the request has its own body again.
func (b *pacedBody) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.done = true
		b.stopTime()
	}
	if b.restore != nil {
		b.restore()
		b.restore = nil
	}
}
