package review_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"evident/persona"
	"evident/persona/review"
	"evident/persona/speech"
)

// syntheticRun is n records over a few characters, verdicts and names, with
// replies cycling through demo-like 반말, 존댓말 and mixed texts; ids repeat
// now and then (a repeated id shares its digest).
func syntheticRun(n int, seed uint64) ([]persona.Record, map[string]string) {
	rng := rand.New(rand.NewPCG(seed, 1))
	replies := []string{
		"준비되셨습니까? 그럼 가자.", "확인하셨습니까?", "싫어. 낮잠 잘래.", "시작하겠습니다. 나비야, 이리 와.",
		"낮잠", "괜찮아요. 내일 봐.", "그건 필요. 알겠어.", "험하니까 조심해.", "가시오. 이건 내 거야.", "응",
		"어서 오세요.", "마을로 가.", "나비라니까", "좋소. 그럼 떠나자.", "알겠습니다. 영감",
	}
	names := []string{"나비", "이순신", "갈매기섬", "순이"}
	recs := make([]persona.Record, n)
	text := map[string]string{}
	for i := range recs {
		id := fmt.Sprintf("T-%06d", i)
		if i > 0 && rng.IntN(50) == 0 {
			id = recs[rng.IntN(i)].TurnID
		}
		r := &recs[i]
		r.TurnID, r.CharacterID = id, fmt.Sprintf("C%d", rng.IntN(3))
		r.Verdict = persona.Verdicts[rng.IntN(len(persona.Verdicts))]
		for k := rng.IntN(3); k > 0; k-- {
			r.OffCanonEntities = append(r.OffCanonEntities, names[rng.IntN(len(names))])
		}
		if rng.IntN(10) > 0 {
			text[id] = replies[rng.IntN(len(replies))]
		}
	}
	return recs, text
}

