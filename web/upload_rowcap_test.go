package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"evident/web"
)

// TestAnUploadedRowOverTheCapIsAReject: a chat_turn row of an upload over
// web.MaxUploadRow (1 MiB) is a reject at its line before it is judged: the
// upload is refused listing it, or with keep_going the other rows are
// judged and it is listed on the run.
func TestAnUploadedRowOverTheCapIsAReject(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{MaxUpload: 4 << 20})
	token := c.csrf()
	long := `{"turn_id":"L2","session_id":"S1","character_id":"C1","model_id":"m","reply_text":"` + strings.Repeat("가", 1<<19) + `"}`
	turns := `{"turn_id":"L1","session_id":"S1","character_id":"C1","model_id":"m","reply_text":"그래."}` + "\n" + long + "\n" +
		`{"turn_id":"L3","session_id":"S1","character_id":"C1","model_id":"m","reply_text":"좋아."}` + "\n"
	reason := "row of " + strconv.Itoa(len(long)) + " bytes, over the cap of 1048576"
	beforeSets, beforeRuns := counts(t, db)
	p := c.upload("/upload", map[string]string{"csrf": token}, map[string][2]string{
		"turns": {"long.jsonl", turns}, "cards": {"cards.jsonl", cards}, "lexicon": {"lexicon.csv", lexicon}})
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", p.status)
	}
	mustContain(t, p.body, "판정할 수 없는 행이 1개 있어 아무것도 가져오지 않았습니다", `<td>long.jsonl</td><td class="num">2</td>`, reason)
	if sets, runs := counts(t, db); sets != beforeSets || runs != beforeRuns {
		t.Errorf("datasets %d→%d, runs %d→%d after a refused upload", beforeSets, sets, beforeRuns, runs)
	}
	p = c.upload("/upload", map[string]string{"csrf": token, "keep_going": "1"}, map[string][2]string{
		"turns": {"long.jsonl", turns}, "cards": {"cards.jsonl", cards}, "lexicon": {"lexicon.csv", lexicon}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("keep going: status %d", p.status)
	}
	body := c.ok(p.header.Get("Location"))
	mustContain(t, body, "판정하지 못한 행 <span class=\"count\">1행</span>", `<td>long.jsonl</td><td class="num">2</td>`, reason, "L1", "L3")
}
