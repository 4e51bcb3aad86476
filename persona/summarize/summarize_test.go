package summarize

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"evident/llm"
	"evident/llm/llmtest"
	"evident/persona"
)

const testKeyEnv = "EVIDENT_SUMMARIZE_TEST_KEY"

// sleeps is a fake llm.Policy.Sleep: it records the waits and returns at once.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// provider is one of the two fake servers with how it answers a record.
type provider struct {
	name   string
	start  func(testing.TB, ...llmtest.Reply) *llmtest.Server
	client func(t *testing.T, url string) llm.Client
	// answer is a 200 body whose structured answer is record (raw JSON).
	answer func(record string) string
	// notJSON is a 200 body whose answer is not JSON at all.
	notJSON string
}

func providers() []provider {
	return []provider{
		{
			name:  ProviderOpenAI,
			start: llmtest.NewOpenAI,
			client: func(t *testing.T, url string) llm.Client {
				t.Setenv(testKeyEnv, "sk-test-not-a-secret")
				c, err := llm.NewOpenAI(llm.Options{BaseURL: url, Model: "gpt-test", APIKeyEnv: testKeyEnv})
				if err != nil {
					t.Fatal(err)
				}
				return c
			},
			answer:  func(r string) string { return llmtest.OpenAIChat(r, 1200, 80) },
			notJSON: llmtest.OpenAIChat(`{"turn_id": "T-004471", "summary": "잘렸`, 1200, 80),
		},
		{
			name:  ProviderAnthropic,
			start: llmtest.NewAnthropic,
			client: func(t *testing.T, url string) llm.Client {
				t.Setenv(testKeyEnv, "sk-ant-test-not-a-secret")
				c, err := llm.NewAnthropic(llm.Options{BaseURL: url, Model: "claude-test", APIKeyEnv: testKeyEnv})
				if err != nil {
					t.Fatal(err)
				}
				return c
			},
			answer:  func(r string) string { return llmtest.AnthropicToolUse(SchemaName, r, 1200, 80) },
			notJSON: llmtest.AnthropicText("죄송합니다. 이 요청에는 JSON 으로 답할 수 없습니다.", 1200, 80),
		},
	}
}

