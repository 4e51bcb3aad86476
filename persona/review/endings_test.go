package review_test

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"evident/persona"
	"evident/persona/review"
	"evident/persona/speech"
)

func TestPoliteShape(t *testing.T) {
	t.Run("every ending of the built-in profiles is of polite shape", func(t *testing.T) {
		for _, p := range []*speech.Profile{speech.Seed(), speech.Extended()} {
			for _, e := range p.Endings {
				if !review.PoliteShape(e) {
					t.Errorf("%s ending %q is not of polite shape", p.Name, e)
				}
			}
		}
	})
	for _, tc := range []struct {
		ending string
		want   bool
	}{
		{"니까", true}, {"ㅂ니까", true}, {"ㅂ시다", true}, {"시오", true}, {"오", true}, {"ㅆ소", true}, {"세요", true},
		{"어", false},  // 싫어, 맛있어: the candidate that flipped 45 demo replies
		{"름이", false}, // 이름이
		{"봐", false}, {"있어", false}, {"다", false}, {"쉽다", false}, {"지", false}, {"까", false},
		{"ㅂ", false}, {"", false},
	} {
		t.Run("the ending "+tc.ending+" is judged by its tail", func(t *testing.T) {
			if got := review.PoliteShape(tc.ending); got != tc.want {
				t.Errorf("PoliteShape(%q) = %v, want %v", tc.ending, got, tc.want)
			}
		})
	}
	t.Run("the tails are the documented ten", func(t *testing.T) {
		want := []string{"요", "죠", "니다", "십시오", "니까", "십쇼", "시다", "디다", "오", "소"}
		if got := review.PoliteTails(); !reflect.DeepEqual(got, want) {
			t.Errorf("%v", got)
		}
	})
}

func TestPlainFinal(t *testing.T) {
	for _, tc := range []struct {
		word string
		want bool
	}{
		// the infinitive -아/-어 and its contractions, 이야, 해라체
		{"해", true}, {"봐", true}, {"있어", true}, {"돼", true}, {"뭐", true}, {"걸려", true}, {"거야", true},
		{"한다", true}, {"마라", true}, {"한턱낸대", true}, {"줄래", true}, {"먹자", true}, {"나", true},
		// the listed endings and 응
		{"통하지", true}, {"할게", true}, {"나네", true}, {"없는데", true}, {"먹니", true}, {"밝고", true},
		{"없다고", true}, {"할걸", true}, {"하는군", true}, {"살거든", true}, {"하렴", true}, {"응", true},
		// nouns, noun exceptions and every word ending in 니까
		{"낮잠", false}, {"마을", false}, {"영감", false}, {"필요", false}, {"중요", false},
		{"험하니까", false}, {"나비라니까", false}, {"동네니까", false}, {"확인하셨습니까", false},
		{"", false},
	} {
		t.Run("the last 어절 "+tc.word+" is judged", func(t *testing.T) {
			if got := review.PlainFinal(tc.word); got != tc.want {
				t.Errorf("PlainFinal(%q) = %v, want %v", tc.word, got, tc.want)
			}
		})
	}
}

func TestSeenKey(t *testing.T) {
	if k := review.SeenKey("T-010032"); k != "turn:T-010032" {
		t.Errorf("SeenKey = %q", k)
	}
	if id, ok := review.SeenTurn("turn:T-010032"); !ok || id != "T-010032" {
		t.Errorf("SeenTurn = %q, %v", id, ok)
	}
	for _, k := range []string{"니까", "ㅂ니까", "turn:", ""} {
		if _, ok := review.SeenTurn(k); ok {
			t.Errorf("SeenTurn(%q) is a turn", k)
		}
	}
}

// queue runs ReviewEndings over replies given in run order (turn ids R1, R2, …).
func queue(p *speech.Profile, replies ...string) (review.EndingReview, []persona.Record) {
	recs := make([]persona.Record, len(replies))
	byID := map[string]string{}
	for i, r := range replies {
		recs[i].TurnID = "R" + string(rune('1'+i))
		byID[recs[i].TurnID] = r
	}
	return review.ReviewEndings(1, p, recs, func(id string) (string, bool) { s, ok := byID[id]; return s, ok }), recs
}

func endings(cs []review.Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Ending)
	}
	return out
}

