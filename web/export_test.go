package web_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"evident/persona"
	"evident/store"
	"evident/web"
)

// readCSV parses a CSV export after checking and dropping its byte-order mark.
func readCSV(t *testing.T, body string) [][]string {
	t.Helper()
	if !strings.HasPrefix(body, "\ufeff") {
		t.Fatalf("the CSV does not start with a UTF-8 byte-order mark: %q", body[:min(len(body), 20)])
	}
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestRecordsCSV(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	recs, err := db.Records(context.Background(), 1, store.Filter{})
	if err != nil || len(recs) != 195 {
		t.Fatalf("%d records, %v", len(recs), err)
	}

	t.Run("the CSV holds every record in run order with a BOM, CRLF rows and the spreadsheet columns", func(t *testing.T) {
		p := c.get("/runs/1/records.csv")
		if p.status != http.StatusOK || p.header.Get("Content-Type") != "text/csv; charset=utf-8" ||
			p.header.Get("Content-Disposition") != `attachment; filename="evident-run-1.csv"` {
			t.Fatalf("%d %q %q", p.status, p.header.Get("Content-Type"), p.header.Get("Content-Disposition"))
		}
		if !strings.HasPrefix(p.body, "\ufeffturn_id,session_id,character_id,model_id,verdict,summary,reply_text,evidence\r\n") {
			t.Errorf("header line %q", p.body[:min(len(p.body), 120)])
		}
		rows := readCSV(t, p.body)
		if len(rows) != 1+195 {
			t.Fatalf("%d rows, want the header and 195", len(rows))
		}
		for i, r := range recs {
			row := rows[i+1]
			reply, _ := r.JudgedReply()
			want := []string{r.TurnID, r.SessionID, r.CharacterID, r.ModelID, string(r.Verdict), r.Summary, reply}
			if !reflect.DeepEqual(row[:7], want) {
				t.Fatalf("row %d\n got %q\nwant %q", i+1, row[:7], want)
			}
			var ev []persona.Evidence
			if err := json.Unmarshal([]byte(row[7]), &ev); err != nil || len(ev) != len(r.Evidence) {
				t.Fatalf("row %d evidence %q: %v", i+1, row[7], err)
			}
			if strings.Contains(row[7], "\n") || strings.Contains(row[7], `\u003c`) {
				t.Errorf("row %d evidence is not compact JSON: %q", i+1, row[7])
			}
		}
	})
	t.Run("T-010116's evidence cell cites the lexicon row 투표 → 현실 정치 as compact JSON", func(t *testing.T) {
		rows := readCSV(t, c.ok("/runs/1/records.csv?turn=T-010116"))
		if len(rows) != 2 || rows[1][0] != "T-010116" || rows[1][4] != "금지 소재 접촉" {
			t.Fatalf("rows %q", rows)
		}
		for _, want := range []string{`{"source":"topic_lexicon","field":"term","value":"투표"}`,
			`{"source":"topic_lexicon","field":"topic","value":"현실 정치"}`} {
			if !strings.Contains(rows[1][7], want) {
				t.Errorf("evidence %s lacks %s", rows[1][7], want)
			}
		}
	})
	t.Run("the CSV honours the screen's filter: 36 말투 어긋남 rows, as on the screen", func(t *testing.T) {
		rows := readCSV(t, c.ok("/runs/1/records.csv?verdict="+url.QueryEscape("말투 어긋남")))
		if len(rows) != 1+36 {
			t.Fatalf("%d rows", len(rows))
		}
		for _, r := range rows[1:] {
			if r[4] != "말투 어긋남" {
				t.Errorf("row %q", r)
			}
		}
	})
	t.Run("the JSONL export holds the same records, one JSON line each, equal to the store's", func(t *testing.T) {
		p := c.get("/runs/1/records.jsonl")
		sc := bufio.NewScanner(strings.NewReader(p.body))
		sc.Buffer(nil, 1<<20)
		var n int
		for ; sc.Scan(); n++ {
			var r persona.Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("line %d: %v", n+1, err)
			}
			if n < len(recs) && (r.TurnID != recs[n].TurnID || r.Verdict != recs[n].Verdict || r.Summary != recs[n].Summary) {
				t.Errorf("line %d is %s %s, want %s %s", n+1, r.TurnID, r.Verdict, recs[n].TurnID, recs[n].Verdict)
			}
		}
		if n != 195 || p.header.Get("Content-Disposition") != `attachment; filename="evident-run-1.jsonl"` {
			t.Errorf("%d lines, %q", n, p.header.Get("Content-Disposition"))
		}
	})
	t.Run("a run that does not exist is a 404 page, not an empty download", func(t *testing.T) {
		for _, path := range []string{"/runs/9/records.csv", "/runs/9/records.jsonl", "/runs/x/records.csv"} {
			p := c.get(path)
			if p.status != http.StatusNotFound || p.header.Get("Content-Disposition") != "" || !strings.Contains(p.body, "<html") {
				t.Errorf("%s: %d %q", path, p.status, p.header.Get("Content-Disposition"))
			}
		}
	})
}

func TestRecordsCSVFormula(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	turns := `{"turn_id":"=X1","session_id":"S1","character_id":"C1","model_id":"m","reply_text":"=HYPERLINK(\"http://x\") 선거 얘기는 싫어.","named_entities":[]}` + "\n"
	p := c.upload("/upload", map[string]string{"csrf": c.csrf()}, map[string][2]string{
		"turns": {"x.jsonl", turns}, "cards": {"c.jsonl", cards}, "lexicon": {"l.csv", lexicon}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("upload %d\n%s", p.status, p.body)
	}
	rows := readCSV(t, c.ok(p.header.Get("Location")+"/records.csv"))
	if len(rows) != 2 {
		t.Fatalf("rows %q", rows)
	}
	t.Run("a cell that a spreadsheet would run as a formula starts with an apostrophe", func(t *testing.T) {
		if rows[1][0] != "'=X1" || rows[1][6] != `'=HYPERLINK("http://x") 선거 얘기는 싫어.` {
			t.Errorf("turn_id %q, reply_text %q", rows[1][0], rows[1][6])
		}
	})
	t.Run("the JSONL export keeps the text as stored", func(t *testing.T) {
		body := c.ok(p.header.Get("Location") + "/records.jsonl")
		if !strings.Contains(body, `"turn_id":"=X1"`) {
			t.Errorf("JSONL %s", body)
		}
	})
}
