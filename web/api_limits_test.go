package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"evident/web"
)

// TestLiveAPIRowCapAndWording: a row whose reply_text and user_message
// exceed web.MaxLiveRowText is refused with 413 and its row (nothing of the
// request stored); an unknown ?dataset is named as asked.
func TestLiveAPIRowCapAndWording(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	small := turnJSON("C1", "2026-10-03T21:05:00+09:00", "안녕", "안녕.", `[]`, "false")
	big := turnJSON("C2", "2026-10-03T21:06:00+09:00", "응", strings.Repeat("가", web.MaxLiveRowText/3+1)+".", `[]`, "false")
	p := c.api(http.MethodPost, "/api/v1/turns", "application/x-ndjson", "", []byte(string(small)+"\n"+string(big)+"\n"))
	want := fmt.Sprintf(`hold %d bytes: the live API judges rows of at most %d`, 3*(web.MaxLiveRowText/3+1)+1+len("응"), web.MaxLiveRowText)
	if p.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.body, want) || !strings.Contains(p.body, `"row":2,"line":2`) {
		t.Fatalf("%d %s; want 413 at row 2 containing %q", p.status, p.body, want)
	}
	if p := c.api(http.MethodGet, "/api/v1/turns/C1", "", "", nil); p.status != http.StatusNotFound {
		t.Fatalf("the refused request stored its first row: %d", p.status)
	}
	if p := c.api(http.MethodPost, "/api/v1/turns?dataset=99", "application/json", "", small); p.status != http.StatusNotFound ||
		!strings.Contains(p.body, `"no dataset 99 (none has that id, or its import has not finished)"`) {
		t.Fatalf("dataset 99: %d %s", p.status, p.body)
	}
}