func TestCandidates(t *testing.T) {
	t.Run("a 반말 fragment of a mixed reply proposes nothing", func(t *testing.T) {
		er, _ := queue(speech.Seed(), "노래요? 싫어. 목 아파.", "음, 친구 이름이… 잘 기억이 안 나네요.")
		if len(er.Mixed) != 2 || len(er.Candidates) != 0 {
			t.Errorf("mixed %d, candidates %+v", len(er.Mixed), er.Candidates)
		}
	})
	t.Run("-ㅂ시다 is proposed with its final before the literal tail, and ranks first as it flips less", func(t *testing.T) {
		// "이 김치 좀 시다." is 반말 (sour); 시다 would flip it, ㅂ시다 would not.
		er, _ := queue(speech.Seed(), "좋아요. 같이 갑시다.", "이 김치 좀 시다.")
		want := []review.Candidate{
			{Ending: "ㅂ시다", Sentences: 1, Words: []string{"갑시다"}, Flips: 0},
			{Ending: "시다", Sentences: 1, Words: []string{"갑시다"}, Flips: 1},
		}
		if !reflect.DeepEqual(er.Candidates, want) {
			t.Errorf("candidates %+v", er.Candidates)
		}
	})
	t.Run("a 하오체 ending is of polite shape: 오시오 proposes 시오 and 오", func(t *testing.T) {
		er, _ := queue(speech.Seed(), "감사합니다. 이쪽으로 오시오.")
		if got := endings(er.Candidates); !reflect.DeepEqual(got, []string{"시오", "오"}) {
			t.Errorf("candidates %v", got)
		}
	})
	t.Run("a noun exception is never proposed: 필요 stays 반말 under extended even with 필요 added", func(t *testing.T) {
		er, _ := queue(speech.Extended(), "감사합니다. 조심이 필요.")
		if len(er.Mixed) != 1 || len(er.Candidates) != 0 {
			t.Errorf("mixed %d, candidates %+v", len(er.Mixed), er.Candidates)
		}
	})
	t.Run("a lone polite question the seed misreads is an unknown final with its candidates", func(t *testing.T) {
		er, recs := queue(speech.Seed(), "결과 그래프는 꼼꼼히 확인하셨습니까?", "그래, 알았어.")
		if len(er.Mixed) != 0 || len(er.Unknown) != 1 || len(er.UnknownSample) != 1 {
			t.Fatalf("mixed %d, unknown %+v", len(er.Mixed), er.Unknown)
		}
		u := er.Unknown[0]
		if recs[u.Pos].TurnID != "R1" || u.Word != "확인하셨습니까" || !reflect.DeepEqual(u.Candidates, []string{"ㅂ니까", "니까"}) {
			t.Errorf("unknown %+v", u)
		}
		want := []review.Candidate{
			{Ending: "ㅂ니까", Finals: 1, Flips: 1},
			{Ending: "니까", Finals: 1, Flips: 1},
		}
		if !reflect.DeepEqual(er.Candidates, want) {
			t.Errorf("candidates %+v", er.Candidates)
		}
	})
}

// demoReplies reads the demo's chat_turn rows (persona/demo/data).
func demoReplies(t *testing.T) ([]persona.Record, func(string) (string, bool)) {
	t.Helper()
	f, err := os.Open("../demo/data/turns.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var recs []persona.Record
	replies := map[string]string{}
	for sc.Scan() {
		var tu persona.Turn
		if err := json.Unmarshal(sc.Bytes(), &tu); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, persona.Record{TurnID: tu.TurnID, CharacterID: tu.CharacterID})
		if tu.ReplyText != nil {
			replies[tu.TurnID] = *tu.ReplyText
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs, func(id string) (string, bool) { s, ok := replies[id]; return s, ok }
}

func TestDemoEndings(t *testing.T) {
	recs, reply := demoReplies(t)
	unknown := func(er review.EndingReview) map[string]string {
		out := map[string]string{}
		for _, u := range er.Unknown {
			out[recs[u.Pos].TurnID] = u.Word
		}
		return out
	}
	t.Run("under seed only ㅂ니까 and 니까 are proposed, ㅂ니까 first (fewer flips)", func(t *testing.T) {
		er := review.ReviewEndings(1, speech.Seed(), recs, reply)
		want := []review.Candidate{
			{Ending: "ㅂ니까", Sentences: 1, Words: []string{"준비되셨습니까"}, Finals: 1, Flips: 1},
			{Ending: "니까", Sentences: 1, Words: []string{"준비되셨습니까"}, Finals: 4, Flips: 4},
		}
		if len(er.Mixed) != 9 || !reflect.DeepEqual(er.Candidates, want) {
			t.Errorf("mixed %d, candidates %+v", len(er.Mixed), er.Candidates)
		}
	})
	t.Run("under seed seven 반말 replies end in no known final", func(t *testing.T) {
		// Read by hand: 그다음엔 낮잠. / 작은 동네니까. / 물길이 험하니까. /
		// 소금꽃 피는 마을. / 나비라니까. / 석주 영감. / 확인하셨습니까?
		want := map[string]string{"T-010032": "낮잠", "T-010033": "동네니까", "T-010122": "험하니까",
			"T-010133": "마을", "T-010244": "나비라니까", "T-010252": "영감", "T-020203": "확인하셨습니까"}
		er := review.ReviewEndings(1, speech.Seed(), recs, reply)
		if got := unknown(er); !reflect.DeepEqual(got, want) {
			t.Errorf("unknown finals %v", got)
		}
		if len(er.UnknownSample) != 7 {
			t.Errorf("sample %v", er.UnknownSample)
		}
		for _, u := range er.Unknown {
			var want []string
			switch recs[u.Pos].TurnID {
			case "T-020203":
				want = []string{"ㅂ니까", "니까"}
			case "T-010033", "T-010122", "T-010244":
				want = []string{"니까"}
			}
			if !reflect.DeepEqual(u.Candidates, want) {
				t.Errorf("%s candidates %v, want %v", recs[u.Pos].TurnID, u.Candidates, want)
			}
		}
	})
	t.Run("under extended 확인하셨습니까 is polite and the noun exceptions 필요 and 중요 join the list", func(t *testing.T) {
		want := map[string]string{"T-010032": "낮잠", "T-010033": "동네니까", "T-010041": "필요", "T-010122": "험하니까",
			"T-010133": "마을", "T-010244": "나비라니까", "T-010252": "영감", "T-020006": "중요"}
		er := review.ReviewEndings(1, speech.Extended(), recs, reply)
		if got := unknown(er); !reflect.DeepEqual(got, want) {
			t.Errorf("unknown finals %v", got)
		}
		if want := []review.Candidate{{Ending: "니까", Finals: 3, Flips: 3}}; !reflect.DeepEqual(er.Candidates, want) {
			t.Errorf("candidates %+v", er.Candidates)
		}
	})
}
