package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"evident/web"
)

func TestRunsPageDifferences(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	p := c.postForm("/datasets/1/judge", url.Values{"csrf": {c.csrf()}, "profile": {"extended"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/runs/2" {
		t.Fatalf("re-judge: %d %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	run1, err := db.Run(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	cards := run1.Fingerprints["character_card"]
	if len(cards) != 64 {
		t.Fatalf("run 1's character_card fingerprint %q", cards)
	}
	body := c.ok("/runs")
	rowOf := func(id string) string {
		i := strings.Index(body, `<tr><td><a href="/runs/`+id+`">`)
		if i < 0 {
			t.Fatalf("no row for run %s", id)
		}
		return body[i : i+strings.Index(body[i:], "</tr>")]
	}
	t.Run("the re-judge with extended is marked as differing from run 1 in its profile only", func(t *testing.T) {
		r := rowOf("2")
		mustContain(t, r, `<td class="changed" title="앞 실행 #1과 다릅니다"><code>extended</code> <span class="changed-tag">바뀜</span></td>`,
			`<code>`+cards[:12]+`</code>`)
		if n := strings.Count(r, "changed-tag"); n != 1 {
			t.Errorf("%d cells marked, want 1 (the profile): %s", n, r)
		}
	})
	t.Run("the dataset's first run has nothing to differ from", func(t *testing.T) {
		r := rowOf("1")
		mustContain(t, r, `<td><code>seed</code></td>`, `<span class="muted">없음</span>`, `<code>`+cards[:12]+`</code>`)
		if strings.Contains(r, "changed") {
			t.Errorf("run 1 is marked: %s", r)
		}
	})
}
