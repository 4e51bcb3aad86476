package web_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"evident/persona"
	"evident/store"
	"evident/web"
)

// The read side at scale (issue 13): the report's cap, panels that follow the
// filter, empty groups hidden, the paged models-disagree list.

func TestTheReportIsCapped(t *testing.T) {
	ctx := context.Background()
	db := demoStore(t)
	recs, err := db.Records(ctx, 1, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		opt    web.ReportOptions
		rows   int
		line   string // the count line, "" when the report holds every turn
		groups map[persona.Verdict]int
	}{
		{"the whole demo fits under the default cap and says nothing of one", web.ReportOptions{}, 195, "", nil},
		{"a cap of 20 keeps the first 20 turns in run order and says how many matched",
			web.ReportOptions{Cap: 20}, 20, "이 실행의 <strong>195</strong>회차 가운데 실행 순서로 앞의 <strong>20</strong>회차만", firstCounts(recs, 20, "")},
		{"a filter and a cap: the first 10 of the 36 말투 어긋남 turns",
			web.ReportOptions{Cap: 10, Filter: store.Filter{Verdict: persona.SpeechOff}}, 10, "조건에 맞는 <strong>36</strong>회차 가운데 실행 순서로 앞의 <strong>10</strong>회차만",
			map[persona.Verdict]int{persona.SpeechOff: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := web.WriteReportWith(ctx, db, 1, &buf, tt.opt); err != nil {
				t.Fatal(err)
			}
			body := buf.String()
			if n := strings.Count(body, `<details class="row `); n != tt.rows {
				t.Errorf("%d rows, want %d", n, tt.rows)
			}
			if tt.line == "" {
				if strings.Contains(body, `id="capped"`) {
					t.Error("an uncapped report has the cap line")
				}
			} else {
				mustContain(t, body, tt.line, "records.jsonl", "evident report --filter")
			}
			for v, n := range tt.groups {
				if !strings.Contains(body, fmt.Sprintf(`%s</span> <span class="count">%d회차</span>`, v, n)) {
					t.Errorf("group %s should count %d", v, n)
				}
			}
		})
	}
}

// firstCounts counts the verdicts of the first n records.
func firstCounts(recs []persona.Record, n int, _ string) map[persona.Verdict]int {
	out := map[persona.Verdict]int{}
	for _, r := range recs[:n] {
		out[r.Verdict]++
	}
	return out
}

func TestPanelsFollowTheFilter(t *testing.T) {
	ctx := context.Background()
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	recs, err := db.Records(ctx, 1, store.Filter{Character: "CHR-0100"})
	if err != nil {
		t.Fatal(err)
	}
	byVerdict := map[persona.Verdict]int{}
	byModel := map[string]int{}
	for _, r := range recs {
		byVerdict[r.Verdict]++
		byModel[r.ModelID]++
	}
	body := c.ok("/runs/1?character=CHR-0100")
	t.Run("the breakdown counts only the filtered turns, per model", func(t *testing.T) {
		h := section(t, body, "breakdown")
		mustContain(t, h, "걸러 본 회차만")
		for m, n := range byModel {
			mustContain(t, h, fmt.Sprintf(`%s</a></th><td class="num">%d</td>`, m, n))
		}
	})
	t.Run("the whole-run panels say plainly that they count the whole run", func(t *testing.T) {
		mustContain(t, body, `id="whole-run"`, "실행 전체 195회차를 셉니다")
	})
	t.Run("groups without a matching turn are hidden", func(t *testing.T) {
		for _, g := range demoCounts {
			has := strings.Contains(body, `id="`+g.anchor+`"`)
			if want := byVerdict[persona.Verdict(g.verdict)] > 0; has != want {
				t.Errorf("group %s shown %v, want %v (%d turns)", g.verdict, has, want, byVerdict[persona.Verdict(g.verdict)])
			}
		}
	})
	t.Run("without a filter the breakdown is the whole run's and no note is shown", func(t *testing.T) {
		all := c.ok("/runs/1")
		mustContain(t, section(t, all, "breakdown"), "실행 전체")
		if strings.Contains(all, `id="whole-run"`) {
			t.Error("the whole-run note shows without a filter")
		}
	})
}

func TestModelsDisagreeIsPaged(t *testing.T) {
	c := serve(t, demoStore(t), web.Options{})
	body := c.ok("/runs/1/disagree")
	t.Run("the page counts the 42 disagreeing prompts of 52 shared and shows them on one page", func(t *testing.T) {
		mustContain(t, body, "함께 답한 프롬프트 52개 가운데 <strong>42개</strong>")
		if n := strings.Count(body, `<article class="prompt">`); n != 42 {
			t.Errorf("%d prompts shown, want 42", n)
		}
		if strings.Contains(body, `class="pager"`) {
			t.Error("one page needs no pager")
		}
	})
	t.Run("a page past the end shows no prompt", func(t *testing.T) {
		if n := strings.Count(c.ok("/runs/1/disagree?page=2"), `<article class="prompt">`); n != 0 {
			t.Errorf("%d prompts on page 2", n)
		}
	})
}

func TestReportFilterParsesTheScreensQueryString(t *testing.T) {
	tests := []struct {
		name, query string
		want        store.Filter
		bad         bool
	}{
		{"empty is the whole run", "", store.Filter{}, false},
		{"keys of the screen", "verdict=말투 어긋남&character=CHR-0100&q=필요", store.Filter{Verdict: persona.SpeechOff, Character: "CHR-0100", Text: "필요"}, false},
		{"an unknown key is refused", "colour=red", store.Filter{}, true},
		{"a verdict not among the five is refused", "verdict=좋음", store.Filter{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := web.ReportFilter(tt.query)
			if (err != nil) != tt.bad || (!tt.bad && got != tt.want) {
				t.Fatalf("ReportFilter(%q) = %+v, %v", tt.query, got, err)
			}
		})
	}
}