// edit returns the rule record as JSON after f changed a copy of it (as a
// generic map, so a test can write what persona.Record cannot hold).
func edit(t *testing.T, rec persona.Record, f func(m map[string]any)) string {
	t.Helper()
	b, _ := json.Marshal(rec)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The good rewrite of T-004471 (말투 어긋남): a new summary and one more
// evidence row (the chat server's label, verbatim) after the rule's rows.
const goodSummary = "반말로 말해야 할 교관이 두 문장을 모두 「생각해요」·「좋겠어요」로 맺고 1인칭도 「저」를 써 카드와 어긋났습니다."

var extraRow = map[string]any{"source": "chat_turn", "field": "honorific_level", "value": "존댓말"}

func goodEdit(m map[string]any) {
	m["summary"] = goodSummary
	m["evidence"] = append(m["evidence"].([]any), extraRow)
}

// TestSummarizeCases runs each answer the issue names through both fake
// servers and checks the summary and evidence the record ends with, the
// outcome, the sleeps and the final tally.
func TestSummarizeCases(t *testing.T) {
	j, cards := seedJudge(t)
	recs := seedRecords(t, j)
	base := recs["T-004471"]
	rule := base.rec

	type tcase struct {
		name    string
		script  func(p provider) []llmtest.Reply
		policy  llm.Policy
		want    persona.Summary
		detail  string // substring of Summary.Detail
		sleeps  []time.Duration
		tally   string
		summary string // "" = the rule's
	}
	body := func(f func(m map[string]any)) func(p provider) []llmtest.Reply {
		return func(p provider) []llmtest.Reply {
			return []llmtest.Reply{{Body: p.answer(edit(t, rule, f))}}
		}
	}
	tally := func(mid string) string {
		return "summaries 1: calls 1 (requests 1, retries 0), cached 0, " + mid + ", tokens in 1200 out 80"
	}
	cases := []tcase{
		{
			name: "a good record is used", script: body(goodEdit),
			want: persona.Summary{Source: persona.SummaryModel}, summary: goodSummary,
			tally: tally("accepted 1, reverted 0, discarded 0, failed 0"),
		},
		{
			name: "an invented verdict is discarded (check 1)",
			script: body(func(m map[string]any) {
				goodEdit(m)
				m["verdict"] = "대체로 괜찮음"
			}),
			want: persona.Summary{Source: persona.SummaryRule, RejectedBy: "discarded: check 1"}, detail: `"대체로 괜찮음" is not one of the five`,
			tally: tally("accepted 0, reverted 0, discarded 1 (check 1 1), failed 0"),
		},
		{
			name: "a different verdict is discarded: the verdict belongs to the rules",
			script: body(func(m map[string]any) {
				goodEdit(m)
				m["verdict"] = string(persona.Kept)
			}),
			want: persona.Summary{Source: persona.SummaryRule, RejectedBy: "discarded: verdict differs"}, detail: `verdict "설정대로 말함", the rules gave "말투 어긋남"`,
			tally: tally("accepted 0, reverted 0, discarded 1 (verdict differs 1), failed 0"),
		},
		{
			name: "a changed rule field is discarded",
			script: body(func(m map[string]any) {
				goodEdit(m)
				m["rule_observed"] = "반말 · 저"
			}),
			want: persona.Summary{Source: persona.SummaryRule, RejectedBy: "discarded: rule field differs"}, detail: "rule_observed",
			tally: tally("accepted 0, reverted 0, discarded 1 (rule field differs 1), failed 0"),
		},
		{
			name: "an evidence field that is no column reverts (check 8)",
			script: body(func(m map[string]any) {
				goodEdit(m)
				m["evidence"] = append(m["evidence"].([]any), map[string]any{"source": "chat_turn", "field": "tone", "value": "공손함"})
			}),
			want: persona.Summary{Source: persona.SummaryRule, RejectedBy: "check 8"}, detail: `chat_turn has no column "tone"`,
			tally: tally("accepted 0, reverted 1 (check 8 1), discarded 0, failed 0"),
		},
		{
			name: "a value that is not verbatim the cited cell reverts (check 9)",
			script: body(func(m map[string]any) {
				goodEdit(m)
				m["evidence"] = append(m["evidence"].([]any), map[string]any{"source": "chat_turn", "field": "reply_text", "value": "저는 그렇게 생각해요"})
			}),
			want: persona.Summary{Source: persona.SummaryRule, RejectedBy: "check 9"}, detail: "is not in the cited cell",
			tally: tally("accepted 0, reverted 1 (check 9 1), discarded 0, failed 0"),
		},
		{
			name: "a 반말 summary reverts (check 10)",
			script: body(func(m map[string]any) {
				goodEdit(m)
				m["summary"] = "반말 교관이 「생각해요」·「좋겠어요」로 끝내고 1인칭도 「저」를 써 카드와 어긋났다."
			}),
			want: persona.Summary{Source: persona.SummaryRule, RejectedBy: "check 10"}, detail: "does not end in 존댓말",
			tally: tally("accepted 0, reverted 1 (check 10 1), discarded 0, failed 0"),
		},
		{
			name: "two sentences revert (check 10)",
			script: body(func(m map[string]any) {
				goodEdit(m)
				m["summary"] = "두 문장이 모두 존댓말로 끝났습니다. 1인칭도 「저」라서 카드와 다릅니다."
			}),
			want: persona.Summary{Source: persona.SummaryRule, RejectedBy: "check 10"}, detail: "summary has 2 sentences, want one",
			tally: tally("accepted 0, reverted 1 (check 10 1), discarded 0, failed 0"),
		},
		{
			name: "a summary naming an off-card person reverts (proper noun)",
			script: body(func(m map[string]any) {
				goodEdit(m)
				m["summary"] = "윤하람처럼 「생각해요」·「좋겠어요」로 맺어 반말 카드와 어긋났습니다."
			}),
			want: persona.Summary{Source: persona.SummaryRule, RejectedBy: "proper noun"}, detail: `"윤하람" is not in the evidence or the card`,
			tally: tally("accepted 0, reverted 1 (proper noun 1), discarded 0, failed 0"),
		},
		{
			name: "a quoted name that is in neither the evidence nor the card reverts (proper noun)",
			script: body(func(m map[string]any) {
				goodEdit(m)
				m["summary"] = "「리안」 앞에서처럼 「생각해요」로 맺어 반말 카드와 어긋났습니다."
			}),
			want: persona.Summary{Source: persona.SummaryRule, RejectedBy: "proper noun"}, detail: `"리안"`,
			tally: tally("accepted 0, reverted 1 (proper noun 1), discarded 0, failed 0"),
		},
		{
			name: "dropping a rule evidence row reverts (rule evidence)",
			script: body(func(m map[string]any) {
				goodEdit(m)
				ev := m["evidence"].([]any)
				m["evidence"] = append([]any{}, ev[0], ev[2], ev[3], ev[4])
			}),
			want: persona.Summary{Source: persona.SummaryRule, RejectedBy: "rule evidence"}, detail: "row 1 (chat_turn.reply_text)",
			tally: tally("accepted 0, reverted 1 (rule evidence 1), discarded 0, failed 0"),
		},
		{
			name:   "malformed JSON is discarded",
			script: func(p provider) []llmtest.Reply { return []llmtest.Reply{{Body: p.notJSON}} },
			want:   persona.Summary{Source: persona.SummaryRule, RejectedBy: "discarded: malformed JSON"}, detail: "not JSON",
			tally: tally("accepted 0, reverted 0, discarded 1 (malformed JSON 1), failed 0"),
		},
		{
			name: "429 with Retry-After, then success: waits as told and uses the answer",
			script: func(p provider) []llmtest.Reply {
				return []llmtest.Reply{{Status: 429, Header: http.Header{"Retry-After": {"3"}}}, {Body: p.answer(edit(t, rule, goodEdit))}}
			},
			want: persona.Summary{Source: persona.SummaryModel}, summary: goodSummary, sleeps: []time.Duration{3 * time.Second},
			tally: "summaries 1: calls 1 (requests 2, retries 1), cached 0, accepted 1, reverted 0, discarded 0, failed 0, tokens in 1200 out 80",
		},
		{
			name:   "a 400 is not retried: the rule's sentence, failed: http 400",
			script: func(p provider) []llmtest.Reply { return []llmtest.Reply{{Status: 400}} },
			want:   persona.Summary{Source: persona.SummaryRule, RejectedBy: "failed: http 400"}, detail: "not retried",
			tally: "summaries 1: calls 1 (requests 1, retries 0), cached 0, accepted 0, reverted 0, discarded 0, failed 1 (http 400 1), tokens in 0 out 0",
		},
		{
			name: "a server that hangs past the timeout: one retry, then the rule's sentence",
			script: func(p provider) []llmtest.Reply {
				return []llmtest.Reply{{Delay: time.Minute, Body: p.answer(edit(t, rule, goodEdit))}}
			},
			policy: llm.Policy{Timeout: 100 * time.Millisecond, MaxRetries: 1, BaseDelay: time.Second, Rand: func() float64 { return 0.5 }},
			want:   persona.Summary{Source: persona.SummaryRule, RejectedBy: "failed: timeout"}, detail: "timed out after 100ms",
			sleeps: []time.Duration{500 * time.Millisecond},
			tally:  "summaries 1: calls 1 (requests 2, retries 1), cached 0, accepted 0, reverted 0, discarded 0, failed 1 (timeout 1), tokens in 0 out 0",
		},
	}
	for _, p := range providers() {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				srv := p.start(t, tc.script(p)...)
				var sl sleeps
				pol := tc.policy
				pol.Sleep = sl.sleep
				s, err := New(Config{Judge: j, Cards: cards, Client: llm.Wrap(p.client(t, srv.URL), pol), Provider: p.name, Model: "m"})
				if err != nil {
					t.Fatal(err)
				}
				rec := rule
				rec.Evidence = append([]persona.Evidence(nil), rule.Evidence...)
				got := s.Summarize(context.Background(), &rec, base.cx)
				if !strings.Contains(got.Detail, tc.detail) {
					t.Errorf("detail %q, want it to contain %q", got.Detail, tc.detail)
				}
				got.Detail = ""
				if got != tc.want {
					t.Errorf("outcome %+v, want %+v", got, tc.want)
				}
				wantRec := rule
				if tc.summary != "" {
					wantRec.Summary = tc.summary
					wantRec.Evidence = append(append([]persona.Evidence(nil), rule.Evidence...),
						persona.Evidence{Source: persona.SourceTurn, Field: "honorific_level", Value: "존댓말"})
				}
				if !reflect.DeepEqual(rec, wantRec) {
					t.Errorf("record\n got %+v\nwant %+v", rec, wantRec)
				}
				if !reflect.DeepEqual(sl.d, tc.sleeps) {
					t.Errorf("sleeps %v, want %v", sl.d, tc.sleeps)
				}
				if got := s.Tally().String(); got != tc.tally {
					t.Errorf("tally\n got %s\nwant %s", got, tc.tally)
				}
				if tc.want.Source == persona.SummaryModel {
					// What is used passes all ten checks, as `evident check` runs them.
					for _, c := range j.Check(&rec, base.cx) {
						if !c.Pass {
							t.Errorf("accepted record fails check %d: %s", c.ID, c.Reason)
						}
					}
				}
			})
		}
	}
}

