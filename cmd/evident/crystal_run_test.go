package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/crystal/demo"
	"evident/crystal/report"
	"evident/crystal/run"
	"evident/llm"
	"evident/llm/llmtest"
)

const runReply = `{"reasoning_steps": ["The chart shows four bars.", "The blue bar reaches 7 units.", "The blue bar is the tallest."], "answer": "B"}`

// askedIDs maps the user text of every request the server got back to the
// item it came from (by question text) and returns the ids in arrival order.
func askedIDs(t *testing.T, srv *llmtest.Server, byQuestion map[string]string) []string {
	t.Helper()
	var ids []string
	for _, r := range srv.Requests() {
		var body struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := r.Decode(&body); err != nil {
			t.Fatal(err)
		}
		for _, m := range body.Messages {
			if m.Role != "user" {
				continue
			}
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				t.Fatalf("user content is not a list of parts (no image?): %s", m.Content)
			}
			for _, p := range parts {
				if p.Type == "text" {
					ids = append(ids, byQuestion[strings.SplitN(p.Text, "\n", 2)[0]])
				}
			}
		}
	}
	return ids
}

func demoQuestions(t *testing.T) map[string]string {
	t.Helper()
	items, err := demo.Items()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, it := range items {
		m[strings.SplitN(it.Question, "\n", 2)[0]] = it.ID
	}
	return m
}

