package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"evident/crystal"
	"evident/internal/backoff"
	"evident/llm"
)

// ErrConfig reports a Config that cannot run: no client, no model name, no
// output, a negative or NaN rate.
var ErrConfig = errors.New("crystal run: bad configuration")

// Line is one record of the predictions file, JSON Lines, in the raw-reply
// form that evident/crystal/report.ReadPredictions reads (`evident crystal
// score --preds`): {"id", "model", "reply"}; the other fields are evidence of
// how the reply was obtained and are ignored by the scorer.
type Line struct {
	ID    string `json:"id"`
	Model string `json:"model"`
	// Reply is the model's raw text, unparsed; crystal.ParseReply reads it
	// when scoring (a refused or empty answer is written as "" and scores as
	// unparseable).
	Reply string `json:"reply"`
	// Downscaled: the server refused the original image as too large
	// (TooLarge) and Reply answers the one retry with the image downscaled
	// to at most crystal.RetryMaxImageSide pixels; ImageSize is then
	// "W×H→w×h".
	Downscaled bool   `json:"downscaled,omitempty"`
	ImageSize  string `json:"image_size,omitempty"`
	// ServedModel is the model name the server reported, when it differs
	// from Model.
	ServedModel string `json:"served_model,omitempty"`
	// FinishReason is the server's finish reason ("stop", "length", …).
	FinishReason string `json:"finish_reason,omitempty"`
	// InputTokens and OutputTokens are the usage the server reported.
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
	// Note says why Reply is empty: the model refused, or sent no content.
	Note string `json:"note,omitempty"`
}

// Outcome is what became of one item, passed to Config.Done.
type Outcome struct {
	ID string
	// Err is why no line was written (the call failed after its retries,
	// the image could not be read, the context ended); nil when Line was
	// written.
	Err error
	// Line is the record written, when Err is nil.
	Line Line
	// Unparseable: the written reply is one crystal.ParseReply cannot read
	// (score will flag it).
	Unparseable bool
}

// Tally counts a run, for the final report.
type Tally struct {
	// Items is the number of items given; Skipped of those already answered
	// (Config.Skip); Answered of those written this run; Downscaled of
	// those answered on the downscaled-image retry; Unparseable of those
	// written whose reply crystal.ParseReply cannot read; Failed of those
	// with no line written (rerun with the same output file to retry them).
	Items, Skipped, Answered, Downscaled, Unparseable, Failed int
}

// String is the one-line tally.
func (t Tally) String() string {
	return fmt.Sprintf("items %d: answered %d (downscaled %d, unparseable %d), skipped %d already answered, failed %d",
		t.Items, t.Answered, t.Downscaled, t.Unparseable, t.Skipped, t.Failed)
}