// TestRequest checks what the model is sent: the versioned prompt as the
// system text, the seed's schema, and the card, turn, recall source and rule
// record as one JSON user message; no key in the body.
func TestRequest(t *testing.T) {
	j, cards := seedJudge(t)
	recs := seedRecords(t, j)
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			r := recs["T-004602"]
			srv := p.start(t, llmtest.Reply{Body: p.answer(edit(t, r.rec, func(map[string]any) {}))})
			s, err := New(Config{Judge: j, Cards: cards, Client: llm.Wrap(p.client(t, srv.URL), llm.Policy{}), Provider: p.name, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			rec := r.rec
			if got := s.Summarize(context.Background(), &rec, r.cx); got.Source != persona.SummaryModel {
				t.Fatalf("echoing the rule record: %+v", got)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			raw := string(reqs[0].Body)
			if strings.Contains(raw, "not-a-secret") {
				t.Error("the API key is in the request body")
			}
			var sys, user string
			var body map[string]any
			_ = reqs[0].Decode(&body)
			msgs := body["messages"].([]any)
			switch p.name {
			case ProviderOpenAI:
				sys = msgs[0].(map[string]any)["content"].(string)
				user = msgs[1].(map[string]any)["content"].(string)
				rf := body["response_format"].(map[string]any)
				if rf["type"] != "json_schema" || rf["json_schema"].(map[string]any)["name"] != SchemaName {
					t.Errorf("response_format %v", rf)
				}
			case ProviderAnthropic:
				sys = body["system"].([]any)[0].(map[string]any)["text"].(string)
				user = msgs[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
				if tc := body["tool_choice"].(map[string]any); tc["name"] != SchemaName {
					t.Errorf("tool_choice %v", tc)
				}
			}
			if sys != Prompt() {
				t.Error("system prompt is not prompts/v1.md")
			}
			var in struct {
				Card             persona.Card   `json:"card"`
				Turn             persona.Turn   `json:"turn"`
				RecallSourceTurn *sourceTurn    `json:"recall_source_turn"`
				RuleRecord       persona.Record `json:"rule_record"`
			}
			if err := json.Unmarshal([]byte(user), &in); err != nil {
				t.Fatalf("user message is not the input JSON: %v\n%s", err, user)
			}
			if in.Card.Name != "도강" || in.Turn.TurnID != "T-004602" || in.RuleRecord.Summary != r.rec.Summary ||
				in.RecallSourceTurn == nil || in.RecallSourceTurn.TurnID != "T-004450" || *in.RecallSourceTurn.ReplyText != "하늘이는 아직 검술원에 남아 있어. 걱정 말고 자라." {
				t.Errorf("input %+v", in)
			}
		})
	}
}

// TestPromptFile holds prompts/v1.md to the code: its version line, the
// seed's schema verbatim, and few-shot examples whose inputs are what the
// code sends for those seed turns and whose outputs the code accepts.
func TestPromptFile(t *testing.T) {
	p := Prompt()
	if first, _, _ := strings.Cut(p, "\n"); first != "<!-- prompt "+PromptVersion+" -->" {
		t.Errorf("first line %q does not name %s", first, PromptVersion)
	}
	blocks := jsonBlocks(p)
	if len(blocks) != 7 {
		t.Fatalf("%d json blocks, want the schema and three input/output pairs", len(blocks))
	}
	if blocks[0] != strings.TrimSpace(string(persona.SchemaJSON)) {
		t.Error("the schema in the prompt is not the seed's, verbatim")
	}
	j, cards := seedJudge(t)
	recs := seedRecords(t, j)
	s, err := New(Config{Judge: j, Cards: cards, Client: llm.Wrap(nil, llm.Policy{}), Provider: "openai", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(blocks); i += 2 {
		var in struct {
			RuleRecord persona.Record `json:"rule_record"`
		}
		if err := json.Unmarshal([]byte(blocks[i]), &in); err != nil {
			t.Fatalf("example %d input: %v", i/2+1, err)
		}
		r, ok := recs[in.RuleRecord.TurnID]
		if !ok {
			t.Fatalf("example %d cites unknown turn %s", i/2+1, in.RuleRecord.TurnID)
		}
		card, _ := j.Card(r.rec.CharacterID)
		msg, err := userMessage(&r.rec, card, r.cx)
		if err != nil {
			t.Fatal(err)
		}
		if msg != blocks[i] {
			t.Errorf("example %d input differs from what the code sends:\nprompt %s\ncode   %s", i/2+1, blocks[i], msg)
		}
		rec, out := s.Decide(&r.rec, r.cx, json.RawMessage(blocks[i+1]))
		if out.Source != persona.SummaryModel {
			t.Errorf("example %d output is rejected: %+v", i/2+1, out)
		}
		if rec.Summary == r.rec.Summary {
			t.Errorf("example %d output does not rewrite the summary", i/2+1)
		}
	}
}

// jsonBlocks returns the bodies of the ```json fences of a Markdown text.
func jsonBlocks(md string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(md, "```json\n")
		if !ok {
			return out
		}
		body, after, _ := strings.Cut(rest, "\n```")
		out = append(out, strings.TrimSpace(body))
		md = after
	}
}

// TestConnectionRefused: a server that is gone leaves the rule's sentence
// with "failed: connection".
func TestConnectionRefused(t *testing.T) {
	j, cards := seedJudge(t)
	r := seedRecords(t, j)["T-004468"]
	p := providers()[0]
	srv := p.start(t)
	srv.Close()
	s, _ := New(Config{Judge: j, Cards: cards, Client: llm.Wrap(p.client(t, srv.URL), llm.Policy{MaxRetries: -1}), Provider: p.name, Model: "m"})
	rec := r.rec
	got := s.Summarize(context.Background(), &rec, r.cx)
	if got.Source != persona.SummaryRule || got.RejectedBy != "failed: connection" || !reflect.DeepEqual(rec, r.rec) {
		t.Errorf("outcome %+v", got)
	}
}
