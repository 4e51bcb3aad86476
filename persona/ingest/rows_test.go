package ingest

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"evident/persona"
)

func TestFormatOf(t *testing.T) {
	tests := []struct {
		name, path string
		want       Format
		wantErr    bool
	}{
		{"a .jsonl file is JSON Lines", "data/turns.jsonl", JSONL, false},
		{"an .ndjson file is JSON Lines", "turns.ndjson", JSONL, false},
		{"a .json file is a JSON array", "/x/cards.json", JSONArray, false},
		{"a .csv file is CSV", "lexicon.csv", CSV, false},
		{"extensions are matched ignoring case", "TURNS.JSONL", JSONL, false},
		{"an upper-case .CSV is CSV", "Cards.CSV", CSV, false},
		{"a .txt file is an error", "turns.txt", 0, true},
		{"a file without extension is an error", "turns", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FormatOf(tt.path)
			if (err != nil) != tt.wantErr {
				t.Fatalf("FormatOf(%q) error = %v, wantErr %v", tt.path, err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not name the file %q", err, tt.path)
			}
			if got != tt.want {
				t.Errorf("FormatOf(%q) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

func TestFixturesDecodeToTheSameRowsInEveryFormat(t *testing.T) {
	turnLines := map[string][3]int{"turns.jsonl": {1, 2, 4}, "turns.json": {2, 16, 18}, "turns.csv": {2, 3, 5}}
	for file, lines := range turnLines {
		t.Run("chat_turn from "+file+" decodes to the fixture turns", func(t *testing.T) {
			f, err := FormatOf(file)
			if err != nil {
				t.Fatal(err)
			}
			got := mustReadAll(t, readFile(t, "testdata/"+file), f, DecodeTurn)
			checkRows(t, got, []rowOut[persona.Turn]{{lines[0], turnT1, ""}, {lines[1], turnT2, ""}, {lines[2], turnT3, ""}})
		})
	}
	cardLines := map[string][2]int{"cards.jsonl": {1, 2}, "cards.json": {1, 5}, "cards.csv": {2, 3}}
	for file, lines := range cardLines {
		t.Run("character_card from "+file+" decodes to the fixture cards", func(t *testing.T) {
			f, _ := FormatOf(file)
			got := mustReadAll(t, readFile(t, "testdata/"+file), f, DecodeCard)
			checkRows(t, got, []rowOut[persona.Card]{{lines[0], cardRia, ""}, {lines[1], cardSeo, ""}})
		})
	}
	lexLines := map[string][3]int{"lexicon.jsonl": {1, 2, 3}, "lexicon.json": {1, 2, 3}, "lexicon.csv": {2, 3, 4}}
	for file, lines := range lexLines {
		t.Run("topic_lexicon from "+file+" decodes to the fixture rows in order", func(t *testing.T) {
			f, _ := FormatOf(file)
			got := mustReadAll(t, readFile(t, "testdata/"+file), f, DecodeLexicon)
			checkRows(t, got, []rowOut[persona.LexiconRow]{{lines[0], lexicon[0], ""}, {lines[1], lexicon[1], ""}, {lines[2], lexicon[2], ""}})
		})
	}
}

// turnJSONL is a minimal valid chat_turn row with the given extra columns.
func turnJSONL(id, extra string) string {
	s := `{"turn_id":"` + id + `","session_id":"s1","character_id":"ria","model_id":"m-a"`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func minimalTurn(id string) persona.Turn {
	return persona.Turn{TurnID: id, SessionID: "s1", CharacterID: "ria", ModelID: "m-a"}
}

const turnHeader = "turn_id,session_id,character_id,model_id,reply_text,named_entities\n"

func TestJSONLineOf200KiBIsOneRow(t *testing.T) {
	long := strings.Repeat("가나다라마바사", 200<<10/21+1) // > 200 KiB of Hangul
	if len(long) < 200<<10 {
		t.Fatalf("test text is only %d bytes", len(long))
	}
	data := turnJSONL("t1", `"reply_text":"`+long+`"`) + "\n" + turnJSONL("t2", "") + "\n"
	for _, f := range []Format{JSONL, JSONArray} {
		t.Run(f.String()+" reads a 200 KiB row and the row after it", func(t *testing.T) {
			in := data
			if f == JSONArray {
				in = "[" + strings.Replace(data, "\n", ",\n", 1) + "]"
			}
			got := mustReadAll(t, []byte(in), f, DecodeTurn)
			want1 := minimalTurn("t1")
			want1.ReplyText = &long
			checkRows(t, got, []rowOut[persona.Turn]{{1, want1, ""}, {2, minimalTurn("t2"), ""}})
		})
	}
	t.Run("CSV reads a 200 KiB cell", func(t *testing.T) {
		in := turnHeader + "t1,s1,ria,m-a," + long + ",\n"
		got := mustReadAll(t, []byte(in), CSV, DecodeTurn)
		want := minimalTurn("t1")
		want.ReplyText = &long
		checkRows(t, got, []rowOut[persona.Turn]{{2, want, ""}})
	})
}

func TestLineEndingsBOMAndBlankLines(t *testing.T) {
	t1, t2 := minimalTurn("t1"), minimalTurn("t2")
	t1.ReplyText = ptr("안녕")
	bom := "\uFEFF"
	tests := []struct {
		name  string
		f     Format
		in    string
		lines [2]int
	}{
		{"JSONL with CRLF line ends reads both rows", JSONL,
			turnJSONL("t1", `"reply_text":"안녕"`) + "\r\n" + turnJSONL("t2", "") + "\r\n", [2]int{1, 2}},
		{"JSONL with a BOM reads the first row", JSONL,
			bom + turnJSONL("t1", `"reply_text":"안녕"`) + "\n" + turnJSONL("t2", ""), [2]int{1, 2}},
		{"JSONL skips empty and white-space lines but counts them", JSONL,
			"\n  \t\n" + turnJSONL("t1", `"reply_text":"안녕"`) + "\r\n\r\n   \n" + turnJSONL("t2", "") + "\n\n", [2]int{3, 6}},
		{"a JSON array with CRLF line ends reads both elements", JSONArray,
			"[\r\n" + turnJSONL("t1", `"reply_text":"안녕"`) + ",\r\n\r\n" + turnJSONL("t2", "") + "\r\n]\r\n", [2]int{2, 4}},
		{"a JSON array with a BOM reads both elements", JSONArray,
			bom + "[" + turnJSONL("t1", `"reply_text":"안녕"`) + "," + turnJSONL("t2", "") + "]", [2]int{1, 1}},
		{"CSV with CRLF line ends reads both rows", CSV,
			strings.ReplaceAll(turnHeader, "\n", "\r\n") + "t1,s1,ria,m-a,안녕,\r\nt2,s1,ria,m-a,,\r\n", [2]int{2, 3}},
		{"CSV with a BOM still finds the first header column", CSV,
			bom + turnHeader + "t1,s1,ria,m-a,안녕,\nt2,s1,ria,m-a,,\n", [2]int{2, 3}},
		{"CSV skips blank and white-space lines but counts them", CSV,
			"\n" + turnHeader + "\nt1,s1,ria,m-a,안녕,\n   \n\nt2,s1,ria,m-a,,", [2]int{4, 7}},
		{"CSV header names are trimmed of spaces", CSV,
			" turn_id , session_id,character_id ,model_id,reply_text,named_entities\nt1,s1,ria,m-a,안녕,\nt2,s1,ria,m-a,,\n", [2]int{2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustReadAll(t, []byte(tt.in), tt.f, DecodeTurn)
			checkRows(t, got, []rowOut[persona.Turn]{{tt.lines[0], t1, ""}, {tt.lines[1], t2, ""}})
		})
	}
}

func TestNFDInputComesOutNFC(t *testing.T) {
	nfd := norm.NFD.String("하늘")
	if nfd == "하늘" || len(nfd) == len("하늘") {
		t.Fatal("norm.NFD did not decompose the test text")
	}
	nfdSentence := norm.NFD.String("하늘이랑 갔어.")
	turnRow := `"character_id":"` + nfd + `"`
	_ = turnRow
	wantTurn := persona.Turn{TurnID: "t1", SessionID: "s1", CharacterID: "하늘", ModelID: "m-a",
		ReplyText: ptr("하늘이랑 갔어."), NamedEntities: []string{"하늘"}}
	jsonRow := `{"turn_id":"t1","session_id":"s1","character_id":"` + nfd + `","model_id":"m-a","reply_text":"` + nfdSentence + `","named_entities":["` + nfd + `"]}`
	csvIn := turnHeader + `t1,s1,` + nfd + `,m-a,` + nfdSentence + `,"[""` + nfd + `""]"` + "\n"
	for _, tc := range []struct {
		name string
		f    Format
		in   string
		line int
	}{
		{"a JSONL turn", JSONL, jsonRow, 1},
		{"a JSON array turn", JSONArray, "[" + jsonRow + "]", 1},
		{"a CSV turn", CSV, csvIn, 2},
	} {
		t.Run(tc.name+" written in NFD comes out in NFC", func(t *testing.T) {
			got := mustReadAll(t, []byte(tc.in), tc.f, DecodeTurn)
			checkRows(t, got, []rowOut[persona.Turn]{{tc.line, wantTurn, ""}})
		})
	}
	t.Run("a JSON turn with NFD in an escaped string comes out in NFC", func(t *testing.T) {
		esc := ""
		for _, r := range nfd {
			esc += fmt.Sprintf(`\u%04x`, r)
		}
		got, err := DecodeTurn(Raw{Line: 1, JSON: []byte(turnJSONL("t1", `"named_entities":["`+esc+`"]`))})
		if err != nil || len(got.NamedEntities) != 1 || got.NamedEntities[0] != "하늘" {
			t.Fatalf("got %q, %v; want [하늘]", got.NamedEntities, err)
		}
	})
	t.Run("a card in NFD comes out in NFC", func(t *testing.T) {
		row := `{"character_id":"ria","name":"` + nfd + `","honorific_rule":"` + norm.NFD.String("반말") + `","first_person":"나","canon_entities":["` + nfd + `"],"forbidden_topics":["` + norm.NFD.String("도박") + `"],"entity_roles":[{"role":"동생","entity":"` + nfd + `"}],"description":"` + nfd + `"}`
		got, err := DecodeCard(Raw{Line: 1, JSON: []byte(row)})
		if err != nil {
			t.Fatal(err)
		}
		want := persona.Card{CharacterID: "ria", Name: "하늘", HonorificRule: "반말", FirstPerson: "나",
			CanonEntities: []string{"하늘"}, ForbiddenTopics: []string{"도박"},
			EntityRoles: []persona.EntityRole{{Role: "동생", Entity: "하늘"}}, Description: "하늘"}
		if show(got) != show(want) {
			t.Errorf("got  %s\nwant %s", show(got), show(want))
		}
	})
	t.Run("a lexicon row in NFD comes out in NFC", func(t *testing.T) {
		in := "term,topic\n" + norm.NFD.String("카지노") + "," + norm.NFD.String("도박") + "\n"
		got := mustReadAll(t, []byte(in), CSV, DecodeLexicon)
		checkRows(t, got, []rowOut[persona.LexiconRow]{{2, lexicon[0], ""}})
	})
}

func TestInvalidUTF8IsARejectAndTheRunGoesOn(t *testing.T) {
	bad := "하늘\xff이"
	t3 := minimalTurn("t3")
	tests := []struct {
		name string
		f    Format
		in   string
		want []rowOut[persona.Turn]
	}{
		{"JSONL: the bad byte's line and rune column, then the next row", JSONL,
			turnJSONL("t1", "") + "\n" + `{"reply_text":"` + bad + `","turn_id":"t2"}` + "\n" + turnJSONL("t3", "") + "\n",
			[]rowOut[persona.Turn]{{1, minimalTurn("t1"), ""},
				{2, persona.Turn{}, "line 2, column 18: reply_text: invalid UTF-8"},
				{3, t3, ""}}},
		{"JSON array: the bad byte's line and column inside a multi-line element, then the next element", JSONArray,
			"[" + turnJSONL("t1", "") + ",\n  {\"turn_id\":\"t2\",\n   \"reply_text\":\"" + bad + "\"},\n" + turnJSONL("t3", "") + "]",
			[]rowOut[persona.Turn]{{1, minimalTurn("t1"), ""},
				{2, persona.Turn{}, "line 3, column 20: reply_text: invalid UTF-8"},
				{4, t3, ""}}},
		{"CSV: the bad byte's line, column and column name, then the next row", CSV,
			turnHeader + "t1,s1,ria,m-a,,\nt2,s1,ria,m-a,\"" + bad + "\",\nt3,s1,ria,m-a,,\n",
			[]rowOut[persona.Turn]{{2, minimalTurn("t1"), ""},
				{3, persona.Turn{}, "line 3, column 18: reply_text: invalid UTF-8"},
				{4, t3, ""}}},
		{"CSV: invalid UTF-8 in a multi-line cell is placed on its own line", CSV,
			turnHeader + "t2,s1,ria,m-a,\"첫 줄\n둘째\xff\",\nt3,s1,ria,m-a,,\n",
			[]rowOut[persona.Turn]{{2, persona.Turn{}, "line 3, column 3: reply_text: invalid UTF-8"}, {4, t3, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRows(t, mustReadAll(t, []byte(tt.in), tt.f, DecodeTurn), tt.want)
		})
	}
}

func TestJSONArrayBadElementsAreRejectsAndTheRunGoesOn(t *testing.T) {
	in := "[\n" +
		turnJSONL("t1", "") + ",\n" + // line 2
		"  42,\n" + // line 3: not an object
		"  \"리아\" ,\n" + // line 4: a string
		`  {"turn_id": "x", "session_id": },` + "\n" + // line 5: syntax error
		`  {"turn_id": "y", "reply_text": "닫히지 않음` + "\n" + // line 6: string not closed (ends at the newline)
		`     , "session_id": "s"},` + "\n" + // line 7
		`  {"turn_id": "z", "a": [1, 2}, ` + "\n" + // line 8: mismatched bracket; resync at '}'
		"  ,\n" + // line 9: empty element
		`  {"turn_id":"t2","session_id":"s1","character_id":"ria","model_id":"m-a","list":[{"a":"]}"}]},` + "\n" + // line 10
		"]\n" // line 11: trailing comma before ']'
	want := []rowOut[persona.Turn]{
		{2, minimalTurn("t1"), ""},
		{3, persona.Turn{}, "line 3, column 3: want JSON object, got number"},
		{4, persona.Turn{}, "line 4, column 3: want JSON object, got string"},
		{5, persona.Turn{}, "line 5, column 34: bad JSON: invalid character '}' looking for beginning of value"},
		{6, persona.Turn{}, "line 6, column 41: bad JSON: invalid character '\\n' in string literal"},
		{8, persona.Turn{}, "line 8, column 30: bad JSON: invalid character '}' after array element"},
		{9, persona.Turn{}, "line 9, column 3: bad JSON array: ',' with no element before it"},
		{10, minimalTurn("t2"), ""},
		{10, persona.Turn{}, "line 10, column 95: bad JSON array: ',' with no element after it"},
	}
	checkRows(t, mustReadAll(t, []byte(in), JSONArray, DecodeTurn), want)
}

// TestAJSONArrayObjectMissingItsBraceIsOneReject: an element that lost its
// closing '}' is one reject and every element after it is read (it used to
// swallow them all: 1,000 rows read as 2), whether the array is written one
// element a line, indented (json.dumps(indent=2)), or on one line, and
// whether the ',' after it is there or not. The reject's column is the cut
// element's last character (where its input ended).
func TestAJSONArrayObjectMissingItsBraceIsOneReject(t *testing.T) {
	broken := strings.TrimSuffix(turnJSONL("t2", ""), "}")
	t.Run("one element a line", func(t *testing.T) {
		in := "[\n" + turnJSONL("t1", "") + ",\n" + broken + ",\n" + turnJSONL("t3", "") + ",\n" + turnJSONL("t4", "") + "\n]\n"
		checkRows(t, mustReadAll(t, []byte(in), JSONArray, DecodeTurn), []rowOut[persona.Turn]{
			{2, minimalTurn("t1"), ""},
			{3, persona.Turn{}, fmt.Sprintf("line 3, column %d: bad JSON: unexpected end of JSON input", len(broken))},
			{4, minimalTurn("t3"), ""},
			{5, minimalTurn("t4"), ""},
		})
	})
	t.Run("indented, the brace's line removed", func(t *testing.T) {
		in := "[\n  {\n    \"turn_id\": \"t1\",\n    \"session_id\": \"s1\",\n    \"character_id\": \"ria\",\n    \"model_id\": \"m-a\"\n  },\n" +
			"  {\n    \"turn_id\": \"t2\",\n    \"session_id\": \"s1\"\n  ,\n" + // line 8: the '}' of t2 is gone
			"  {\n    \"turn_id\": \"t3\",\n    \"session_id\": \"s1\",\n    \"character_id\": \"ria\",\n    \"model_id\": \"m-a\"\n  }\n]\n"
		got := mustReadAll(t, []byte(in), JSONArray, DecodeTurn)
		checkRows(t, got, []rowOut[persona.Turn]{
			{2, minimalTurn("t1"), ""},
			{8, persona.Turn{}, "line 10, column 22: bad JSON: unexpected end of JSON input"},
			{12, minimalTurn("t3"), ""},
		})
	})
	t.Run("on one line, with and without the comma", func(t *testing.T) {
		for _, sep := range []string{",", " ", ""} {
			in := "[" + turnJSONL("t1", "") + "," + broken + sep + turnJSONL("t3", "") + "," + turnJSONL("t4", "") + "]"
			got := mustReadAll(t, []byte(in), JSONArray, DecodeTurn)
			if len(got) != 4 || got[0].Err != "" || got[1].Err == "" || got[2].Err != "" || got[3].Err != "" {
				t.Errorf("separator %q: %d rows %+v; want t1, one reject, t3, t4", sep, len(got), got)
			}
		}
	})
}

// TestAByteBeyondASCIIIsNamedByItsValue: a stray byte in a message is its
// hex value (printed as a rune, 0xEF read as 'ï'), and a UTF-8 byte order
// mark in the middle of a file is named as one.
func TestAByteBeyondASCIIIsNamedByItsValue(t *testing.T) {
	got := mustReadAll(t, []byte(turnJSONL("t1", "")+"\n\uFEFF"+turnJSONL("t2", "")+"\n"), JSONL, DecodeTurn)
	checkRows(t, got, []rowOut[persona.Turn]{
		{1, minimalTurn("t1"), ""},
		{2, persona.Turn{}, "line 2, column 1: want JSON object, got invalid JSON starting with byte 0xEF (a UTF-8 byte order mark, U+FEFF, where only the file's start may have one?)"},
	})
	// A word is not the literal it starts like.
	got = mustReadAll(t, []byte("not json at all\nnull\nfalsehood\n"), JSONL, DecodeTurn)
	checkRows(t, got, []rowOut[persona.Turn]{
		{1, persona.Turn{}, "line 1, column 1: want JSON object, got invalid JSON starting with 'n'"},
		{2, persona.Turn{}, "line 2, column 1: want JSON object, got null"},
		{3, persona.Turn{}, "line 3, column 1: want JSON object, got bool"},
	})
	if _, err := readAll(t, []byte("\xf1\x00junk"), JSONArray, DecodeTurn); err == nil || err.Error() != "line 1, column 1: want '[' to open a JSON array, got byte 0xF1" {
		t.Errorf("error = %v", err)
	}
}

func TestFatalErrorsNameLineAndColumn(t *testing.T) {
	tests := []struct {
		name    string
		f       Format
		in      string
		rows    int
		wantErr string
	}{
		{"an empty JSON array table is fatal", JSONArray, "", 0,
			"line 1, column 1: unexpected end of input: want a JSON array, got an empty table"},
		{"a JSON array table that holds an object is fatal", JSONArray, "\n  {\"turn_id\":\"t1\"}", 0,
			"line 2, column 3: want '[' to open a JSON array, got '{'"},
		{"a JSON array that is never closed is fatal after its complete elements", JSONArray,
			"[" + turnJSONL("t1", "") + ",\n" + turnJSONL("t2", ""), 1,
			fmt.Sprintf("line 2, column %d: unexpected end of input: the JSON array element that starts at line 2, column 1 is not closed", len(turnJSONL("t2", ""))+1)},
		{"an element whose brace is never closed is fatal", JSONArray,
			"[" + turnJSONL("t1", "") + ",\n{\"turn_id\":\"t2\", \"x\":{\n", 1,
			"line 3, column 1: unexpected end of input: the JSON array element that starts at line 2, column 1 is not closed"},
		{"data after the JSON array is fatal", JSONArray,
			"[" + turnJSONL("t1", "") + "]\n\n  x", 1,
			"line 3, column 3: unexpected 'x' after the end of the JSON array"},
		{"a CSV without a header row is fatal", CSV, "\n\n", 0,
			"line 1, column 1: missing CSV header row: the table is empty"},
		{"a CSV header that names a column twice is fatal", CSV, "turn_id,하늘,하늘\n", 0,
			"line 1, column 12: CSV header names column \"하늘\" twice (cells 2 and 3)"},
		{"a CSV header of empty names is fatal", CSV, " , \n", 0,
			"line 1, column 1: CSV header row is empty"},
		{"a CSV header with a bad quote is fatal", CSV, "turn_id,\"세션\"x\n", 0,
			"line 1, column 12: bad CSV header: extraneous or missing \" in quoted-field"},
		{"a CSV header with invalid UTF-8 is fatal", CSV, "turn_id,하\xff\n", 0,
			"line 1, column 10: CSV header: invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, []byte(tt.in), tt.f, DecodeTurn)
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if len(got) != tt.rows {
				t.Errorf("got %d rows before the error, want %d: %+v", len(got), tt.rows, got)
			}
		})
	}
	t.Run("Next returns the same fatal error again", func(t *testing.T) {
		rows, err := NewRows(strings.NewReader("[1"), JSONArray)
		if err != nil {
			t.Fatal(err)
		}
		var errs []string
		for range 3 {
			_, err := rows.Next()
			errs = append(errs, fmt.Sprint(err))
		}
		if errs[1] != errs[2] || errs[2] == "EOF" {
			t.Errorf("errors = %q, want the fatal error repeated", errs)
		}
	})
	t.Run("an I/O error is fatal and names line and column", func(t *testing.T) {
		for _, f := range []Format{JSONL, JSONArray, CSV} {
			in := io.MultiReader(strings.NewReader("term,topic\n"), errReader{})
			if f == JSONArray {
				in = io.MultiReader(strings.NewReader("[\n{\"term\":"), errReader{})
			}
			rows, err := NewRows(in, f)
			if err != nil {
				t.Fatal(err)
			}
			for {
				_, err = rows.Next()
				if err != nil {
					break
				}
			}
			if err == io.EOF || !strings.Contains(err.Error(), "disk on fire") || !strings.HasPrefix(err.Error(), "line 2, column ") {
				t.Errorf("%v: error = %v, want a read error at line 2", f, err)
			}
		}
	})
	t.Run("NewRows refuses an unknown format", func(t *testing.T) {
		if _, err := NewRows(strings.NewReader(""), Format(9)); err == nil {
			t.Error("no error")
		}
	})
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, fmt.Errorf("disk on fire") }

func TestCSVRecordProblemsAreRejectsAndTheRunGoesOn(t *testing.T) {
	in := turnHeader +
		"t1,s1,ria,m-a,,\n" + // 2
		"t2,s1,ria\n" + // 3: too few cells
		"t3,s1,ria,m-a,,,여분\n" + // 4: too many cells
		"t4,s1,ria,m-a,\"안녕\"하,\n" + // 5: bad quote
		"t5,s1,ria,m-a,안\"녕,\n" + // 6: bare quote
		"t6,s1,ria,m-a,,\n" // 7
	want := []rowOut[persona.Turn]{
		{2, minimalTurn("t1"), ""},
		{3, persona.Turn{}, "line 3: want 6 cells as in the header, got 3"},
		{4, persona.Turn{}, "line 4, column 17: want 6 cells as in the header, got 7"},
		{5, persona.Turn{}, "line 5, column 18: bad CSV: extraneous or missing \" in quoted-field"},
		{6, persona.Turn{}, "line 6, column 16: bad CSV: bare \" in non-quoted-field"},
		{7, minimalTurn("t6"), ""},
	}
	checkRows(t, mustReadAll(t, []byte(in), CSV, DecodeTurn), want)
	t.Run("a cell after a multi-line cell is placed on its own line and rune column", func(t *testing.T) {
		in := turnHeader + "t1,s1,ria,m-a,\"첫 줄\n둘째 줄\",5\n"
		checkRows(t, mustReadAll(t, []byte(in), CSV, DecodeTurn), []rowOut[persona.Turn]{
			{2, persona.Turn{}, "line 3, column 7: named_entities: want JSON array of strings or null, got number"}})
	})
}

func TestRequiredColumns(t *testing.T) {
	type tc struct {
		name, row, want string
	}
	var tests []tc
	for _, f := range []string{"turn_id", "session_id", "character_id", "model_id"} {
		full := map[string]string{"turn_id": `"t1"`, "session_id": `"s1"`, "character_id": `"ria"`, "model_id": `"m-a"`}
		build := func(v string) string {
			var parts []string
			for _, k := range []string{"turn_id", "session_id", "character_id", "model_id"} {
				if k == f {
					if v != "" {
						parts = append(parts, `"`+k+`":`+v)
					}
					continue
				}
				parts = append(parts, `"`+k+`":`+full[k])
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
		row := build("")
		tests = append(tests, tc{"a turn without " + f + " is rejected naming " + f, row, "line 1: " + f + ": required column is missing"})
		for _, v := range []struct{ json, got string }{{"null", "null"}, {`""`, "empty string"}, {"7", "number"}, {`["t"]`, "array"}} {
			row := build(v.json)
			col := strings.Index(row, `"`+f+`":`) + len(f) + 4
			tests = append(tests, tc{"a turn whose " + f + " is " + v.got + " is rejected", row,
				fmt.Sprintf("line 1, column %d: %s: want non-empty string, got %s", col, f, v.got)})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeTurn(Raw{Line: 1, JSON: []byte(tt.row)})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v\nwant    %s", err, tt.want)
			}
		})
	}
	t.Run("a CSV turn whose header lacks model_id is rejected naming model_id", func(t *testing.T) {
		got := mustReadAll(t, []byte("turn_id,session_id,character_id\nt1,s1,ria\n"), CSV, DecodeTurn)
		checkRows(t, got, []rowOut[persona.Turn]{{2, persona.Turn{}, "line 2: model_id: required column is missing from the header"}})
	})
	t.Run("a CSV turn with an empty session_id cell is rejected at that cell", func(t *testing.T) {
		got := mustReadAll(t, []byte(turnHeader+"t1,,ria,m-a,,\n"), CSV, DecodeTurn)
		checkRows(t, got, []rowOut[persona.Turn]{{2, persona.Turn{}, "line 2, column 4: session_id: want non-empty string, got an empty cell"}})
	})
	cardTests := []struct{ name, row, want string }{
		{"a card without name is rejected", `{"character_id":"ria","honorific_rule":"반말","first_person":"나"}`,
			"line 1: name: required column is missing"},
		{"a card with an empty first_person is rejected", `{"character_id":"ria","name":"리아","honorific_rule":"반말","first_person":""}`,
			"line 1, column 72: first_person: want non-empty string, got empty string"},
		{"a card whose honorific_rule is neither 반말 nor 존댓말 is rejected", `{"character_id":"ria","name":"리아","honorific_rule":"해요체","first_person":"나"}`,
			`line 1, column 52: honorific_rule: want "반말" or "존댓말", got "해요체"`},
		{"a card without character_id is rejected", `{"name":"리아","honorific_rule":"반말","first_person":"나"}`,
			"line 1: character_id: required column is missing"},
	}
	for _, tt := range cardTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeCard(Raw{Line: 1, JSON: []byte(tt.row)})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v\nwant    %s", err, tt.want)
			}
		})
	}
	t.Run("a CSV card with an empty honorific_rule cell is rejected", func(t *testing.T) {
		in := "character_id,name,honorific_rule,first_person\nria,리아,,나\n"
		checkRows(t, mustReadAll(t, []byte(in), CSV, DecodeCard),
			[]rowOut[persona.Card]{{2, persona.Card{}, "line 2, column 8: honorific_rule: want non-empty string, got an empty cell"}})
	})
	lexTests := []struct{ name, row, want string }{
		{"a lexicon row without topic is rejected", `{"term":"카지노"}`, "line 1: topic: required column is missing"},
		{"a lexicon row with an empty term is rejected", `{"term":"","topic":"도박"}`, "line 1, column 9: term: want non-empty string, got empty string"},
		{"a lexicon row whose term is a number is rejected", `{"term":1,"topic":"도박"}`, "line 1, column 9: term: want non-empty string, got number"},
	}
	for _, tt := range lexTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeLexicon(Raw{Line: 1, JSON: []byte(tt.row)})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v\nwant    %s", err, tt.want)
			}
		})
	}
	t.Run("a CSV lexicon without a topic column is rejected", func(t *testing.T) {
		checkRows(t, mustReadAll(t, []byte("term\n카지노\n"), CSV, DecodeLexicon),
			[]rowOut[persona.LexiconRow]{{2, persona.LexiconRow{}, "line 2: topic: required column is missing from the header"}})
	})
}

