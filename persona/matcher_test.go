package persona

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"evident/internal/multimatch"
)

// naiveEarliest is rules 3 and 4 as they were written first: one
// strings.Contains per pattern, in order; the first that occurs wins.
func naiveEarliest(patterns []string, text string) (int, bool) {
	for i, p := range patterns {
		if p != "" && strings.Contains(text, p) {
			return i, true
		}
	}
	return 0, false
}

// TestRecallAsksTheFirstRoleInCardOrder: rule 4 (spec persona.md) takes the
// first entity_roles row whose role occurs in user_message, whatever the
// order in the message, through roles that share prefixes and suffixes (the
// automaton's failure links) and repeated roles.
func TestRecallAsksTheFirstRoleInCardOrder(t *testing.T) {
	tests := []struct {
		name         string
		roles        []string
		message      *string
		role, entity string // "" = no role asked
	}{
		{"card order wins over message order", []string{"동생", "스승"}, sp("스승님과 동생 기억나?"), "동생", "E0"},
		{"a role met only at the message's end is found", []string{"고향", "단짝"}, sp("아까 그 단짝"), "단짝", "E1"},
		{"a repeated role gives its first row", []string{"스승", "동생", "동생"}, sp("동생 이름이 뭐였지?"), "동생", "E1"},
		{"an empty role never occurs", []string{"", "동생"}, sp("동생 이름"), "동생", "E1"},
		{"a role inside a longer role that occurs is found (suffix)", []string{"동생", "친동생"}, sp("내 친동생"), "동생", "E0"},
		{"the longer role counts when the shorter is later", []string{"친동생", "동생"}, sp("내 친동생"), "친동생", "E0"},
		{"a role found after a longer one fails mid-way (failure link)", []string{"동생이름", "생이"}, sp("동생이 있어"), "생이", "E1"},
		{"a role that is a prefix of the message's word is found", []string{"선생님", "선생"}, sp("선생이 누구야"), "선생", "E1"},
		{"no role in the message asks nothing", []string{"동생", "스승"}, sp("전에 한 얘기 기억나?"), "", ""},
		{"a null message asks nothing", []string{"동생"}, nil, "", ""},
		{"an empty message asks nothing", []string{"동생"}, sp(""), "", ""},
		{"a card without roles asks nothing", nil, sp("동생"), "", ""},
	}
	for _, tt := range tests {
		// As written (at most smallRoles roles: strings.Contains per role)
		// and with roles that never occur added after them (the automaton).
		for _, padded := range []bool{false, true} {
			name := tt.name
			if padded {
				name += " (automaton)"
			}
			t.Run(name, func(t *testing.T) {
				card := Card{CharacterID: "C", Name: "도담", HonorificRule: Banmal, FirstPerson: "나"}
				for i, r := range tt.roles {
					card.EntityRoles = append(card.EntityRoles, EntityRole{Role: r, Entity: fmt.Sprintf("E%d", i)})
				}
				for i := 0; padded && len(card.EntityRoles) <= smallRoles; i++ {
					card.EntityRoles = append(card.EntityRoles, EntityRole{Role: fmt.Sprintf("없는역할%d", i), Entity: "X"})
				}
				j, err := NewJudge([]Card{card}, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := j.cards["C"].roles != nil; got != padded {
					t.Fatalf("card of %d roles has an automaton %v, want %v", len(card.EntityRoles), got, padded)
				}
				turn := Turn{TurnID: "T", SessionID: "S", CharacterID: "C", UserMessage: tt.message, UserAskedRecall: true, ReplyText: sp("글쎄.")}
				f, err := j.Findings(&turn, 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				if f.RecallRole != tt.role || f.RecallEntity != tt.entity {
					t.Errorf("role %q entity %q, want %q %q", f.RecallRole, f.RecallEntity, tt.role, tt.entity)
				}
				if e, ok := j.RecallQuery(&turn); e != tt.entity || ok != (tt.role != "") {
					t.Errorf("RecallQuery = %q, %v; want %q, %v", e, ok, tt.entity, tt.role != "")
				}
			})
		}
	}
}

// TestTouchAgreesWithContainsPerRow holds Lexicon.Touch to the
// straightforward rule 3 (naiveTouch: strings.Contains per row) on random
// lexicons and replies over a small alphabet (prefixes, suffixes, repeated
// terms and overlaps are common), with a random forbidden set and without
// one, with the dense table NewLexicon builds and with the sparse automaton.
// The seed is fixed; internal/multimatch tests the automaton itself.
func TestTouchAgreesWithContainsPerRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 3))
	pieces := []string{"a", "b", "ab", "가", "나", "가나", ""}
	word := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return sb.String()
	}
	for iter := range 2000 {
		rows := make([]LexiconRow, 1+rng.IntN(12))
		forbid := make([]bool, len(rows))
		for i := range rows {
			rows[i] = LexiconRow{Term: word(rng.IntN(4)), Topic: "t"}
			forbid[i] = rng.IntN(3) == 0
		}
		text := word(rng.IntN(20))
		l, err := NewLexicon(rows)
		if err != nil {
			t.Fatal(err)
		}
		sparse, err := multimatch.New(len(rows), func(i int) string { return rows[i].Term })
		if err != nil {
			t.Fatal(err)
		}
		forbidden := func(row int) bool { return forbid[row] }
		f2, ff2 := naiveTouch(rows, text, forbidden)
		for _, l := range []*Lexicon{l, {rows: rows, m: sparse}} {
			if f1, ff1 := l.Touch(text, forbidden); f1 != f2 || ff1 != ff2 {
				t.Fatalf("iteration %d: terms %v forbidden %v text %q: Touch (%d, %d), naive (%d, %d)", iter, rows, forbid, text, f1, ff1, f2, ff2)
			}
			if f1, ff1 := l.Touch(text, nil); f1 != f2 || ff1 != -1 {
				t.Fatalf("iteration %d: terms %v text %q: Touch without forbidden (%d, %d), want (%d, -1)", iter, rows, text, f1, ff1, f2)
			}
		}
	}
}

