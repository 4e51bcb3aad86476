package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"evident/crystal"
	"evident/crystal/report"
	"evident/crystal/run"
	"evident/llm"
	"evident/llm/llmtest"
)

const (
	model     = "vlm-x"
	goodReply = `{"reasoning_steps": ["The blue bar reaches 7 units.", "The blue bar is the tallest."], "answer": "B"}`
)

// sleeps records the waits a fake Sleep was asked for; it never sleeps.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// fake starts a fake OpenAI-compatible server with script and a robust
// client on it whose backoff waits are recorded, not slept.
func fake(t *testing.T, timeout time.Duration, script ...llmtest.Reply) (*llmtest.Server, *llm.Robust, *sleeps) {
	t.Helper()
	srv := llmtest.NewOpenAI(t, script...)
	c, err := llm.NewOpenAI(llm.Options{BaseURL: srv.URL, Model: model, APIKeyEnv: "EVIDENT_TEST_NO_SUCH_KEY", Format: llm.FormatNone})
	if err != nil {
		t.Fatal(err)
	}
	s := &sleeps{}
	return srv, llm.Wrap(c, llm.Policy{Concurrency: 4, Timeout: timeout, Sleep: s.sleep, Rand: func() float64 { return 0.5 }}), s
}

func chat(text string) llmtest.Reply { return llmtest.Reply{Body: llmtest.OpenAIChat(text, 100, 20)} }

// pngOf draws a w×h gradient PNG.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// items writes an image of w×h into a temporary directory and returns n
// items q1…qn that use it, and the directory.
func items(t *testing.T, n, w, h int) ([]crystal.Item, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "img"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "img", "chart.png"), pngOf(t, w, h), 0o644); err != nil {
		t.Fatal(err)
	}
	var out []crystal.Item
	for k := range n {
		id := "q" + string(rune('1'+k))
		out = append(out, crystal.Item{ID: id, Image: "img/chart.png", Question: "Question " + id + ": which bar is the tallest?",
			Options: []string{"red", "blue", "green"}, Answer: "B", ReferenceSteps: []string{"The blue bar is the tallest."}})
	}
	return out, dir
}

// sent is the part of a recorded chat request the tests look at.
type sent struct {
	Model       string   `json:"model"`
	Temperature *float64 `json:"temperature"`
	Messages    []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// decode returns the request's system text, user text and image URLs.
func decode(t *testing.T, r llmtest.Recorded) (s sent, system, user string, images []string) {
	t.Helper()
	if err := r.Decode(&s); err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				t.Fatal(err)
			}
			for _, p := range parts {
				switch p.Type {
				case "text":
					text += p.Text
				case "image_url":
					images = append(images, p.ImageURL.URL)
				}
			}
		}
		switch m.Role {
		case "system":
			system = text
		case "user":
			user = text
		}
	}
	return s, system, user, images
}

// imageSize decodes a data URI's image and returns its size.
func imageSize(t *testing.T, uri string) (int, int) {
	t.Helper()
	im, err := run.ParseDataURI(uri)
	if err != nil {
		t.Fatal(err)
	}
	w, h, err := im.Size()
	if err != nil {
		t.Fatal(err)
	}
	return w, h
}

// lines reads the written predictions as score does.
func lines(t *testing.T, out []byte) []report.Prediction {
	t.Helper()
	preds, err := report.ReadPredictions(bytes.NewReader(out), "out.jsonl", "unnamed")
	if err != nil {
		t.Fatalf("score cannot read the output: %v\n%s", err, out)
	}
	return preds
}

