package ingest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// stdTurn is what the reference path makes of data: checkJSON, then
// encoding/json.Unmarshal into turnJSON; ok false when either fails.
func stdTurn(data []byte) (turnJSON, bool) {
	var j turnJSON
	if checkJSON(Raw{Line: 1, JSON: data}) != nil {
		return j, false
	}
	return j, json.Unmarshal(data, &j) == nil
}

// checkScan fails t when scanTurn accepts data with a result other than the
// reference's, or accepts a row the reference rejects.
func checkScan(t *testing.T, data []byte) (accepted bool) {
	t.Helper()
	var got turnJSON
	if !scanTurn(data, &got) {
		return false
	}
	want, ok := stdTurn(data)
	if !ok {
		t.Fatalf("scanTurn accepted %q, which encoding/json or checkJSON rejects", data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scanTurn(%q) = %+v, encoding/json gives %+v", data, got, want)
	}
	return true
}

func TestScanTurnAgreesWithEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		row    string
		accept bool // the fast path takes it (else encoding/json decides)
	}{
		{"a realistic row is taken by the fast path", benchTurn, true},
		{"nulls in every nullable column are taken", `{"turn_id":"t","session_id":"s","character_id":"c","model_id":"m","user_message":null,"reply_text":null,"first_person":null,"named_entities":null,"honorific_level":null,"user_asked_recall":null,"created_at":null,"prompt_id":null}`, true},
		{"an empty named_entities is a non-nil empty list", `{"turn_id":"t","named_entities":[]}`, true},
		{"a null list element decodes as the empty string", `{"turn_id":"t","named_entities":["a",null]}`, true},
		{"white space around every token is allowed", " \t{ \"turn_id\" : \"t\" ,\r\n\"named_entities\" : [ \"a\" , \"b\" ] } \n", true},
		{"unknown columns of every type are skipped after validation", `{"turn_id":"t","x":{"a":[1,-2.5e+3,true,false,null,"s\u00e9"]},"y":-0,"z":[]}`, true},
		{"escapes in a value are decoded", `{"turn_id":"a\"b\\c\/d\b\f\n\r\t\u00e9\uAC00"}`, true},
		{"null into a required string leaves it empty", `{"turn_id":null}`, true},
		{"an empty object is taken", `{}`, true},
		{"a surrogate pair escape goes to encoding/json", `{"turn_id":"\ud83d\ude00"}`, false},
		{"a lone surrogate escape goes to encoding/json", `{"turn_id":"\ud83d"}`, false},
		{"a repeated column goes to encoding/json", `{"turn_id":"a","turn_id":"b"}`, false},
		{"a key equal to a column ignoring case goes to encoding/json", `{"Turn_ID":"a"}`, false},
		{"a non-ASCII key goes to encoding/json (Unicode folding)", `{"turn_\u0131d":"a","ſession_id":"b"}`, false},
		{"a key with an escape goes to encoding/json", `{"turn\u005fid":"a"}`, false},
		{"a number in a string column is a type error", `{"turn_id":1}`, false},
		{"a string in user_asked_recall is left to encoding/json", `{"user_asked_recall":"yes"}`, false},
		{"a number list element is a type error", `{"named_entities":[1]}`, false},
		{"truncated JSON is a syntax error", `{"turn_id":"t","reply_text":"abc`, false},
		{"trailing data is a syntax error", `{"turn_id":"t"} x`, false},
		{"a trailing comma is a syntax error", `{"turn_id":"t",}`, false},
		{"an array is not an object", `["turn_id"]`, false},
		{"a control character in a string is a syntax error", "{\"turn_id\":\"a\x01b\"}", false},
		{"invalid UTF-8 in a string is refused", "{\"turn_id\":\"a\xffb\"}", false},
		{"a UTF-8 encoded surrogate is invalid UTF-8", "{\"turn_id\":\"\xed\xa0\x80\"}", false},
		{"a leading zero is a syntax error", `{"x":01}`, false},
		{"a bare minus is a syntax error", `{"x":-}`, false},
		{"an exponent without digits is a syntax error", `{"x":1e}`, false},
		{"a bad escape is a syntax error", `{"turn_id":"\x"}`, false},
		{"a misspelt literal is a syntax error", `{"x":nul}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkScan(t, []byte(tc.row)); got != tc.accept {
				t.Errorf("scanTurn accepted = %v, want %v", got, tc.accept)
			}
		})
	}
}

// TestScanTurnDepth: nesting at encoding/json's limit goes to it.
func TestScanTurnDepth(t *testing.T) {
	deep := `{"x":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}`
	if checkScan(t, []byte(deep)) {
		t.Error("scanTurn accepted nesting deeper than encoding/json's limit")
	}
	ok := `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`
	if !checkScan(t, []byte(ok)) {
		t.Error("scanTurn declined nesting of 100")
	}
}

// TestDecodeTurnErrorsUnchanged: a row the fast path declines gets
// encoding/json's message, as before issue 18.
func TestDecodeTurnErrorsUnchanged(t *testing.T) {
	for _, tc := range []struct{ row, want string }{
		{`{"turn_id":"t","reply_text":"abc`, "line 1, column 32: bad JSON: unexpected end of JSON input"},
		{`{"turn_id":1,"session_id":"s","character_id":"c","model_id":"m"}`, "line 1, column 12: turn_id: want non-empty string, got number"},
		{"{\"turn_id\":\"a\xffb\"}", "line 1, column 14: turn_id: invalid UTF-8"},
	} {
		_, err := DecodeTurn(Raw{Line: 1, JSON: []byte(tc.row)})
		if err == nil || err.Error() != tc.want {
			t.Errorf("DecodeTurn(%q) error = %v, want %q", tc.row, err, tc.want)
		}
	}
}

// FuzzScanTurn holds the fast path to the reference on arbitrary rows.
func FuzzScanTurn(f *testing.F) {
	for _, s := range []string{benchTurn, `{}`, `{"turn_id":null}`, `{"named_entities":["a",null]}`,
		`{"x":[1,{"y":-1.5E-2}],"turn_id":"\u00e9"}`, `{"Turn_id":"a"}`, `{"turn_id":"\ud800"}`, "{\"a\":\"\xed\xa0\x80\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkScan(t, data) && !utf8.Valid(data) {
			t.Fatalf("accepted invalid UTF-8 %q", data)
		}
	})
}
