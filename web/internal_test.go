package web

import (
	"net/url"
	"reflect"
	"testing"

	"evident/persona"
)

func sp(s string) *string { return &s }

func TestSegments(t *testing.T) {
	t.Run("off-canon names, the touched term and quoted endings are cut out of the reply", func(t *testing.T) {
		r := &persona.Record{Verdict: persona.SpeechOff, OffCanonEntities: []string{"리안"}, TouchedTerm: sp("선거"),
			Summary: "반말 카드인데 「생각해요」로 끝나 존댓말로 읽혔습니다."}
		reply := "리안이 선거 얘기를 했어. 저는 그렇게 생각해요!"
		got := segments(reply, replySpans(r, reply))
		want := []Segment{
			{Text: "리안", Mark: markOffCanon, Title: "세계관 밖 고유명사"},
			{Text: "이 "},
			{Text: "선거", Mark: markTouched, Title: "사전 낱말 (이 카드가 막은 소재는 아님)"},
			{Text: " 얘기를 했어. 저는 그렇게 "},
			{Text: "생각해요", Mark: markEnding, Title: "인용된 종결 어절"},
			{Text: "!"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("segments\n got %+v\nwant %+v", got, want)
		}
	})
	t.Run("a quoted word that does not end a sentence is not marked as an ending", func(t *testing.T) {
		r := &persona.Record{Summary: "1인칭도 「저」를 써 벗어났습니다."}
		reply := "저녁은 저기서 먹자."
		if got := segments(reply, replySpans(r, reply)); len(got) != 1 || got[0].Mark != "" {
			t.Errorf("segments %+v", got)
		}
	})
	t.Run("a name that is both off-canon and a forbidden term gets the forbidden mark and both titles", func(t *testing.T) {
		r := &persona.Record{OffCanonEntities: []string{"유튜브"}, TouchedTerm: sp("유튜브"), TouchedTopic: sp("현대 기술")}
		got := segments("유튜브에 많아.", replySpans(r, "유튜브에 많아."))
		if got[0].Mark != markForbidden || got[0].Title != "금지 소재: 현대 기술 · 세계관 밖 고유명사" || got[1].Text != "에 많아." {
			t.Errorf("segments %+v", got)
		}
	})
	t.Run("overlapping spans keep the earlier one and lose no text", func(t *testing.T) {
		got := segments("가나다라", []span{{1, 3, markOffCanon, ""}, {0, 2, markOffCanon, ""}, {2, 4, markEnding, ""}})
		var text string
		for _, s := range got {
			text += s.Text
		}
		if text != "가나다라" {
			t.Errorf("text %q", text)
		}
	})
}

func TestFormatP(t *testing.T) {
	for p, want := range map[float64]string{0.108: "0.108", 1: "1.000", 0.001: "0.001", 6.938e-8: "6.9×10⁻⁸", 1.94e-5: "1.9×10⁻⁵", 9.97e-4: "1.0×10⁻³", 0: "0"} {
		if got := formatP(p); got != want {
			t.Errorf("formatP(%v) = %q, want %q", p, got, want)
		}
	}
}

func TestFilterURL(t *testing.T) {
	f := parseFilter("/runs/3", url.Values{"verdict": {"말투 어긋남"}, "model": {"gpt-4o-mini"}, "q": {"a&b"}, "page": {"2"}})
	t.Run("keys come out in a fixed order with spaces as %20", func(t *testing.T) {
		want := "/runs/3?model=gpt-4o-mini&verdict=%EB%A7%90%ED%88%AC%20%EC%96%B4%EA%B8%8B%EB%82%A8&q=a%26b&page=2"
		if got := f.URL(); got != want {
			t.Errorf("URL() = %q, want %q", got, want)
		}
	})
	t.Run("overrides drop or change keys", func(t *testing.T) {
		if got := f.URL("verdict", "", "page", "", "q", ""); got != "/runs/3?model=gpt-4o-mini" {
			t.Errorf("URL = %q", got)
		}
	})
	t.Run("a page below one is page one", func(t *testing.T) {
		if parseFilter("/", url.Values{"page": {"-4"}}).Page != 1 {
			t.Error("page not clamped")
		}
	})
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost": true, "LOCALHOST:1": true, "[::1]:80": true, "127.1.2.3": true,
		"evil.example": false, "10.0.0.1:80": false, "localhost.evil.example": false, "": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v", host, got)
		}
	}
}
