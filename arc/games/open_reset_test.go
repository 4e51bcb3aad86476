package games

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"evident/arc/api"
	"evident/arc/session"
)

// post sends body verbatim with the given Content-Type ("" for none).
func (x *srv) post(path, contentType, body string) (int, string, string) {
	x.t.Helper()
	req, _ := http.NewRequest("POST", x.url+path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		x.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestScorecardOpenAnswersAsTheToolkit: POST /api/scorecard/open answers
// the bodies the official server (arc_agi api.py new_scorecard under Flask
// 3.1, run here by hand) refuses with its status, Content-Type and body.
func TestScorecardOpenAnswersAsTheToolkit(t *testing.T) {
	x := newSrv(t, Config{})
	big := `{"opaque": "` + strings.Repeat("a", MaxOpaqueBytes-1) + `"}`  // 16385 bytes as compact JSON
	fits := `{"opaque": "` + strings.Repeat("a", MaxOpaqueBytes-2) + `"}` // 16384 bytes
	for _, c := range []struct {
		name, contentType, body string
		status                  int
		wantType, want          string
	}{
		{"an empty body without a JSON Content-Type is Flask's 415", "", "", 415, "text/html; charset=utf-8", flask415},
		{"an empty JSON body is Flask's 400", "application/json", "", 400, "text/html; charset=utf-8", flask400},
		{"a malformed JSON body is Flask's 400", "application/json", "{x", 400, "text/html; charset=utf-8", flask400},
		{"JSON null is 400 request body must be a JSON object", "application/json", "null", 400, "application/json", `{"error":"request body must be a JSON object"}` + "\n"},
		{"a JSON list is 400 request body must be a JSON object", "application/json", "[1]", 400, "application/json", `{"error":"request body must be a JSON object"}` + "\n"},
		{"an opaque over 16 KiB is 400 opaque exceeds 8 KB limit", "application/json", big, 400, "application/json", `{"error":"opaque exceeds 8 KB limit"}` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, ct, body := x.post(api.PathScorecardOpen, c.contentType, c.body)
			if status != c.status || ct != c.wantType || body != c.want {
				t.Fatalf("%d %s %q, want %d %s %q", status, ct, body, c.status, c.wantType, c.want)
			}
		})
	}
	t.Run("an opaque of exactly 16 KiB opens a scorecard", func(t *testing.T) {
		status, _, body := x.post(api.PathScorecardOpen, "application/json", fits)
		if status != 200 || !strings.Contains(body, `"card_id"`) {
			t.Fatalf("%d %s", status, body)
		}
	})
}

// TestResetResolvesGameIDPrefix: RESET takes a game id prefix as GET
// /api/games/{id} does ("trek" finds trek-v1), for a new play and for a
// level RESET of a guid; an id that names no game is still 400 not found.
func TestResetResolvesGameIDPrefix(t *testing.T) {
	x := newSrv(t, Config{})
	card := x.card()
	r := x.reset("trek", card, "")
	if r.GameID != Trek.ID || r.GUID == "" || !r.FullReset || r.LevelsCompleted != 0 {
		t.Fatalf("RESET trek: %+v", r)
	}
	a := x.act(Trek.ID, r.GUID, session.Action{Name: "ACTION1"})
	if a.ActionInput.ID != 1 {
		t.Fatalf("ACTION1: %+v", a)
	}
	lr := x.reset("trek", card, r.GUID)
	if lr.GUID != r.GUID || lr.FullReset {
		t.Fatalf("level RESET trek with the guid: %+v, want the same guid and full_reset false", lr)
	}
	e := x.errCode("POST", api.PathCmd+"RESET", api.ResetRequest{GameID: "tre", CardID: card}, 400, api.CodeServerError)
	if e.Message != "game tre not found" {
		t.Errorf("message %q", e.Message)
	}
	e = x.errCode("POST", api.PathCmd+"RESET", api.ResetRequest{GameID: "lights", CardID: card, GUID: r.GUID}, 400, api.CodeServerError)
	if e.Message != "game lights not found" {
		t.Errorf("another game's prefix with trek's guid: message %q", e.Message)
	}
}
