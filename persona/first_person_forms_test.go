package persona

import (
	"testing"

	"evident/persona/speech"
)

// A card's own declined forms of its first person (Card.FirstPersonForms,
// issue 14 item 2) agree with it under extended; seed compares verbatim.
func TestCardFirstPersonForms(t *testing.T) {
	cards := []Card{{CharacterID: "C9", Name: "무영", HonorificRule: Jondaemal, FirstPerson: "소인",
		FirstPersonForms: []string{"소인이", "소인의"}, CanonEntities: []string{}, ForbiddenTopics: []string{}}}
	reply := "소인이 먼저 가 보겠습니다."
	for _, tc := range []struct {
		name    string
		profile *speech.Profile
		logged  string
		want    Verdict
	}{
		{"under extended a listed form agrees with the card", speech.Extended(), "소인이", Kept},
		{"under extended the other listed form agrees too", speech.Extended(), "소인의", Kept},
		{"under extended a form the card does not list is still a mismatch", speech.Extended(), "소인은", SpeechOff},
		{"under extended another first person is still a mismatch", speech.Extended(), "저", SpeechOff},
		{"under seed a listed form is a mismatch (the seed's plain equality)", speech.Seed(), "소인이", SpeechOff},
		{"under seed the card's own word agrees", speech.Seed(), "소인", Kept},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := NewJudge(cards, nil, tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			tu := Turn{TurnID: "t1", SessionID: "S1", CharacterID: "C9", ModelID: "m", ReplyText: sp(reply),
				FirstPerson: sp(tc.logged), NamedEntities: []string{}}
			rec, err := j.Judge(&tu, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Verdict != tc.want {
				t.Errorf("verdict %s, want %s", rec.Verdict, tc.want)
			}
		})
	}
}