// Config parameterises Run. Zero values take the defaults named.
type Config struct {
	// Client sends the requests; required. Wrap it with llm.Wrap for
	// retries on 429/5xx/timeouts (Retry-After honoured) and a per-try
	// timeout: Run itself retries only an image refused as too large.
	Client llm.Client
	// Model is the name written in every line's "model"; required.
	Model string
	// Images resolves an item's image field; nil means DirImages(".").
	Images ImageSource
	// Out receives the lines, one Write call per line (JSON + "\n"), in
	// the order items finish; required. Writes are serialised.
	Out io.Writer
	// Skip holds ids already answered; those items are not sent.
	Skip map[string]bool
	// Concurrency is the number of items in flight at once (default 4).
	Concurrency int
	// RPS limits requests per second, the downscaled retry included
	// (retries inside Client are spaced by its own backoff); 0 means no
	// limit. It is a token bucket of capacity 1: requests start at least
	// 1/RPS apart.
	RPS float64
	// MaxImageSide is the longer side of the downscaled retry image
	// (default crystal.RetryMaxImageSide, 1024).
	MaxImageSide int
	// Done is called once per item sent, after its line is written (or its
	// failure known), from the item's goroutine; it must be safe for
	// concurrent use. nil for none.
	Done func(Outcome)
	// Now and Sleep are the rate limiter's clock and wait (defaults
	// time.Now and a timer that ctx ends); tests inject fakes.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Run sends every item not in cfg.Skip to cfg.Client — the seed's system
// prompt, temperature 0.1, the question with lettered options and the image
// (Request) — and writes one Line per answered item to cfg.Out. When the
// server refuses an image as too large (TooLarge) and the image is larger
// than cfg.MaxImageSide on its longer side, the item is tried once more with
// the image downscaled (Shrink); this is the authors' one retry (spec
// crystal.md "Prompt and parsing").
//
// A failed item is not written (so a rerun with the same output retries it)
// and counts in Tally.Failed; it is not an error of Run. Run returns an
// error only for a bad Config (ErrConfig), a write to cfg.Out that fails
// (the run stops), or ctx ending (items not yet finished are not written).
func Run(ctx context.Context, items []crystal.Item, cfg Config) (Tally, error) {
	t := Tally{Items: len(items)}
	switch {
	case cfg.Client == nil:
		return t, fmt.Errorf("%w: no client", ErrConfig)
	case cfg.Model == "":
		return t, fmt.Errorf("%w: no model name", ErrConfig)
	case cfg.Out == nil:
		return t, fmt.Errorf("%w: no output", ErrConfig)
	case !(cfg.RPS >= 0):
		return t, fmt.Errorf("%w: rate %v", ErrConfig, cfg.RPS)
	}
	if cfg.Images == nil {
		cfg.Images = DirImages(".")
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.MaxImageSide <= 0 {
		cfg.MaxImageSide = crystal.RetryMaxImageSide
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = backoff.Sleep
	}
	r := &runner{cfg: cfg, lim: newLimiter(cfg.RPS, cfg.Now, cfg.Sleep)}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan crystal.Item)
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Go(func() {
			for it := range jobs {
				if err := r.item(ctx, it); err != nil {
					r.stop(err)
					cancel()
				}
			}
		})
	}
feed:
	for _, it := range items {
		if cfg.Skip[it.ID] {
			t.Skipped++
			continue
		}
		select {
		case jobs <- it:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()

	r.mu.Lock()
	defer r.mu.Unlock()
	t.Answered, t.Downscaled, t.Unparseable, t.Failed = r.t.Answered, r.t.Downscaled, r.t.Unparseable, r.t.Failed
	if r.err != nil {
		return t, r.err
	}
	return t, context.Cause(ctx)
}

type runner struct {
	cfg Config
	lim *limiter

	mu  sync.Mutex // guards t, err and writes to cfg.Out
	t   Tally
	err error
}

func (r *runner) stop(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// item answers one item; its error is fatal to the run (a failed write).
func (r *runner) item(ctx context.Context, it crystal.Item) error {
	line, err := r.ask(ctx, it)
	out := Outcome{ID: it.ID, Err: err, Line: line}
	if err != nil && ctx.Err() != nil {
		return nil // the run is ending; the item is neither written nor counted
	}
	if err == nil {
		out.Unparseable = crystal.ParseReply(line.Reply).Unparseable
	}
	r.mu.Lock()
	if err == nil {
		if werr := r.write(line); werr != nil {
			r.mu.Unlock()
			return werr
		}
		r.t.Answered++
		if line.Downscaled {
			r.t.Downscaled++
		}
		if out.Unparseable {
			r.t.Unparseable++
		}
	} else {
		r.t.Failed++
	}
	r.mu.Unlock()
	if r.cfg.Done != nil {
		r.cfg.Done(out)
	}
	return nil
}

// write encodes line as one JSON line and writes it in one call (r.mu held).
func (r *runner) write(line Line) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(line); err != nil {
		return err
	}
	if _, err := io.WriteString(r.cfg.Out, b.String()); err != nil {
		return fmt.Errorf("crystal run: writing item %s: %w", line.ID, err)
	}
	return nil
}

// ask sends one item, with the downscaled retry, and builds its line.
func (r *runner) ask(ctx context.Context, it crystal.Item) (Line, error) {
	line := Line{ID: it.ID, Model: r.cfg.Model}
	var img Image
	if it.Image != "" {
		var err error
		if img, err = r.cfg.Images(it.Image); err != nil {
			return line, fmt.Errorf("item %s: %w", it.ID, err)
		}
	}
	uri := ""
	if it.Image != "" {
		uri = img.URI()
	}
	resp, err := r.call(ctx, Request(it, uri))
	if err != nil && it.Image != "" && TooLarge(err) {
		small, size, serr := r.shrink(img)
		if serr != nil {
			return line, fmt.Errorf("item %s: %w; not retried: %w", it.ID, err, serr)
		}
		line.Downscaled, line.ImageSize = true, size
		resp, err = r.call(ctx, Request(it, small.URI()))
		if err != nil {
			err = fmt.Errorf("retry with the image downscaled to %s: %w", size, err)
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, llm.ErrRefused) || errors.Is(err, llm.ErrEmpty):
		// The model's answer, though not a usable one: written as an empty
		// reply so that score counts it unparseable, and a rerun does not
		// ask again.
		line.Note = err.Error()
	default:
		return line, fmt.Errorf("item %s: %w", it.ID, err)
	}
	line.Reply = resp.Text
	if resp.Model != "" && resp.Model != r.cfg.Model {
		line.ServedModel = resp.Model
	}
	line.FinishReason = resp.StopReason
	line.InputTokens, line.OutputTokens = resp.InputTokens, resp.OutputTokens
	return line, nil
}

// shrink downscales img for the retry; it refuses an image that is already
// small enough (the retry would send the same picture) or cannot be decoded.
func (r *runner) shrink(img Image) (Image, string, error) {
	w, h, err := img.Size()
	if err != nil {
		return Image{}, "", err
	}
	if max(w, h) <= r.cfg.MaxImageSide {
		return Image{}, "", fmt.Errorf("the image is %d×%d, already within %d px", w, h, r.cfg.MaxImageSide)
	}
	small, _, err := Shrink(img, r.cfg.MaxImageSide)
	if err != nil {
		return Image{}, "", err
	}
	sw, sh, err := small.Size()
	if err != nil {
		return Image{}, "", err
	}
	return small, fmt.Sprintf("%d×%d→%d×%d", w, h, sw, sh), nil
}

func (r *runner) call(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := r.lim.wait(ctx); err != nil {
		return llm.Response{}, err
	}
	return r.cfg.Client.Complete(ctx, req)
}

// TooLarge reports whether err is a server refusing a request's image as too
// large — the condition for the one retry with a downscaled image. The rule
// (a decision; servers word this differently): err holds an *llm.APIError
// whose status is
//
//   - 413 Payload Too Large (the image is by far the largest part of the
//     request), or
//   - another 4xx except 408 and 429 (those are retried as they are) whose
//     message, lower-cased, mentions an image ("image", "picture" or
//     "pixel") and a size ("large", "big", "exceed", "size", "dimension",
//     "resolution", "maximum", "max ", "limit").
//
// For example "Image size exceeds the limit", "image dimensions exceed max
// allowed size: 8000 pixels", "Invalid image: too large". A 5xx, a timeout or
// a context-length error that does not mention the image is not TooLarge.
func TooLarge(err error) bool {
	var ae *llm.APIError
	if !errors.As(err, &ae) {
		return false
	}
	s := ae.StatusCode
	if s == http.StatusRequestEntityTooLarge {
		return true
	}
	if s < 400 || s >= 500 || s == http.StatusRequestTimeout || s == http.StatusTooManyRequests {
		return false
	}
	msg := strings.ToLower(ae.Message)
	return containsAny(msg, "image", "picture", "pixel") &&
		containsAny(msg, "large", "big", "exceed", "size", "dimension", "resolution", "maximum", "max ", "limit")
}

func containsAny(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// limiter is a token bucket of capacity 1 in GCRA form: each request is due
// one interval after the previous one's due time, or now if that has passed.
type limiter struct {
	interval time.Duration // 0: no limit
	now      func() time.Time
	sleep    func(context.Context, time.Duration) error

	mu   sync.Mutex
	next time.Time // when the next request may start
}

func newLimiter(rps float64, now func() time.Time, sleep func(context.Context, time.Duration) error) *limiter {
	l := &limiter{now: now, sleep: sleep}
	if rps > 0 {
		l.interval = time.Duration(float64(time.Second) / rps)
	}
	return l
}

// wait blocks until the caller may send a request (the slot is taken even
// when ctx ends during the wait).
func (l *limiter) wait(ctx context.Context) error {
	if l.interval <= 0 {
		return ctx.Err()
	}
	l.mu.Lock()
	now := l.now()
	if l.next.Before(now) {
		l.next = now
	}
	d := l.next.Sub(now)
	l.next = l.next.Add(l.interval)
	l.mu.Unlock()
	if d <= 0 {
		return ctx.Err()
	}
	return l.sleep(ctx, d)
}