func TestNamedEntitiesNullIsNotEmpty(t *testing.T) {
	jsonRows := []string{
		turnJSONL("t1", `"named_entities":null`),
		turnJSONL("t2", ""),
		turnJSONL("t3", `"named_entities":[]`),
		turnJSONL("t4", `"named_entities":[ "하늘" ]`),
	}
	csvIn := turnHeader + "t1,s1,ria,m-a,,null\nt2,s1,ria,m-a,,\nt3,s1,ria,m-a,,[]\nt4,s1,ria,m-a,,\"[\"\"하늘\"\"]\"\n"
	inputs := []struct {
		f  Format
		in string
	}{
		{JSONL, strings.Join(jsonRows, "\n")},
		{JSONArray, "[" + strings.Join(jsonRows, ",\n") + "]"},
		{CSV, csvIn},
	}
	for _, in := range inputs {
		t.Run(in.f.String()+": null and absent give nil, [] gives an empty non-nil list", func(t *testing.T) {
			got := mustReadAll(t, []byte(in.in), in.f, DecodeTurn)
			if len(got) != 4 {
				t.Fatalf("got %d rows, want 4: %+v", len(got), got)
			}
			for i, g := range got {
				if g.Err != "" {
					t.Fatalf("row %d: %s", i, g.Err)
				}
			}
			if got[0].V.NamedEntities != nil {
				t.Errorf("null: got %#v, want nil", got[0].V.NamedEntities)
			}
			if got[1].V.NamedEntities != nil {
				t.Errorf("absent or empty cell: got %#v, want nil", got[1].V.NamedEntities)
			}
			if got[2].V.NamedEntities == nil || len(got[2].V.NamedEntities) != 0 {
				t.Errorf("[]: got %#v, want a non-nil empty slice", got[2].V.NamedEntities)
			}
			if len(got[3].V.NamedEntities) != 1 || got[3].V.NamedEntities[0] != "하늘" {
				t.Errorf(`["하늘"]: got %#v`, got[3].V.NamedEntities)
			}
		})
	}
	t.Run("the encoding/json path keeps null and [] apart too", func(t *testing.T) {
		a, _ := decodeTurnJSONStd(Raw{Line: 1, JSON: []byte(jsonRows[0])})
		b, _ := decodeTurnJSONStd(Raw{Line: 1, JSON: []byte(jsonRows[2])})
		if a.NamedEntities != nil || b.NamedEntities == nil {
			t.Errorf("null → %#v, [] → %#v", a.NamedEntities, b.NamedEntities)
		}
	})
}