// bigRecallCard has n entity_roles 역할000000 … (role i → entity 이름i);
// bigRecallMessage is about 900 KB of 역할00000 (a prefix of ten roles,
// never a whole one: the automaton follows it and fails back every time)
// ending with two roles, the later one in card order first.
func bigRecallCard(n int) Card {
	c := Card{CharacterID: "C-BIG", Name: "도담", HonorificRule: Banmal, FirstPerson: "나"}
	c.EntityRoles = make([]EntityRole, n)
	for i := range c.EntityRoles {
		c.EntityRoles[i] = EntityRole{Role: fmt.Sprintf("역할%06d", i), Entity: fmt.Sprintf("이름%06d", i)}
	}
	return c
}

func bigRecallMessage(bytes int) string {
	var sb strings.Builder
	for sb.Len() < bytes {
		sb.WriteString("역할00000 ")
	}
	sb.WriteString("그리고 역할199999, 역할150000 기억나?")
	return sb.String()
}

// TestRecallOf200000RolesAndA900KBMessage: one turn whose card has 200,000
// entity_roles and whose user_message is 900 KB asks the right entity (the
// earlier row in card order, 역할150000, though 역할199999 comes first in the
// message), and reading the message took at most two automaton moves per
// byte: the work is linear in the message, not messages × roles (one
// strings.Contains per role was 7.5 s of CPU for this turn). The roles
// automaton is the one NewJudge built for the card.
func TestRecallOf200000RolesAndA900KBMessage(t *testing.T) {
	card := bigRecallCard(200_000)
	msg := bigRecallMessage(900_000)
	j, err := NewJudge([]Card{card}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	turn := Turn{TurnID: "T", SessionID: "S", CharacterID: card.CharacterID, UserMessage: &msg, UserAskedRecall: true, ReplyText: sp("글쎄, 잘 모르겠어.")}
	f, err := j.Findings(&turn, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.RecallRole != "역할150000" || f.RecallEntity != "이름150000" {
		t.Errorf("role %q entity %q, want 역할150000 이름150000", f.RecallRole, f.RecallEntity)
	}
	roles := j.cards[card.CharacterID].roles
	best, moves := roles.Scan(msg)
	if best != 150_000 {
		t.Errorf("scan found row %d, want 150000", best)
	}
	if moves > 2*len(msg) {
		t.Errorf("%d automaton moves for a %d-byte message, want at most %d", moves, len(msg), 2*len(msg))
	}
	// The prefix 역할00000 is followed to its end and failed back from on
	// every repeat: the work is more than one move per byte.
	if moves <= len(msg) {
		t.Errorf("%d moves for %d bytes: the message no longer exercises the failure links", moves, len(msg))
	}
}

// TestTouchAsksForbiddenOncePerDistinctRow: rule 3 over a 900 KB reply that
// repeats one allowed term 75,000 times, with a 200,000-row lexicon whose
// terms share the reply's prefix, finds the earliest row (the allowed one)
// and the earliest forbidden row (at the reply's end), asking the card's
// forbidden set once per distinct row found, not once per occurrence.
func TestTouchAsksForbiddenOncePerDistinctRow(t *testing.T) {
	rows := make([]LexiconRow, 200_000)
	for i := range rows {
		rows[i] = LexiconRow{Term: fmt.Sprintf("낱말%06d", i), Topic: fmt.Sprintf("주제%d", i%100)}
	}
	l, err := NewLexicon(rows)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for sb.Len() < 900_000 {
		sb.WriteString("낱말000042 ")
	}
	sb.WriteString("끝에 낱말199999와 낱말123456")
	asked := map[int]int{}
	forbidden := func(row int) bool {
		asked[row]++
		return rows[row].Topic == "주제56" || rows[row].Topic == "주제99"
	}
	first, firstForbidden := l.Touch(sb.String(), forbidden)
	if first != 42 || firstForbidden != 123456 {
		t.Errorf("Touch = (%d, %d), want (42, 123456)", first, firstForbidden)
	}
	for row, n := range asked {
		if n != 1 {
			t.Errorf("forbidden(%d) asked %d times, want once", row, n)
		}
	}
	if len(asked) != 3 {
		t.Errorf("forbidden asked about rows %v, want 42, 199999, 123456", asked)
	}
}

// BenchmarkRecall is one turn through the judge (all four rules, evidence,
// summary) whose user asked about earlier story, over the card's role count
// and the message's size (bigRecallCard, bigRecallMessage): ns/op grows with
// the message and stays flat in the role count; ns/byte is the message's.
// roles=5 is read with strings.Contains per role (smallRoles), the others by
// the card's automaton. roles=200000/msg=900000 is the turn that took 7.5 s
// with one strings.Contains per role.
func BenchmarkRecall(b *testing.B) {
	for _, roles := range []int{5, 1_000, 200_000} {
		card := bigRecallCard(roles)
		j, err := NewJudge([]Card{card}, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, size := range []int{1_000, 64_000, 900_000} {
			msg := bigRecallMessage(size)
			turn := Turn{TurnID: "T", SessionID: "S", CharacterID: card.CharacterID, ModelID: "m", UserMessage: &msg,
				UserAskedRecall: true, ReplyText: sp("글쎄, 잘 모르겠어.")}
			want := "" // no role below `roles` occurs whole in the message
			if roles > 150_000 {
				want = "역할150000"
			}
			if f, _ := j.Findings(&turn, 0, nil); f.RecallRole != want {
				b.Fatalf("roles=%d msg=%d: role %q, want %q", roles, size, f.RecallRole, want)
			}
			b.Run(fmt.Sprintf("roles=%d/msg=%d", roles, len(msg)), func(b *testing.B) {
				b.SetBytes(int64(len(msg)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := j.Judge(&turn, 0, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(msg)), "ns/byte")
			})
		}
	}
}

// BenchmarkRecallNaive is rule 4 as one strings.Contains per role, for
// comparison with BenchmarkRecall (kept small: it grows with roles × bytes).
func BenchmarkRecallNaive(b *testing.B) {
	card := bigRecallCard(20_000)
	roles := make([]string, len(card.EntityRoles))
	for i, er := range card.EntityRoles {
		roles[i] = er.Role
	}
	msg := bigRecallMessage(90_000)
	b.Run(fmt.Sprintf("roles=%d/msg=%d", len(roles), len(msg)), func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			naiveEarliest(roles, msg)
		}
	})
}

// BenchmarkLexiconByTerms is rule 3 (Lexicon.Touch with the card's
// forbidden set) over the lexicon's size and the reply's: terms 낱말000000 …
// sharing the reply's prefix, a reply repeating one allowed term; ns/byte
// stays flat in both.
func BenchmarkLexiconByTerms(b *testing.B) {
	for _, n := range []int{50, 20_000, 200_000} {
		rows := make([]LexiconRow, n)
		for i := range rows {
			rows[i] = LexiconRow{Term: fmt.Sprintf("낱말%06d", i), Topic: fmt.Sprintf("주제%d", i%100)}
		}
		l, err := NewLexicon(rows)
		if err != nil {
			b.Fatal(err)
		}
		forbidden := func(row int) bool { return rows[row].Topic == "주제99" }
		for _, size := range []int{1_000, 64_000, 900_000} {
			var sb strings.Builder
			for sb.Len() < size {
				sb.WriteString("낱말000042 낱말0000 ")
			}
			reply := sb.String()
			if first, ff := l.Touch(reply, forbidden); first != 42 || ff != -1 {
				b.Fatalf("terms=%d: Touch = (%d, %d), want (42, -1)", n, first, ff)
			}
			b.Run(fmt.Sprintf("terms=%d/reply=%d", n, len(reply)), func(b *testing.B) {
				b.SetBytes(int64(len(reply)))
				b.ReportAllocs()
				for b.Loop() {
					l.Touch(reply, forbidden)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(reply)), "ns/byte")
			})
		}
	}
}