func TestCrystalRun(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "") // no key leaves this machine, even to the fake server

	t.Run("the demo run writes one reply per item and score --demo --preds scores it", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Body: llmtest.OpenAIChat(runReply, 200, 40)})
		out := filepath.Join(t.TempDir(), "preds.jsonl")
		_, errOut, code := crystalRun(t, "run", "--demo", "--model", "vlm-x", "--base-url", srv.URL, "--out", out, "--concurrency", "3")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if srv.Count() != 15 || srv.MaxInFlight() > 3 {
			t.Errorf("%d requests (want 15), peak in flight %d (want ≤ 3)", srv.Count(), srv.MaxInFlight())
		}
		if !strings.Contains(errOut, "items 15: answered 15 (downscaled 0, unparseable 0), skipped 0 already answered, failed 0") ||
			!strings.Contains(errOut, "calls 15 (requests 15") ||
			!strings.Contains(errOut, "score with: evident crystal score --demo --preds "+out) {
			t.Errorf("stderr:\n%s", errOut)
		}
		runs, err := report.ReadPredictionFiles(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 || runs[0].Model != "vlm-x" || len(runs[0].Replies) != 15 {
			t.Fatalf("runs %+v", runs)
		}

		table, errOut, code := crystalRun(t, "score", "--demo", "--preds", out)
		if code != 0 {
			t.Fatalf("score: exit %d: %s", code, errOut)
		}
		if !strings.Contains(table, "vlm-x ") || !strings.Contains(table, "15 items") || strings.Contains(table, "lumen-7b") {
			t.Errorf("table:\n%s", table)
		}
		t.Logf("evident crystal score --demo --preds %s\n%s", filepath.Base(out), table)
	})

	t.Run("a second run with the same --out asks only for the items still missing", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Body: llmtest.OpenAIChat(runReply, 1, 1)})
		out := filepath.Join(t.TempDir(), "preds.jsonl")
		before := `{"id":"crys-001","model":"vlm-x","reply":"{}"}` + "\n" + `{"id":"crys-002","model":"vlm-x","reply":"{}"}` + "\n" +
			`{"id":"crys-003","model":"someone-else","reply":"{}"}` + "\n"
		if err := os.WriteFile(out, []byte(before), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := crystalRun(t, "run", "--demo", "--model", "vlm-x", "--base-url", srv.URL, "--out", out, "--concurrency", "1")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		asked := askedIDs(t, srv, demoQuestions(t))
		if len(asked) != 13 || asked[0] != "crys-003" || strings.Contains(strings.Join(asked, " "), "crys-001") ||
			strings.Contains(strings.Join(asked, " "), "crys-002") {
			t.Errorf("asked %v; want the 13 items other than crys-001 and crys-002", asked)
		}
		if !strings.Contains(errOut, "resuming "+out+": 2 of 15 items already answered by vlm-x") || !strings.Contains(errOut, "skipped 2") {
			t.Errorf("stderr:\n%s", errOut)
		}
		runs, err := report.ReadPredictionFiles(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 || len(runs[0].Replies) != 15 || len(runs[1].Replies) != 1 {
			t.Errorf("runs %+v", runs)
		}

		_, _, code = crystalRun(t, "run", "--demo", "--model", "vlm-x", "--base-url", srv.URL, "--out", out)
		if code != 0 || srv.Count() != 13 {
			t.Errorf("a third run: exit %d, %d requests in all; want nothing more asked", code, srv.Count())
		}
	})

	t.Run("a data file's images are read next to it and sent as data URIs and score --refs reads the output", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Body: llmtest.OpenAIChat(runReply, 1, 1)})
		dir := t.TempDir()
		img, err := demo.Images().Open("images/bars-colors.png")
		if err != nil {
			t.Fatal(err)
		}
		var png bytes.Buffer
		if _, err := png.ReadFrom(img); err != nil {
			t.Fatal(err)
		}
		img.Close()
		if err := os.MkdirAll(filepath.Join(dir, "pics"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pics", "bars.png"), png.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		uri := llm.ImageDataURI("image/png", png.Bytes())
		data := filepath.Join(dir, "items.jsonl")
		if err := os.WriteFile(data, []byte(
			`{"id": "t1", "image": "pics/bars.png", "question": "Which bar is the tallest?", "choices": ["red", "blue"], "answer": "B", "reference_steps": ["The blue bar is the tallest."]}`+"\n"+
				`{"id": "t2", "image": "`+uri+`", "question": "Which bar is the tallest?\nA) red\nB) blue", "answer": "A", "reference_steps": ["The red bar is the tallest."]}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "preds.jsonl")
		_, errOut, code := crystalRun(t, "run", "--data", data, "--model", "vlm-x", "--base-url", srv.URL, "--out", out, "--concurrency", "1")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for k, r := range srv.Requests() {
			if !bytes.Contains(r.Body, []byte(uri)) {
				t.Errorf("request %d does not carry the image as its data URI", k+1)
			}
			if want := `A) red\nB) blue`; !bytes.Contains(r.Body, []byte(want)) {
				t.Errorf("request %d lacks the lettered options: %.300s", k+1, r.Body)
			}
		}
		table, errOut, code := crystalRun(t, "score", "--refs", data, "--preds", out)
		if code != 0 || !strings.Contains(table, "50.00 %") || !strings.Contains(table, "2 items") {
			t.Errorf("score: exit %d %s\n%s", code, errOut, table)
		}
	})

	t.Run("without --out the lines go to stdout", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Body: llmtest.OpenAIChat(runReply, 1, 1)})
		stdout, errOut, code := crystalRun(t, "run", "--demo", "--model", "vlm-x", "--base-url", srv.URL)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		preds, err := report.ReadPredictions(strings.NewReader(stdout), "stdout", "")
		if err != nil || len(preds) != 15 {
			t.Errorf("%d predictions, %v", len(preds), err)
		}
		var l run.Line
		if err := json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &l); err != nil || l.Model != "vlm-x" || l.Reply != runReply {
			t.Errorf("first line %+v, %v", l, err)
		}
	})

	t.Run("failed items are reported, not written, and exit 1 saying how to retry them", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Status: http.StatusBadRequest, Body: llmtest.OpenAIError("invalid_request_error", "model does not support images")})
		out := filepath.Join(t.TempDir(), "preds.jsonl")
		_, errOut, code := crystalRun(t, "run", "--demo", "--model", "vlm-x", "--base-url", srv.URL, "--out", out)
		if code != 1 || !strings.Contains(errOut, "15 of 15 items failed; run again with the same --out to retry them") ||
			!strings.Contains(errOut, "model does not support images") || srv.Count() != 15 {
			t.Errorf("exit %d, %d requests, stderr:\n%s", code, srv.Count(), errOut)
		}
		if b, err := os.ReadFile(out); err != nil || len(b) != 0 {
			t.Errorf("output %q, %v; want an empty file", b, err)
		}
	})

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no model is refused", []string{"run", "--demo", "--base-url", "http://127.0.0.1:1/v1"}, "--model"},
		{"--demo with --data is refused", []string{"run", "--demo", "--data", "x.json", "--model", "m"}, "cannot be combined"},
		{"no input at all is refused", []string{"run", "--model", "m"}, "--data"},
		{"a missing data file names the file", []string{"run", "--data", filepath.Join(t.TempDir(), "nope.json"), "--model", "m"}, "nope.json"},
		{"a zero concurrency is refused", []string{"run", "--demo", "--model", "m", "--concurrency", "0"}, "--concurrency"},
		{"a negative rate is refused", []string{"run", "--demo", "--model", "m", "--rps", "-1"}, "--rps"},
		{"the public API without a key is refused before any call", []string{"run", "--demo", "--model", "m", "--api-key-env", "EVIDENT_TEST_NO_SUCH_KEY"}, "EVIDENT_TEST_NO_SUCH_KEY is not set"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := crystalRun(t, c.args...)
			if code != 2 || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 mentioning %q", code, errOut, c.want)
			}
		})
	}
}
