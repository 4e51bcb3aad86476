package summarize

import (
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"evident/llm"
	"evident/persona"
)

// TestAModelsVerdictIsReadAfterNFCAndTrimming: check 1 compares the model's
// verdict with the five values after NFC and strings.TrimSpace
// (persona.ParseVerdict), so the rule's own verdict written in NFD or padded
// with spaces is that verdict and the answer is used; any other value is
// still discarded by check 1, and another of the five by "verdict differs".
func TestAModelsVerdictIsReadAfterNFCAndTrimming(t *testing.T) {
	j, cards := seedJudge(t)
	base := seedRecords(t, j)["T-004471"]
	if base.rec.Verdict != persona.SpeechOff {
		t.Fatalf("fixture T-004471 is %q, want %q", base.rec.Verdict, persona.SpeechOff)
	}
	s, err := New(Config{Judge: j, Cards: cards, Client: llm.Wrap(nil, llm.Policy{}), Provider: "openai", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	nfd := norm.NFD.String(string(persona.SpeechOff))
	if nfd == string(persona.SpeechOff) || len(nfd) <= len(persona.SpeechOff) {
		t.Fatalf("NFD of %q is the same bytes: the case proves nothing", persona.SpeechOff)
	}
	tests := []struct {
		name     string
		verdict  any
		rejected string // "" = the model's summary is used
		detail   string
	}{
		{"the verdict verbatim is used", string(persona.SpeechOff), "", ""},
		{"the verdict in NFD (decomposed jamo) is used", nfd, "", ""},
		{"the verdict padded with spaces is used", "  " + string(persona.SpeechOff) + " ", "", ""},
		{"the verdict in NFD padded with a tab and a newline is used", "\t" + nfd + "\n", "", ""},
		{"a value that is not one of the five is still discarded", "대체로 괜찮음", "discarded: check 1", `"대체로 괜찮음" is not one of the five`},
		{"the verdict with a mark after it is still discarded", string(persona.SpeechOff) + ".", "discarded: check 1", "is not one of the five"},
		{"the verdict without its inner space is still discarded", strings.ReplaceAll(string(persona.SpeechOff), " ", ""), "discarded: check 1", "is not one of the five"},
		{"a space-only verdict is still discarded", "   ", "discarded: check 1", "is not one of the five"},
		{"a verdict that is not a string is still discarded", 3, "discarded: check 1", "verdict 3 is not one of the five"},
		{"another of the five, padded, is discarded as differing from the rules", " " + norm.NFD.String(string(persona.Kept)), "discarded: verdict differs", `verdict "설정대로 말함", the rules gave "말투 어긋남"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := edit(t, base.rec, func(m map[string]any) {
				goodEdit(m)
				m["verdict"] = tt.verdict
			})
			rec, out := s.Decide(&base.rec, base.cx, json.RawMessage(answer))
			if tt.rejected == "" {
				if out.Source != persona.SummaryModel {
					t.Fatalf("outcome %+v, want the model's summary", out)
				}
				if rec.Summary != goodSummary || rec.Verdict != persona.SpeechOff {
					t.Errorf("summary %q verdict %q, want %q %q", rec.Summary, rec.Verdict, goodSummary, persona.SpeechOff)
				}
				return
			}
			if out.Source != persona.SummaryRule || out.RejectedBy != tt.rejected || !strings.Contains(out.Detail, tt.detail) {
				t.Errorf("outcome %+v, want rule with %q and a detail containing %q", out, tt.rejected, tt.detail)
			}
			if rec.Summary != base.rec.Summary {
				t.Errorf("summary %q, want the rule's %q", rec.Summary, base.rec.Summary)
			}
		})
	}
}

// TestParseVerdict: the five values, NFC and trimmed, and nothing else.
func TestParseVerdict(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want persona.Verdict
		ok   bool
	}{
		{"each of the five verbatim is itself", string(persona.RecallFailed), persona.RecallFailed, true},
		{"NFD is read as NFC", norm.NFD.String(string(persona.ForbiddenTopic)), persona.ForbiddenTopic, true},
		{"surrounding white space is trimmed", " \u3000" + string(persona.Kept) + "\r\n", persona.Kept, true},
		{"an inner double space is refused", "말투  어긋남", "", false},
		{"a zero-width space is not white space and is refused", string(persona.OffCanon) + "\u200b", "", false},
		{"the empty string is refused", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := persona.ParseVerdict(tt.in); got != tt.want || ok != tt.ok {
				t.Errorf("ParseVerdict(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}