func TestStreamingQueuesAgreeWithTheBatch(t *testing.T) {
	for _, n := range []int{0, 1, 19, 20, 21, 500, 3000} {
		recs, text := syntheticRun(n, uint64(n))
		reply := func(id string) (string, bool) { s, ok := text[id]; return s, ok }
		b := review.NewBuilder(9, speech.Seed())
		for i := range recs {
			s, ok := reply(recs[i].TurnID)
			b.Add(&recs[i], s, ok)
		}
		q := b.Result()
		t.Run(fmt.Sprintf("the forbidden sample of %d records is Sample's over the 금지 소재 접촉 records", n), func(t *testing.T) {
			var ids []string
			var pos []int
			for i, r := range recs {
				if r.Verdict == persona.ForbiddenTopic {
					ids, pos = append(ids, r.TurnID), append(pos, i)
				}
			}
			var want []review.Item
			for _, p := range review.Sample(9, ids, review.SampleSize) {
				want = append(want, review.Item{Pos: pos[p], TurnID: ids[p]})
			}
			if q.Forbidden.Total != len(ids) || !reflect.DeepEqual(q.Forbidden.Sample, orEmpty(want)) {
				t.Errorf("total %d sample %v\nwant %d %v", q.Forbidden.Total, q.Forbidden.Sample, len(ids), want)
			}
		})
		t.Run(fmt.Sprintf("the name groups of %d records count the turns the batch lists", n), func(t *testing.T) {
			batch := review.OffCanonNames(recs)
			if len(batch) != len(q.Names.Groups) {
				t.Fatalf("%d groups, batch %d", len(q.Names.Groups), len(batch))
			}
			listing := 0
			for _, r := range recs {
				if len(r.OffCanonEntities) > 0 {
					listing++
				}
			}
			if q.Names.Turns != listing {
				t.Errorf("turns %d, want %d", q.Names.Turns, listing)
			}
			for k, g := range q.Names.Groups {
				bg := batch[k]
				if g.CharacterID != bg.CharacterID || g.Name != bg.Name || g.Count != len(bg.Turns) || g.Turns != nil {
					t.Fatalf("group %d: %s/%s %d, batch %s/%s %d", k, g.CharacterID, g.Name, g.Count, bg.CharacterID, bg.Name, len(bg.Turns))
				}
				byVerdict := map[persona.Verdict]int{}
				var examples []review.Item
				for _, p := range bg.Turns {
					byVerdict[recs[p].Verdict]++
					if len(examples) < review.NameExamples {
						examples = append(examples, review.Item{Pos: p, TurnID: recs[p].TurnID})
					}
				}
				if !reflect.DeepEqual(g.ByVerdict, byVerdict) || !reflect.DeepEqual(g.Examples, examples) {
					t.Errorf("%s/%s: %v %v, want %v %v", g.CharacterID, g.Name, g.ByVerdict, g.Examples, byVerdict, examples)
				}
			}
		})
		t.Run(fmt.Sprintf("the endings queue of %d records shows the batch's samples and candidates", n), func(t *testing.T) {
			er := review.ReviewEndings(9, speech.Seed(), recs, reply)
			e := q.Endings
			if e.Mixed != len(er.Mixed) || e.Unknown != len(er.Unknown) || len(e.MixedSample) != len(er.Sample) ||
				len(e.UnknownSample) != len(er.UnknownSample) {
				t.Fatalf("mixed %d/%d unknown %d/%d; batch %d/%d %d/%d", len(e.MixedSample), e.Mixed, len(e.UnknownSample), e.Unknown,
					len(er.Sample), len(er.Mixed), len(er.UnknownSample), len(er.Unknown))
			}
			for k, i := range er.Sample {
				if m := er.Mixed[i]; e.MixedSample[k].Pos != m.Pos || e.MixedSample[k].TurnID != recs[m.Pos].TurnID {
					t.Errorf("mixed %d: %+v, batch %d", k, e.MixedSample[k], m.Pos)
				}
			}
			for k, i := range er.UnknownSample {
				u, s := er.Unknown[i], e.UnknownSample[k]
				if s.Pos != u.Pos || s.Word != u.Word || !slices.Equal(s.Candidates, u.Candidates) {
					t.Errorf("unknown %d: %+v, batch %+v", k, s, u)
				}
			}
			if !reflect.DeepEqual(e.Candidates, orEmpty(er.Candidates)) {
				t.Errorf("candidates %+v\nbatch %+v", e.Candidates, er.Candidates)
			}
		})
	}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func TestStreamingQueuesOnHandCheckedReplies(t *testing.T) {
	recs := []persona.Record{{TurnID: "R1"}, {TurnID: "R2"}, {TurnID: "R3"}, {TurnID: "R4"}}
	replies := map[string]string{
		"R1": "준비되셨습니까? 그럼 가자.", // 습니까 is no seed ending: 반말, ending in a known final
		"R2": "시작하겠습니다. 나비야, 이리 와.",
		"R3": "확인하셨습니까?",
		"R4": "낮잠",
	}
	q := review.NewEndingQueue(1, speech.Seed())
	for i := range recs {
		s, ok := replies[recs[i].TurnID]
		q.Add(&recs[i], s, ok)
	}
	r := q.Result()
	// R2 is the one mixed reply (니다 polite, 와 반말); R1 reads 반말 in both
	// sentences and ends in 가자 (a known final); R3 and R4 end in unknown
	// finals (확인하셨습니까, 낮잠).
	if r.Mixed != 1 || r.MixedSample[0].TurnID != "R2" {
		t.Errorf("mixed %d %+v", r.Mixed, r.MixedSample)
	}
	var unknown []string
	for _, u := range r.UnknownSample {
		unknown = append(unknown, u.TurnID+" "+u.Word)
	}
	if want := []string{"R3 확인하셨습니까", "R4 낮잠"}; !reflect.DeepEqual(unknown, want) {
		t.Errorf("unknown %v, want %v", unknown, want)
	}
	// 확인하셨습니까 gives ㅂ니까 and 니까 (both finals 1); R1's 준비되셨습니까
	// and R3 would both read 존댓말 with 니까 or ㅂ니까: 2 flips each.
	var got []string
	for _, c := range r.Candidates {
		got = append(got, fmt.Sprintf("%s s%d f%d x%d", c.Ending, c.Sentences, c.Finals, c.Flips))
	}
	if want := []string{"ㅂ니까 s0 f1 x2", "니까 s0 f1 x2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
	t.Run("the result survives JSON without its readings", func(t *testing.T) {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back review.EndingResult
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.UnknownSample[0].TurnID != "R3" || back.Candidates[0].Ending != "ㅂ니까" || len(back.UnknownSample[0].Reading.Sentences) != 0 {
			t.Errorf("%s", b)
		}
	})
}

func TestCandidateWordsAreCapped(t *testing.T) {
	// Mixed replies whose 반말 sentence ends in a different 습니까 word each:
	// every one gives ㅂ니까; only the first MaxWords are listed.
	var recs []persona.Record
	q := review.NewEndingQueue(1, speech.Seed())
	stems := []rune("가나다라마바사아자차카타파하거너더러머버서어저처커터퍼허고노도로모보소오조초코토포호")
	for i, s := range stems {
		recs = append(recs, persona.Record{TurnID: fmt.Sprint(i)})
		q.Add(&recs[i], "시작하겠습니다. "+string(s)+"셨습니까?", true)
	}
	r := q.Result()
	i := slices.IndexFunc(r.Candidates, func(c review.Candidate) bool { return c.Ending == "ㅂ니까" })
	if i < 0 {
		t.Fatalf("no ㅂ니까: %+v", r.Candidates)
	}
	if c := r.Candidates[i]; c.Sentences != len(stems) || len(c.Words) != review.MaxWords || c.Words[0] != "가셨습니까" {
		t.Errorf("ㅂ니까: %d sentences, %d words %v", c.Sentences, len(c.Words), c.Words)
	}
}

// BenchmarkQueues builds the three queues over 100k synthetic records, one
// record at a time (run with -benchmem or ReportAllocs: the bytes per op
// are the pass's garbage, not what it keeps).
func BenchmarkQueues(b *testing.B) {
	recs, text := syntheticRun(100_000, 1)
	b.ReportAllocs()
	for b.Loop() {
		q := review.NewBuilder(1, speech.Seed())
		for i := range recs {
			s, ok := text[recs[i].TurnID]
			q.Add(&recs[i], s, ok)
		}
		_ = q.Result()
	}
}
