package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/llm/llmtest"
	"evident/persona/summarize"
	"evident/store"
)

const seedDir = "../../persona/testdata/seed"

func seedArgs() []string {
	return []string{"--turns", filepath.Join(seedDir, "turns.jsonl"), "--cards", filepath.Join(seedDir, "cards.json"),
		"--lexicon", filepath.Join(seedDir, "lexicon.csv")}
}

// ruleRecords judges the seed fixture without a summarizer and returns its
// records as generic maps, in input order.
func ruleRecords(t *testing.T) []map[string]any {
	t.Helper()
	out, _, err := evident(t, append([]string{"judge"}, seedArgs()...)...)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, m)
	}
	return recs
}

func sidecar(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("sidecar line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestJudgeSummarizer runs judge --summarizer openai against a fake server on
// loopback (one call at a time, so the script's order is the records'):
// answers that pass are used, the rest keep the rules' sentence, the sidecar
// says which and why, both tallies go to stderr, and a second run with the
// same --cache sends nothing and writes the same records.
func TestJudgeSummarizer(t *testing.T) {
	rules := ruleRecords(t)
	answer := func(i int, f func(m map[string]any)) llmtest.Reply {
		m := map[string]any{}
		for k, v := range rules[i] {
			m[k] = v
		}
		f(m)
		b, _ := json.Marshal(m)
		return llmtest.Reply{Body: llmtest.OpenAIChat(string(b), 1000, 50)}
	}
	good := func(m map[string]any) {
		m["summary"] = "모델이 규칙의 근거만으로 다시 쓴 한 줄 요약입니다."
	}
	script := []llmtest.Reply{
		answer(0, good),
		answer(1, func(m map[string]any) { good(m); m["verdict"] = "말투 어긋남" }),
		{Body: llmtest.OpenAIChat("요약을 쓸 수 없습니다", 1000, 50)},
		answer(3, func(m map[string]any) { m["summary"] = "카드에 없는 이름이 나왔다." }),
		answer(4, good),
		answer(5, func(m map[string]any) {
			m["summary"] = "「백결」이 앞 회차에 나왔는데 이번 답장에는 없습니다."
		}),
		answer(6, good),
		answer(7, good),
	}
	srv := llmtest.NewOpenAI(t, script...)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache.db")
	log := filepath.Join(dir, "summaries.jsonl")
	t.Setenv("EVIDENT_CLI_TEST_KEY", "sk-test-not-a-secret")
	args := append([]string{"judge"}, seedArgs()...)
	args = append(args, "--summarizer", "openai", "--model", "test-model", "--base-url", srv.URL, "--api-key-env", "EVIDENT_CLI_TEST_KEY",
		"--concurrency", "1", "--workers", "1", "--cache", cache, "--summary-log", log)
	out, errOut, err := evident(t, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	want := "judged 8 (금지 소재 접촉 1 · 세계관 밖 고유명사 1 · 말투 어긋남 2 · 앞 회차를 기억 못 함 1 · 설정대로 말함 3), rejected 0\n" +
		"summaries 8: calls 8 (requests 8, retries 0), cached 0, accepted 4, reverted 2 (check 10 1 · proper noun 1), discarded 2 (malformed JSON 1 · verdict differs 1), failed 0, tokens in 8000 out 400\n"
	if errOut != want {
		t.Errorf("stderr\n%s\nwant\n%s", errOut, want)
	}
	if n := strings.Count(out, "모델이 규칙의 근거만으로 다시 쓴 한 줄 요약입니다."); n != 4 {
		t.Errorf("%d model summaries in the records, want 4", n)
	}
	lines := sidecar(t, log)
	type line struct {
		source string
		by     any
	}
	wantLines := []line{{"model", nil}, {"rule", "discarded: verdict differs"}, {"rule", "discarded: malformed JSON"}, {"rule", "check 10"},
		{"model", nil}, {"rule", "proper noun"}, {"model", nil}, {"model", nil}}
	for i, l := range lines {
		if l["turn_id"] != rules[i]["turn_id"] || l["summary_source"] != wantLines[i].source || l["rejected_by"] != wantLines[i].by || l["cached"] != false {
			t.Errorf("sidecar %d: %v, want %v", i, l, wantLines[i])
		}
	}
	if len(lines) != 8 {
		t.Fatalf("%d sidecar lines", len(lines))
	}

	// The records pass evident check.
	vf := write(t, dir, "v.jsonl", out)
	if rep, _, err := evident(t, append(append([]string{"check"}, seedArgs()...), "--verdicts", vf)...); err != nil {
		t.Errorf("check: %v\n%s", err, rep)
	}

	// Re-run: everything comes from the cache.
	out2, errOut2, err := evident(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 8 {
		t.Errorf("re-run sent %d more requests", srv.Count()-8)
	}
	if out2 != out {
		t.Error("re-run wrote other records")
	}
	if !strings.Contains(errOut2, "summaries 8: calls 0 (requests 0, retries 0), cached 8, accepted 4,") {
		t.Errorf("re-run tally %s", errOut2)
	}
	for i, l := range sidecar(t, log) {
		if l["cached"] != true || l["summary_source"] != wantLines[i].source {
			t.Errorf("re-run sidecar %d: %v", i, l)
		}
	}
}

// TestJudgeSummaryLogWithoutSummarizer: the sidecar says "rule" for every
// record, and stderr has only the judge tally.
func TestJudgeSummaryLogWithoutSummarizer(t *testing.T) {
	log := filepath.Join(t.TempDir(), "s.jsonl")
	_, errOut, err := evident(t, "judge", "--demo", "--summary-log", log)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr %q", errOut)
	}
	lines := sidecar(t, log)
	if len(lines) != 195 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if l["summary_source"] != "rule" || l["rejected_by"] != nil || l["cached"] != false {
			t.Fatalf("line %v", l)
		}
	}
}

func TestJudgeSummarizerFlagErrors(t *testing.T) {
	t.Setenv("EVIDENT_CLI_UNSET_KEY", "")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--summarizer", "gpt"}, `--summarizer "gpt": want openai, anthropic or none`},
		{[]string{"--summarizer", "openai"}, "--summarizer openai needs --model"},
		{[]string{"--model", "m"}, "--model needs --summarizer openai or anthropic"},
		{[]string{"--summarizer", "anthropic", "--model", "m", "--api-key-env", "EVIDENT_CLI_UNSET_KEY"}, "EVIDENT_CLI_UNSET_KEY"},
	}
	for _, tt := range tests {
		_, _, err := evident(t, append([]string{"judge", "--demo"}, tt.args...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.want)
		}
	}
}

// TestJudgeSummarizerIntoStore runs judge --db --summarizer: the run in the
// store carries the prompt version and, per record, which summary it holds
// and what rejected the model's (what the screen shows).
func TestJudgeSummarizerIntoStore(t *testing.T) {
	rules := ruleRecords(t)
	var script []llmtest.Reply
	for i := range rules {
		m := map[string]any{}
		for k, v := range rules[i] {
			m[k] = v
		}
		if i%2 == 0 {
			m["summary"] = "모델이 규칙의 근거만으로 다시 쓴 한 줄 요약입니다."
		} else {
			m["summary"] = "두 문장입니다. 그래서 되돌립니다."
		}
		b, _ := json.Marshal(m)
		script = append(script, llmtest.Reply{Body: llmtest.OpenAIChat(string(b), 100, 10)})
	}
	srv := llmtest.NewOpenAI(t, script...)
	db := filepath.Join(t.TempDir(), "e.db")
	t.Setenv("EVIDENT_CLI_TEST_KEY", "sk-test-not-a-secret")
	args := append([]string{"judge"}, seedArgs()...)
	args = append(args, "--db", db, "--summarizer", "openai", "--model", "m", "--base-url", srv.URL,
		"--api-key-env", "EVIDENT_CLI_TEST_KEY", "--concurrency", "1", "--workers", "1")
	_, errOut, err := evident(t, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "stored run 1") || !strings.Contains(errOut, "accepted 4, reverted 4 (check 10 4)") {
		t.Errorf("stderr %q", errOut)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.Run(context.Background(), 1)
	if err != nil || run.PromptVersion != summarize.PromptVersion {
		t.Fatalf("run %+v, %v", run, err)
	}
	entries, err := st.Entries(context.Background(), 1, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		wantSrc, wantBy := "model", ""
		if i%2 == 1 {
			wantSrc, wantBy = "rule", "check 10"
		}
		if string(e.SummarySource) != wantSrc || e.SummaryRejectedBy != wantBy {
			t.Errorf("entry %d (%s): source %q rejected by %q, want %q %q", i, e.Record.TurnID, e.SummarySource, e.SummaryRejectedBy, wantSrc, wantBy)
		}
	}
}
