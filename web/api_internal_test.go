package web

import (
	"testing"
)

// FuzzDecodeAPITurns: any body, in any of the three shapes, gives turns or
// an error naming a row (1-based) — never a panic, never both.
func FuzzDecodeAPITurns(f *testing.F) {
	row := `{"turn_id":"T1","session_id":"S","character_id":"C","model_id":"m","user_message":"안녕","reply_text":"안녕.","first_person":null,"named_entities":[],"honorific_level":null,"user_asked_recall":false}`
	for _, seed := range []string{row, "[" + row + "," + row + "]", row + "\n" + row + "\n", "[", "{", "", "[1,2]", `{"turn_id":1}`, "\n\n", "[" + row + ",]"} {
		f.Add([]byte(seed), uint8(0))
		f.Add([]byte(seed), uint8(1))
		f.Add([]byte(seed), uint8(2))
	}
	f.Fuzz(func(t *testing.T, body []byte, shape uint8) {
		turns, e := decodeAPITurns(body, apiShape(shape%3))
		if e != nil {
			if turns != nil {
				t.Fatal("turns and an error")
			}
			if e.Error == "" || e.Row < 0 {
				t.Fatalf("error without text or with row %d", e.Row)
			}
			return
		}
		for i, r := range turns {
			if r.turn.TurnID == "" || r.turn.SessionID == "" {
				t.Fatalf("row %d decoded without turn_id or session_id", i+1)
			}
		}
	})
}