func TestColumnValues(t *testing.T) {
	tests := []struct {
		name  string
		extra string
		want  func(*persona.Turn)
		err   string // with "%d" for the column of the value when set
	}{
		{"created_at in RFC 3339 with nanoseconds is kept as written", `"created_at":"2024-05-01T10:00:00.123456789+09:00"`,
			func(t *persona.Turn) { t.CreatedAt = "2024-05-01T10:00:00.123456789+09:00" }, ""},
		{"created_at null is absent", `"created_at":null`, func(*persona.Turn) {}, ""},
		{"created_at with lower-case t and z is RFC 3339 too (§5.6), kept as written", `"created_at":"2024-05-01t10:00:00z"`,
			func(t *persona.Turn) { t.CreatedAt = "2024-05-01t10:00:00z" }, ""},
		{"created_at with a space instead of T is rejected", `"created_at":"2024-05-01 10:00:00"`, nil,
			`created_at: want RFC 3339 time string, got "2024-05-01 10:00:00"`},
		{"created_at in Korean words is rejected", `"created_at":"어제 저녁"`, nil,
			`created_at: want RFC 3339 time string, got "어제 저녁"`},
		{"created_at with month 13 is rejected", `"created_at":"2024-13-01T00:00:00Z"`, nil,
			`created_at: want RFC 3339 time string, got "2024-13-01T00:00:00Z"`},
		{"created_at as a number is rejected", `"created_at":1714521600`, nil,
			`created_at: want RFC 3339 time string, got number`},
		{"user_asked_recall absent is false", ``, func(*persona.Turn) {}, ""},
		{"user_asked_recall true is true", `"user_asked_recall":true`, func(t *persona.Turn) { t.UserAskedRecall = true }, ""},
		{"user_asked_recall null is rejected", `"user_asked_recall":null`, nil, "user_asked_recall: want true or false, got null"},
		{"user_asked_recall as a string is rejected", `"user_asked_recall":"true"`, nil, `user_asked_recall: want true or false, got "true"`},
		{"user_asked_recall as 1 is rejected", `"user_asked_recall":1`, nil, `user_asked_recall: want true or false, got number`},
		{"an empty user_message string is kept apart from null", `"user_message":""`, func(t *persona.Turn) { t.UserMessage = ptr("") }, ""},
		{"reply_text as a number is rejected", `"reply_text":3`, nil, "reply_text: want string or null, got number"},
		{"named_entities as a number is rejected", `"named_entities":5`, nil, "named_entities: want array of strings or null, got number"},
		{"named_entities holding a number is rejected", `"named_entities":["하늘",5]`, nil, "named_entities: want array of strings or null, got number element"},
		{"named_entities holding null is rejected", `"named_entities":["하늘",null]`, nil,
			"named_entities: want array of non-empty strings or null, got empty or null element at index 1"},
		{"named_entities holding an empty name is rejected", `"named_entities":[""]`, nil,
			"named_entities: want array of non-empty strings or null, got empty or null element at index 0"},
		{"prompt_id is kept", `"prompt_id":"프롬프트-1"`, func(t *persona.Turn) { t.PromptID = "프롬프트-1" }, ""},
		{"unknown columns of any shape are ignored", `"extra":{"a":[1,-2.5e3,true,null,"\"x\""]},"점수":7`, func(*persona.Turn) {}, ""},
		{"escapes in strings are decoded", `"reply_text":"하늘\n\"안녕\"\t\u0041\ud83d\ude00"`,
			func(t *persona.Turn) { t.ReplyText = ptr("하늘\n\"안녕\"\tA😀") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := turnJSONL("t1", tt.extra)
			got, err := DecodeTurn(Raw{Line: 7, JSON: []byte(row)})
			if tt.want == nil {
				field, _, _ := strings.Cut(tt.extra[1:], `"`)
				col := strings.Index(row, `"`+field+`":`) + len(field) + 4
				want := fmt.Sprintf("line 7, column %d: %s", utf8.RuneCountInString(row[:col-1])+1, tt.err)
				if err == nil || err.Error() != want {
					t.Errorf("error = %v\nwant    %s", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := minimalTurn("t1")
			tt.want(&want)
			if show(got) != show(want) {
				t.Errorf("got  %s\nwant %s", show(got), show(want))
			}
		})
	}
	csvTests := []struct {
		name, header, cells, err string
		want                     func(*persona.Turn)
	}{
		{"CSV user_asked_recall TRUE in capitals is true", "user_asked_recall", "TRUE", "", func(t *persona.Turn) { t.UserAskedRecall = true }},
		{"CSV user_asked_recall False is false", "user_asked_recall", "False", "", func(*persona.Turn) {}},
		{"CSV user_asked_recall yes is rejected", "user_asked_recall", "yes", `line 2, column 15: user_asked_recall: want true, false or an empty cell, got "yes"`, nil},
		{"CSV created_at that does not parse is rejected", "created_at", "2024/05/01", `line 2, column 15: created_at: want RFC 3339 time string, got "2024/05/01"`, nil},
		{"CSV named_entities that is not JSON is rejected", "named_entities", "하늘;바다", `line 2, column 15: named_entities: want JSON array of strings or null, got invalid JSON (invalid character 'í' looking for beginning of value)`, nil},
		{"CSV named_entities that is a JSON object is rejected", "named_entities", `"{""a"":1}"`, `line 2, column 15: named_entities: want JSON array of strings or null, got object`, nil},
		{"CSV nullable text cells that are empty are null", "user_message,first_person", ",", "", func(*persona.Turn) {}},
		{"CSV unknown columns are ignored", "메모", "아무거나", "", func(*persona.Turn) {}},
	}
	for _, tt := range csvTests {
		t.Run(tt.name, func(t *testing.T) {
			in := "turn_id,session_id,character_id,model_id," + tt.header + "\nt1,s1,ria,m-a," + tt.cells + "\n"
			got := mustReadAll(t, []byte(in), CSV, DecodeTurn)
			if tt.want == nil {
				checkRows(t, got, []rowOut[persona.Turn]{{2, persona.Turn{}, tt.err}})
				return
			}
			want := minimalTurn("t1")
			tt.want(&want)
			checkRows(t, got, []rowOut[persona.Turn]{{2, want, ""}})
		})
	}
}

func TestCardColumns(t *testing.T) {
	base := `"character_id":"ria","name":"리아","honorific_rule":"반말","first_person":"나"`
	minimal := persona.Card{CharacterID: "ria", Name: "리아", HonorificRule: "반말", FirstPerson: "나",
		CanonEntities: []string{}, ForbiddenTopics: []string{}, EntityRoles: []persona.EntityRole{}}
	tests := []struct {
		name, extra, err string
		want             func(*persona.Card)
	}{
		{"absent lists come out empty, not nil", ``, "", func(*persona.Card) {}},
		{"null lists come out empty, not nil", `"canon_entities":null,"forbidden_topics":null,"entity_roles":null`, "", func(*persona.Card) {}},
		{"public null is false", `"public":null`, "", func(*persona.Card) {}},
		{"public true is true", `"public":true`, "", func(c *persona.Card) { c.Public = true }},
		{"public as a string is rejected", `"public":"yes"`, `line 1, column 85: public: want true or false, got "yes"`, nil},
		{"an empty forbidden topic is rejected", `"forbidden_topics":["도박",""]`,
			"line 1, column 95: forbidden_topics: want array of non-empty strings or null, got empty or null element at index 1", nil},
		{"canon_entities as a string is rejected", `"canon_entities":"하늘"`,
			"line 1, column 93: canon_entities: want array of strings or null, got string", nil},
		{"an entity_roles element without entity is rejected", `"entity_roles":[{"role":"동생"}]`,
			`line 1, column 91: entity_roles: want array of {"role", "entity"} objects or null, got element at index 0 without a non-empty role and entity`, nil},
		{"an entity_roles element whose role is a number is rejected", `"entity_roles":[{"role":1,"entity":"하늘"}]`,
			`line 1, column 91: entity_roles: want array of {"role", "entity"} objects or null, got element with role number`, nil},
		{"entity_roles holding a string is rejected", `"entity_roles":["동생"]`,
			`line 1, column 91: entity_roles: want array of {"role", "entity"} objects or null, got string element`, nil},
		{"description null is empty", `"description":null`, "", func(*persona.Card) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := "{" + base
			if tt.extra != "" {
				row += "," + tt.extra
			}
			row += "}"
			got, err := DecodeCard(Raw{Line: 1, JSON: []byte(row)})
			if tt.want == nil {
				if err == nil || err.Error() != tt.err {
					t.Errorf("error = %v\nwant    %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := minimal
			tt.want(&want)
			if show(got) != show(want) {
				t.Errorf("got  %s\nwant %s", show(got), show(want))
			}
			if got.CanonEntities == nil || got.ForbiddenTopics == nil || got.EntityRoles == nil {
				t.Errorf("a list is nil: %#v", got)
			}
		})
	}
	t.Run("CSV list cells that are empty or null come out empty, not nil", func(t *testing.T) {
		in := "character_id,name,honorific_rule,first_person,canon_entities,forbidden_topics,entity_roles\nria,리아,반말,나,,null, null \n"
		checkRows(t, mustReadAll(t, []byte(in), CSV, DecodeCard), []rowOut[persona.Card]{{2, minimal, ""}})
	})
	t.Run("a CSV entity_roles cell with a bad element is rejected at the cell", func(t *testing.T) {
		in := "character_id,name,honorific_rule,first_person,entity_roles\nria,리아,반말,나,\"[{\"\"role\"\":\"\"동생\"\"}]\"\n"
		checkRows(t, mustReadAll(t, []byte(in), CSV, DecodeCard), []rowOut[persona.Card]{{2, persona.Card{},
			`line 2, column 13: entity_roles: want array of {"role", "entity"} objects or null, got element at index 0 without a non-empty role and entity`}})
	})
	t.Run("a CSV honorific_rule that is not 반말 or 존댓말 is rejected", func(t *testing.T) {
		in := "character_id,name,honorific_rule,first_person\nria,리아,존대,나\n"
		checkRows(t, mustReadAll(t, []byte(in), CSV, DecodeCard), []rowOut[persona.Card]{{2, persona.Card{},
			`line 2, column 8: honorific_rule: want "반말" or "존댓말", got "존대"`}})
	})
}

func TestRowErrorFormatsTheKnownParts(t *testing.T) {
	tests := []struct {
		name string
		e    RowError
		want string
	}{
		{"line, column and field", RowError{Line: 12, Column: 5, Field: "named_entities", Reason: "want array of strings or null, got number"},
			"line 12, column 5: named_entities: want array of strings or null, got number"},
		{"line and reason only", RowError{Line: 3, Reason: "empty row"}, "line 3: empty row"},
		{"no line", RowError{Field: "term", Reason: "x"}, "term: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecodeOfRawsBuiltByHand(t *testing.T) {
	t.Run("a Raw with Err decodes to that error", func(t *testing.T) {
		e := &RowError{Line: 4, Reason: "boom"}
		if _, err := DecodeTurn(Raw{Line: 4, Err: e}); err != e {
			t.Errorf("got %v", err)
		}
		if _, err := DecodeCard(Raw{Line: 4, Err: fmt.Errorf("plain")}); err == nil || err.Error() != "line 4: plain" {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a Raw with nothing set is an empty row", func(t *testing.T) {
		if _, err := DecodeLexicon(Raw{Line: 2}); err == nil || err.Error() != "line 2: empty row" {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a CSV Raw with invalid UTF-8 in a cell is rejected at the cell's line", func(t *testing.T) {
		_, err := DecodeLexicon(Raw{Line: 2, CSV: []string{"하\xff", "도박"}, Header: []string{"term", "topic"}})
		if err == nil || err.Error() != "line 2: term: invalid UTF-8" {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a CSV Raw whose cells do not match its header is rejected", func(t *testing.T) {
		_, err := DecodeLexicon(Raw{Line: 2, CSV: []string{"하늘"}, Header: []string{"term", "topic"}})
		if err == nil || err.Error() != "line 2: want 2 cells as in the header, got 1" {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a JSON row that is an array is rejected", func(t *testing.T) {
		_, err := DecodeLexicon(Raw{Line: 2, JSON: []byte(` ["카지노"]`)})
		if err == nil || err.Error() != "line 2, column 2: want JSON object, got array" {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a JSON row with trailing data is rejected", func(t *testing.T) {
		_, err := DecodeTurn(Raw{Line: 2, JSON: []byte(turnJSONL("t1", "") + " {}")})
		if err == nil || !strings.HasPrefix(err.Error(), "line 2, column 74: bad JSON: invalid character '{' after top-level value") {
			t.Errorf("got %v", err)
		}
	})
}

func TestRawsStayValidAndDecodeOnOtherGoroutines(t *testing.T) {
	var b strings.Builder
	const n = 500
	for i := range n {
		fmt.Fprintf(&b, `{"turn_id":"t%d","session_id":"s","character_id":"ria","model_id":"m","reply_text":"답장 %d","named_entities":["하늘%d"]}`+"\n", i, i, i)
	}
	for _, f := range []Format{JSONL, JSONArray} {
		t.Run(f.String()+" rows read first and decoded later, in parallel, are intact", func(t *testing.T) {
			in := b.String()
			if f == JSONArray {
				in = "[" + strings.ReplaceAll(strings.TrimSuffix(in, "\n"), "\n", ",\n") + "]"
			}
			rows, err := NewRows(strings.NewReader(in), f)
			if err != nil {
				t.Fatal(err)
			}
			var raws []Raw
			for {
				raw, err := rows.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				raws = append(raws, raw)
			}
			if len(raws) != n {
				t.Fatalf("got %d rows", len(raws))
			}
			var wg sync.WaitGroup
			errs := make([]string, n)
			for w := range 4 {
				wg.Go(func() {
					for i := w; i < n; i += 4 {
						tt, err := DecodeTurn(raws[i])
						if err != nil || tt.TurnID != fmt.Sprintf("t%d", i) || *tt.ReplyText != fmt.Sprintf("답장 %d", i) ||
							tt.NamedEntities[0] != fmt.Sprintf("하늘%d", i) || raws[i].Line != i+1 {
							errs[i] = fmt.Sprintf("row %d: %+v %v", i, tt, err)
						}
					}
				})
			}
			wg.Wait()
			for _, e := range errs {
				if e != "" {
					t.Error(e)
				}
			}
		})
	}
	t.Run("CSV rows read first are intact", func(t *testing.T) {
		in := turnHeader + "t1,s1,ria,m-a,하나,\nt2,s1,ria,m-a,둘,\n"
		rows, _ := NewRows(strings.NewReader(in), CSV)
		a, _ := rows.Next()
		b, _ := rows.Next()
		ta, _ := DecodeTurn(a)
		tb, _ := DecodeTurn(b)
		if *ta.ReplyText != "하나" || *tb.ReplyText != "둘" {
			t.Errorf("got %q, %q", *ta.ReplyText, *tb.ReplyText)
		}
	})
}

func TestFastReaderAgreesWithEncodingJSON(t *testing.T) {
	rows := []struct{ name, row string }{
		{"the benchmark row", benchTurn},
		{"a row with every column", `{"turn_id":"t1","session_id":"s1","character_id":"ria","model_id":"m","user_message":null,"reply_text":"안녕","first_person":"나","named_entities":[],"honorific_level":null,"user_asked_recall":false,"created_at":null,"prompt_id":null}`},
		{"a row written with \\u escapes (Python's default)", `{"turn_id":"t1","session_id":"s1","character_id":"\ub9ac\uC544","model_id":"m","reply_text":"\ud558\ub298 \ud83d\ude00"}`},
		{"white space everywhere", " {\t\"turn_id\" : \"t1\" ,\r\n\"session_id\":\"s\",\"character_id\":\"c\",\"model_id\":\"m\" } "},
		{"a key that differs only in case", turnJSONL("t1", `"Reply_Text":"안녕"`)},
		{"a repeated column", turnJSONL("t1", `"reply_text":"가","reply_text":"나"`)},
		{"an escaped key", turnJSONL("t1", `"reply\u005ftext":"가"`)},
		{"a lone surrogate", turnJSONL("t1", `"reply_text":"\ud800x"`)},
		{"deep nesting", turnJSONL("t1", `"x":`+strings.Repeat("[", 70)+strings.Repeat("]", 70))},
		{"an empty required column", `{"turn_id":"","session_id":"s1","character_id":"ria","model_id":"m-a"}`},
		{"trailing garbage after the object", benchTurn + ` x`},
		{"a number where a string belongs", turnJSONL("t1", `"reply_text":5`)},
	}
	for _, tt := range rows {
		t.Run(tt.name+" decodes the same with both libraries", func(t *testing.T) {
			std, err := decodeTurnJSONStd(Raw{Line: 1, JSON: []byte(tt.row)})
			dec, err2 := DecodeTurn(Raw{Line: 1, JSON: []byte(tt.row)})
			if show(dec) != show(std) || fmt.Sprint(err2) != fmt.Sprint(err) {
				t.Errorf("DecodeTurn differs from encoding/json: %s %v / %s %v", show(dec), err2, show(std), err)
			}
		})
	}
}

func TestPositionsCountRunesNotBytes(t *testing.T) {
	row := `{"reply_text":"하늘이랑 바다","turn_id":5}`
	_, err := DecodeTurn(Raw{Line: 1, JSON: []byte(row)})
	want := fmt.Sprintf("line 1, column %d: turn_id: want non-empty string, got number", utf8.RuneCountInString(row[:strings.Index(row, "5")])+1)
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	if !bytes.Contains([]byte(want), []byte("column 35")) {
		t.Errorf("unexpected column in %s", want)
	}
}

func TestAdversarialInputsStayFast(t *testing.T) {
	const n = 100_000
	tests := []struct {
		name string
		f    Format
		in   string
	}{
		{"a JSON array of braces closed by brackets", JSONArray, "[" + strings.Repeat("{", n) + strings.Repeat("]", n)},
		{"a JSON array of brackets closed by braces", JSONArray, "[" + strings.Repeat("[", n) + strings.Repeat("}", n) + "]"},
		{"a JSON array of empty elements", JSONArray, "[" + strings.Repeat(",", n) + "]"},
		{"a JSON array element of unclosed strings", JSONArray, "[{" + strings.Repeat("\"\n", n) + "}]"},
		{"a JSONL row nested very deep", JSONL, turnJSONL("t1", `"x":`+strings.Repeat("[", n)+strings.Repeat("]", n))},
		{"a JSONL row that is deep garbage", JSONL, strings.Repeat("{\"a\":", n)},
		{"a CSV row of many cells", CSV, turnHeader + strings.Repeat(",", n) + "\n"},
		{"a CSV row of many bad quotes", CSV, turnHeader + strings.Repeat("a\"\n", n)},
	}
	for _, tt := range tests {
		// No clock here (speed is for benchmarks): a quadratic reader would
		// run past the test timeout instead of finishing.
		t.Run(tt.name+" is read to the end", func(t *testing.T) {
			_, _ = readAll(t, []byte(tt.in), tt.f, DecodeTurn)
		})
	}
}

// TestCSVUnclosedQuoteIsFatal: a quote that swallows the lines after it would
// hide many rows in one reject, so reading stops with the lines named.
func TestCSVUnclosedQuoteIsFatal(t *testing.T) {
	in := "term,topic\n선거,현실 정치\n\"국회,현실 정치\n처방,의료 조언\n투표,현실 정치\n"
	rows, err := NewRows(strings.NewReader(in), CSV)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rows.Next()
	if err != nil || raw.Line != 2 {
		t.Fatalf("first row: %+v %v", raw, err)
	}
	_, err = rows.Next()
	if err == nil || !strings.Contains(err.Error(), "line 3: a quoted cell") || !strings.Contains(err.Error(), "lines 3 to 5") {
		t.Fatalf("err = %v", err)
	}
	if _, again := rows.Next(); again == nil || again.Error() != err.Error() {
		t.Errorf("the next call gave %v, want the same error", again)
	}
}

// A \u escape of half a surrogate pair is a reject naming its column and
// field (encoding/json would read it as U+FFFD: a name "�", a reply's
// verbatim evidence with a character the row does not have); a pair, an
// escaped backslash before "u" and other escapes are text as before.
func TestALoneSurrogateEscapeIsAReject(t *testing.T) {
	tests := []struct {
		name, cols, at, want string // at: the escape the error points at; want: the error, "" for none
	}{
		{"a high half alone", `"named_entities":["\ud800"]`, `\ud800`, `named_entities: \ud800 is half of a surrogate pair`},
		{"a low half first", `"reply_text":"a\uDC00b"`, `\uDC00`, `reply_text: \uDC00 is half of a surrogate pair`},
		{"a high half before another high half", `"reply_text":"\ud83d\ud83d"`, `\ud83d`, `reply_text: \ud83d is half`},
		{"a high half at the end of the text", `"reply_text":"끝\ud83d"`, `\ud83d`, `reply_text: \ud83d is half`},
		{"a pair", `"reply_text":"\ud83d\ude00 좋아"`, "", ""},
		{"an escaped backslash before u", `"reply_text":"\\ud800"`, "", ""},
		{"other escapes", `"reply_text":"\"\\\/\b\f\n\r\t\u00e9"`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := turnJSONL("t1", tt.cols)
			_, err := DecodeTurn(Raw{Line: 3, JSON: []byte(row)})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("%s: %v, want no error", row, err)
				}
				return
			}
			col := utf8.RuneCountInString(row[:strings.Index(row, tt.at)]) + 1
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), fmt.Sprintf("line 3, column %d: ", col)) {
				t.Fatalf("%s: %v, want line 3, column %d and %q", row, err, col, tt.want)
			}
		})
	}
	t.Run("in a CSV list cell too", func(t *testing.T) {
		in := turnHeader + "t1,s1,ria,m-a,안녕,\"[\"\"a\\ud800\"\"]\"\nt2,s1,ria,m-a,안녕,\"[\"\"\\ud83d\\ude00\"\"]\"\n"
		rows, err := NewRows(strings.NewReader(in), CSV)
		if err != nil {
			t.Fatal(err)
		}
		bad, _ := rows.Next()
		if _, err := DecodeTurn(bad); err == nil || !strings.Contains(err.Error(), `line 2, column 18: named_entities: \ud800 is half`) {
			t.Fatalf("%v, want the reject of the named_entities cell, which starts at line 2, column 18", err)
		}
		good, _ := rows.Next()
		if tu, err := DecodeTurn(good); err != nil || len(tu.NamedEntities) != 1 || tu.NamedEntities[0] != "😀" {
			t.Fatalf("a pair in a cell: %v %q", err, tu.NamedEntities)
		}
	})
	t.Run("in a card's canon entities too", func(t *testing.T) {
		_, err := DecodeCard(Raw{Line: 1, JSON: []byte(`{"character_id":"c","name":"하나","honorific_rule":"반말","first_person":"나","canon_entities":["\udfff"]}`)})
		if err == nil || !strings.Contains(err.Error(), `canon_entities: \udfff is half`) {
			t.Fatalf("%v, want the canon_entities reject", err)
		}
	})
}
