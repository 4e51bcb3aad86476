package llm

import (
	"fmt"
	"io"
	"net/http"
)

// DefaultMaxResponseBytes is the default cap on one answer's body: 4 MiB,
// far above any chat completion the judge or the CRYSTAL runner asks for
// (a few KiB) and far below what would hurt the machine with several calls
// in flight.
const DefaultMaxResponseBytes int64 = 4 << 20

// maxResponseBytes is o.MaxResponseBytes with its default.
func (o Options) maxResponseBytes() (int64, error) {
	switch {
	case o.MaxResponseBytes < 0:
		return 0, fmt.Errorf("max response bytes %d is negative", o.MaxResponseBytes)
	case o.MaxResponseBytes == 0:
		return DefaultMaxResponseBytes, nil
	}
	return o.MaxResponseBytes, nil
}

// capResponse is an SDK middleware (both SDKs share the signature) that
// refuses a response whose Content-Length passes limit and wraps every other
// body so that reading past limit fails with ErrTooLarge.
func capResponse(limit int64) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err != nil || resp == nil {
			return resp, err
		}
		if resp.ContentLength > limit {
			resp.Body.Close()
			return nil, fmt.Errorf("%w: Content-Length %d bytes, cap %d", ErrTooLarge, resp.ContentLength, limit)
		}
		resp.Body = &cappedBody{rc: resp.Body, left: limit, limit: limit}
		return resp, nil
	}
}

// cappedBody reads at most limit bytes of rc; one byte more is ErrTooLarge.
type cappedBody struct {
	rc          io.ReadCloser
	left, limit int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, b.limit)
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		b.rc.Close()
		return n + int(b.left), fmt.Errorf("%w: more than %d bytes", ErrTooLarge, b.limit)
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
