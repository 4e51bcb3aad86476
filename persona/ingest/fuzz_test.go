package ingest

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzRows feeds data through NewRows, Next and DecodeTurn until io.EOF or a
// fatal error, checking that it ends, that every row has a line ≥ 1, that
// lines never go down, and that errors have the promised shapes.
func fuzzRows(t *testing.T, data []byte, f Format) {
	rows, err := NewRows(bytes.NewReader(data), f)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "line ") {
			t.Fatalf("NewRows error does not name a line: %v", err)
		}
		return
	}
	last := 0
	for n := 0; ; n++ {
		if n > len(data)+1 { // every row consumes at least one byte
			t.Fatalf("more rows than bytes: %d rows from %d bytes", n, len(data))
		}
		raw, err := rows.Next()
		if err == io.EOF {
			if _, err := rows.Next(); err != io.EOF {
				t.Fatalf("Next after io.EOF returned %v", err)
			}
			return
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") || !strings.Contains(err.Error(), ", column ") {
				t.Fatalf("fatal error does not name line and column: %v", err)
			}
			if _, err2 := rows.Next(); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("Next after a fatal error returned %v, want %v", err2, err)
			}
			return
		}
		if raw.Line < 1 || raw.Line < last {
			t.Fatalf("row %d has line %d after line %d", n, raw.Line, last)
		}
		last = raw.Line
		set := 0
		if raw.JSON != nil {
			set++
		}
		if raw.CSV != nil {
			set++
		}
		if raw.Err != nil {
			set++
		}
		if set != 1 {
			t.Fatalf("row %d has %d of JSON, CSV and Err set: %+v", n, set, raw)
		}
		turn, err := DecodeTurn(raw)
		if err != nil {
			var re *RowError
			if !errors.As(err, &re) {
				t.Fatalf("decode error is %T: %v", err, err)
			}
			if re.Line < raw.Line || re.Column < 0 {
				t.Fatalf("row at line %d has error at line %d, column %d: %v", raw.Line, re.Line, re.Column, re)
			}
			continue
		}
		if turn.TurnID == "" || turn.SessionID == "" || turn.CharacterID == "" || turn.ModelID == "" {
			t.Fatalf("accepted a turn without a required column: %+v", turn)
		}
		if !utf8.ValidString(turn.TurnID) || (turn.ReplyText != nil && !utf8.ValidString(*turn.ReplyText)) {
			t.Fatalf("accepted invalid UTF-8: %+v", turn)
		}
	}
}

func FuzzRowsJSONL(f *testing.F) {
	for _, s := range []string{
		turnJSONL("t1", "") + "\n" + turnJSONL("t2", `"named_entities":["하늘"]`),
		"\uFEFF" + turnJSONL("t1", `"reply_text":"안녕\r\n"`) + "\r\n\r\n  \n",
		benchTurn + "\n" + benchTurn,
		"{\"turn_id\":\"하\xff\"}\n{",
		"\n\n\n",
		"[1,2]\n\"x\"\nnull",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRows(t, data, JSONL) })
}

func FuzzRowsJSONArray(f *testing.F) {
	for _, s := range []string{
		"[" + turnJSONL("t1", "") + ",\n" + turnJSONL("t2", `"named_entities":[]`) + "]",
		"\uFEFF[\r\n" + benchTurn + "\r\n]\r\n",
		`[1, "x", {"a": [1}, , {"b":"unterminated` + "\n" + `}, {"turn_id":"]"}]`,
		"[{\"x\":\"\\\"]\"},]",
		"[]",
		"[",
		"{}",
		"[{}] x",
		"[{\"a\":\"하\xff\"}]",
		"[" + strings.TrimSuffix(turnJSONL("t1", ""), "}") + ",\n  " + turnJSONL("t2", "") + "]", // a lost '}'
		`[{"a":1 {"b":{"c":2, {"d":[{"e":3}, {`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRows(t, data, JSONArray) })
}

func FuzzRowsCSV(f *testing.F) {
	for _, s := range []string{
		turnHeader + "t1,s1,ria,m-a,안녕,\"[\"\"하늘\"\"]\"\nt2,s1,ria,m-a,,null\n",
		"\uFEFF" + strings.ReplaceAll(turnHeader, "\n", "\r\n") + "t1,s1,ria,m-a,\"두\r\n줄\",[]\r\n",
		turnHeader + "t1,s1\n\"a\"b,\nx\"y\n\"unterminated",
		"a,a\n",
		"\n \n",
		turnHeader + "t1,s1,ria,m-a,하\xff,\n",
		"turn_id,session_id,character_id,model_id,user_asked_recall,created_at\nt,s,c,m,TRUE,2024-05-01T10:00:00Z\nt,s,c,m,maybe,x\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRows(t, data, CSV) })
}

// FuzzDecodeTurnLibraries holds the fast reader (json-iterator) to
// encoding/json: DecodeTurn and the encoding/json-only decoder must give the
// same turn, or the same error, on any row; and DecodeTurnChecked must give
// the same turn on every row DecodeTurn accepts.
func FuzzDecodeTurnLibraries(f *testing.F) {
	for _, s := range []string{
		benchTurn,
		turnJSONL("t1", `"reply_text":"\ud558\ub298\n","named_entities":[],"x":{"y":[1,2.5e-3,null]}`),
		turnJSONL("t1", `"Reply_text":"a"`),
		turnJSONL("t1", `"reply_text":"\ud800"`),
		turnJSONL("t1", `"reply_text":"\ud83d\ude00\\udc00\uDBFF"`),
		turnJSONL("t1", `"created_at":"2024-02-30T00:00:00Z"`),
		turnJSONL("t1", `"user_asked_recall":true,"prompt_id":null`),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw := Raw{Line: 1, JSON: data}
		fast, ferr := DecodeTurn(raw)
		std, serr := decodeTurnJSONStd(raw)
		if (ferr == nil) != (serr == nil) || show(fast) != show(std) || (fast.NamedEntities == nil) != (std.NamedEntities == nil) {
			t.Fatalf("json-iterator and encoding/json differ on %q:\nfast %s %v\nstd  %s %v", data, show(fast), ferr, show(std), serr)
		}
		if ferr == nil {
			checked, err := DecodeTurnChecked(raw)
			if err != nil || show(checked) != show(fast) || (checked.NamedEntities == nil) != (fast.NamedEntities == nil) {
				t.Fatalf("DecodeTurnChecked differs from DecodeTurn on %q: %s %v", data, show(checked), err)
			}
		}
	})
}