func runOne(t *testing.T, client llm.Client, its []crystal.Item, dir string) (run.Tally, []byte) {
	t.Helper()
	var out bytes.Buffer
	tally, err := run.Run(context.Background(), its, run.Config{Client: client, Model: model, Images: run.DirImages(dir), Out: &out, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	return tally, out.Bytes()
}

func TestRun(t *testing.T) {
	t.Run("a good reply is written as a raw reply line that score reads", func(t *testing.T) {
		srv, client, _ := fake(t, time.Minute, chat(goodReply))
		its, dir := items(t, 1, 64, 48)
		tally, out := runOne(t, client, its, dir)
		var l run.Line
		if err := json.Unmarshal(out, &l); err != nil {
			t.Fatal(err)
		}
		if l.ID != "q1" || l.Model != model || l.Reply != goodReply || l.InputTokens != 100 || l.OutputTokens != 20 || l.FinishReason != "stop" {
			t.Errorf("line %+v", l)
		}
		p := lines(t, out)
		if len(p) != 1 || p[0].Reply.Answer != "B" || len(p[0].Reply.Steps) != 2 || p[0].Reply.Unparseable || p[0].Reply.Repaired {
			t.Errorf("score reads %+v", p)
		}
		if tally.Answered != 1 || tally.Failed != 0 || srv.Count() != 1 {
			t.Errorf("tally %v, %d requests", tally, srv.Count())
		}
	})

	t.Run("a fenced JSON reply is written as is and score repairs it", func(t *testing.T) {
		fenced := "Here you go:\n```json\n" + goodReply + "\n```"
		_, client, _ := fake(t, time.Minute, chat(fenced))
		its, dir := items(t, 1, 64, 48)
		tally, out := runOne(t, client, its, dir)
		p := lines(t, out)
		if len(p) != 1 || p[0].Reply.Answer != "B" || !p[0].Reply.Repaired || p[0].Reply.Unparseable {
			t.Errorf("score reads %+v", p)
		}
		if !strings.Contains(string(out), `"reply":"Here you go:\n`+"```json") {
			t.Errorf("the raw reply is not kept: %s", out)
		}
		if tally.Unparseable != 0 {
			t.Errorf("tally %v", tally)
		}
	})

	t.Run("a garbage reply is written and score flags it unparseable", func(t *testing.T) {
		_, client, _ := fake(t, time.Minute, chat("I think it is probably the blue one, but who knows."))
		its, dir := items(t, 1, 64, 48)
		tally, out := runOne(t, client, its, dir)
		p := lines(t, out)
		if len(p) != 1 || !p[0].Reply.Unparseable || p[0].Reply.Answer != crystal.InsufficientInformation {
			t.Errorf("score reads %+v", p)
		}
		if tally.Answered != 1 || tally.Unparseable != 1 {
			t.Errorf("tally %v", tally)
		}
	})

	t.Run("a 429 is retried after the Retry-After the server asked for", func(t *testing.T) {
		srv, client, s := fake(t, time.Minute,
			llmtest.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"7"}}},
			chat(goodReply))
		its, dir := items(t, 1, 64, 48)
		tally, out := runOne(t, client, its, dir)
		if w := s.waits(); len(w) != 1 || w[0] != 7*time.Second {
			t.Errorf("waits %v, want [7s]", w)
		}
		if srv.Count() != 2 || tally.Answered != 1 || len(lines(t, out)) != 1 || client.Tally().Retries != 1 {
			t.Errorf("%d requests, tally %v, client %v", srv.Count(), tally, client.Tally())
		}
	})

	t.Run("a timed-out try is retried", func(t *testing.T) {
		srv, client, s := fake(t, 300*time.Millisecond,
			llmtest.Reply{Delay: time.Minute, Body: llmtest.OpenAIChat(goodReply, 1, 1)},
			chat(goodReply))
		its, dir := items(t, 1, 64, 48)
		tally, out := runOne(t, client, its, dir)
		if srv.Count() != 2 || tally.Answered != 1 || len(lines(t, out)) != 1 {
			t.Errorf("%d requests, tally %v", srv.Count(), tally)
		}
		if w := s.waits(); len(w) != 1 {
			t.Errorf("backoff waits %v, want one (recorded, not slept)", w)
		}
	})

	t.Run("an image refused as too large is sent once more downscaled to 1024 px", func(t *testing.T) {
		srv, client, _ := fake(t, time.Minute,
			llmtest.Reply{Status: http.StatusBadRequest, Body: llmtest.OpenAIError("invalid_request_error", "Image size exceeds the limit: image too large")},
			chat(goodReply))
		its, dir := items(t, 1, 1280, 960)
		tally, out := runOne(t, client, its, dir)
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		_, _, _, first := decode(t, reqs[0])
		_, _, _, second := decode(t, reqs[1])
		if len(first) != 1 || len(second) != 1 {
			t.Fatalf("images %d and %d", len(first), len(second))
		}
		if w, h := imageSize(t, first[0]); w != 1280 || h != 960 {
			t.Errorf("first request's image is %d×%d, want the original 1280×960", w, h)
		}
		if w, h := imageSize(t, second[0]); max(w, h) > crystal.RetryMaxImageSide || w != 1024 || h != 768 {
			t.Errorf("second request's image is %d×%d, want 1024×768", w, h)
		}
		var l run.Line
		if err := json.Unmarshal(out, &l); err != nil {
			t.Fatal(err)
		}
		if !l.Downscaled || l.ImageSize != "1280×960→1024×768" || l.Reply != goodReply || tally.Downscaled != 1 {
			t.Errorf("line %+v, tally %v", l, tally)
		}
	})

	t.Run("a too-large refusal of an image already within 1024 px fails the item without a retry", func(t *testing.T) {
		srv, client, _ := fake(t, time.Minute,
			llmtest.Reply{Status: http.StatusRequestEntityTooLarge}, chat(goodReply))
		its, dir := items(t, 1, 800, 600)
		var out bytes.Buffer
		var failed []run.Outcome
		tally, err := run.Run(context.Background(), its, run.Config{Client: client, Model: model, Images: run.DirImages(dir), Out: &out,
			Done: func(o run.Outcome) { failed = append(failed, o) }})
		if err != nil {
			t.Fatal(err)
		}
		if srv.Count() != 1 || out.Len() != 0 || tally.Failed != 1 || len(failed) != 1 ||
			failed[0].Err == nil || !strings.Contains(failed[0].Err.Error(), "already within 1024 px") {
			t.Errorf("%d requests, output %q, tally %v, outcomes %+v", srv.Count(), out.String(), tally, failed)
		}
	})

	t.Run("a failed item is not written, counts as failed and the others go on", func(t *testing.T) {
		_, client, _ := fake(t, time.Minute,
			llmtest.Reply{Status: http.StatusBadRequest, Body: llmtest.OpenAIError("invalid_request_error", "unknown parameter")},
			chat(goodReply))
		its, dir := items(t, 3, 64, 48)
		tally, out := runOne(t, client, its, dir)
		p := lines(t, out)
		if len(p) != 2 || p[0].ID != "q2" || p[1].ID != "q3" || tally.Failed != 1 || tally.Answered != 2 {
			t.Errorf("lines %+v, tally %v", p, tally)
		}
	})

	t.Run("a refused answer is written as an empty reply with a note and scores unparseable", func(t *testing.T) {
		_, client, _ := fake(t, time.Minute, llmtest.Reply{Body: llmtest.OpenAIRefusal("I cannot help with that.")})
		its, dir := items(t, 1, 64, 48)
		tally, out := runOne(t, client, its, dir)
		var l run.Line
		if err := json.Unmarshal(out, &l); err != nil {
			t.Fatal(err)
		}
		p := lines(t, out)
		if l.Reply != "" || !strings.Contains(l.Note, "refused") || len(p) != 1 || !p[0].Reply.Unparseable || tally.Unparseable != 1 {
			t.Errorf("line %+v, score reads %+v, tally %v", l, p, tally)
		}
	})

	t.Run("resume skips the ids already answered", func(t *testing.T) {
		srv, client, _ := fake(t, time.Minute, chat(goodReply))
		its, dir := items(t, 4, 64, 48)
		path := filepath.Join(dir, "preds.jsonl")
		before := `{"id":"q1","model":"vlm-x","reply":"{}"}` + "\n" +
			`{"id":"q2","model":"other-model","reply":"{}"}` + "\n" +
			`{"id":"q3","model":"vlm-x","reply":"{}"}` // no newline: a valid last line
		if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
			t.Fatal(err)
		}
		f, res, err := run.OpenPreds(path, model)
		if err != nil {
			t.Fatal(err)
		}
		tally, err := run.Run(context.Background(), its, run.Config{Client: client, Model: model, Images: run.DirImages(dir), Out: f,
			Skip: res.Answered, Concurrency: 1})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		var asked []string
		for _, r := range srv.Requests() {
			_, _, user, _ := decode(t, r)
			asked = append(asked, strings.Fields(user)[1])
		}
		if strings.Join(asked, " ") != "q2: q4:" {
			t.Errorf("the server was asked %v, want only q2 and q4", asked)
		}
		if tally.Skipped != 2 || tally.Answered != 2 || res.Lines != 3 || res.Others != 1 {
			t.Errorf("tally %v, resume %+v", tally, res)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), before+"\n") {
			t.Errorf("the old lines were not kept as they were:\n%s", b)
		}
		runs, err := report.ReadPredictionFiles(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 || runs[0].Model != model || len(runs[0].Replies) != 4 {
			t.Errorf("runs %+v", runs)
		}
	})

	t.Run("the request carries the seed system prompt, temperature 0.1, lettered options and an image data URI", func(t *testing.T) {
		srv, client, _ := fake(t, time.Minute, chat(goodReply))
		its, dir := items(t, 1, 64, 48)
		runOne(t, client, its, dir)
		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d requests", len(reqs))
		}
		s, system, user, images := decode(t, reqs[0])
		if system != crystal.SystemPrompt {
			t.Errorf("system prompt %q", system)
		}
		if s.Temperature == nil || *s.Temperature != 0.1 || s.Model != model {
			t.Errorf("model %q, temperature %v", s.Model, s.Temperature)
		}
		if want := "Question q1: which bar is the tallest?\nA) red\nB) blue\nC) green"; user != want {
			t.Errorf("user text %q, want %q", user, want)
		}
		if len(images) != 1 || !strings.HasPrefix(images[0], "data:image/png;base64,") {
			t.Fatalf("images %.60q", images)
		}
		if w, h := imageSize(t, images[0]); w != 64 || h != 48 {
			t.Errorf("image %d×%d", w, h)
		}
		if strings.Contains(string(reqs[0].Body), "response_format") {
			t.Errorf("a response_format was sent: %s", reqs[0].Body)
		}
	})

	t.Run("requests start 1/rps apart", func(t *testing.T) {
		srv, client, _ := fake(t, time.Minute, chat(goodReply))
		its, dir := items(t, 3, 64, 48)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var waits []time.Duration
		var out bytes.Buffer
		_, err := run.Run(context.Background(), its, run.Config{Client: client, Model: model, Images: run.DirImages(dir), Out: &out,
			Concurrency: 1, RPS: 4,
			Now:   func() time.Time { return now }, // the clock stands still: each request waits its turn
			Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if len(waits) != 2 || waits[0] != 250*time.Millisecond || waits[1] != 500*time.Millisecond || srv.Count() != 3 {
			t.Errorf("waits %v, %d requests; want [250ms 500ms], 3", waits, srv.Count())
		}
	})

	t.Run("no more items are in flight than the concurrency", func(t *testing.T) {
		srv, client, _ := fake(t, time.Minute, llmtest.Reply{Delay: 20 * time.Millisecond, Body: llmtest.OpenAIChat(goodReply, 1, 1)})
		its, dir := items(t, 6, 64, 48)
		var out bytes.Buffer
		tally, err := run.Run(context.Background(), its, run.Config{Client: client, Model: model, Images: run.DirImages(dir), Out: &out, Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		if srv.MaxInFlight() > 2 || tally.Answered != 6 || len(lines(t, out.Bytes())) != 6 {
			t.Errorf("peak %d, tally %v", srv.MaxInFlight(), tally)
		}
	})

	t.Run("a missing image fails its item with ErrImage and sends nothing", func(t *testing.T) {
		srv, client, _ := fake(t, time.Minute, chat(goodReply))
		its, dir := items(t, 1, 64, 48)
		its[0].Image = "img/nope.png"
		var got error
		tally, err := run.Run(context.Background(), its, run.Config{Client: client, Model: model, Images: run.DirImages(dir), Out: &bytes.Buffer{},
			Done: func(o run.Outcome) { got = o.Err }})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(got, run.ErrImage) || srv.Count() != 0 || tally.Failed != 1 {
			t.Errorf("err %v, %d requests, tally %v", got, srv.Count(), tally)
		}
	})

	t.Run("a bad configuration is refused with ErrConfig", func(t *testing.T) {
		_, client, _ := fake(t, time.Minute)
		for _, cfg := range []run.Config{{Model: model, Out: &bytes.Buffer{}}, {Client: client, Out: &bytes.Buffer{}},
			{Client: client, Model: model}, {Client: client, Model: model, Out: &bytes.Buffer{}, RPS: -1}} {
			if _, err := run.Run(context.Background(), nil, cfg); !errors.Is(err, run.ErrConfig) {
				t.Errorf("%+v: err %v", cfg, err)
			}
		}
	})
}
