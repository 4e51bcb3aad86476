package live_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"evident/persona"
	"evident/persona/live"
)

// Digest is the hex SHA-256 of json.Marshal's bytes of the turn — HTML
// escaped, no trailing newline — so digests stored by earlier versions
// (the live API's live_turn rows, the changelog's turns) still match.
func TestDigestIsTheSHA256OfTheTurnsMarshalledJSON(t *testing.T) {
	reply := "<b>안녕</b> & \u2028"
	for _, tu := range []persona.Turn{
		{TurnID: "T1", SessionID: "S", CharacterID: "C", ReplyText: &reply, NamedEntities: []string{"도윤", "<x>"}},
		{TurnID: "T2"},
	} {
		b, err := json.Marshal(&tu)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got, want := live.Digest(&tu), hex.EncodeToString(sum[:]); got != want {
			t.Fatalf("%s: Digest %s, want %s", tu.TurnID, got, want)
		}
	}
}
