package review

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"slices"
	"strconv"
	"unicode/utf8"

	"evident/persona"
	"evident/persona/speech"
)

// SampleSize is how many items the forbidden-topic and mixed-style queues
// show (the seed's 20).
const SampleSize = 20

// Decision values the screen and the CLI store (store.Decision.Value).
const (
	ForbiddenConfirm = "confirm" // a real problem for this character
	ForbiddenReject  = "reject"  // not a problem for this character
	CanonAdd         = "add"     // add the name to the card's canon_entities
	CanonBlock       = "block"   // keep the name off-canon
	EndingAdd        = "add"     // add the ending to the polite-ending list
	EndingSkip       = "skip"    // leave the ending out
	// EndingSeen marks an unknown-final reply read (key SeenKey): the
	// reviewer found no ending to add. It changes no profile.
	EndingSeen = "seen"
)

// OffCanonKey is the store.Decision key of an off-canon name: the character
// whose card it concerns, a slash, the name.
func OffCanonKey(characterID, name string) string { return characterID + "/" + name }

// Sample returns the positions of up to n of the ids, a sample that depends
// only on the run id and the ids themselves: each id is ranked by
// sha256("{runID}:{id}") and the n smallest digests are taken (a uniform
// sample without replacement, reproducible without a random generator and
// independent of the ids' order). The positions come back in ascending order
// (run order). Repeated ids share a digest; the earlier one ranks first.
func Sample(runID int64, ids []string, n int) []int {
	if n <= 0 || len(ids) == 0 {
		return nil
	}
	type ranked struct {
		pos    int
		digest [sha256.Size]byte
	}
	all := make([]ranked, len(ids))
	prefix := strconv.FormatInt(runID, 10) + ":"
	for i, id := range ids {
		all[i] = ranked{i, sha256.Sum256([]byte(prefix + id))}
	}
	slices.SortStableFunc(all, func(a, b ranked) int { return bytes.Compare(a.digest[:], b.digest[:]) })
	out := make([]int, 0, min(n, len(all)))
	for _, r := range all[:min(n, len(all))] {
		out = append(out, r.pos)
	}
	slices.Sort(out)
	return out
}

// ForbiddenSample returns the positions in recs of the forbidden-topic queue:
// up to SampleSize records with verdict 금지 소재 접촉, sampled by Sample with
// the run id, in run order.
func ForbiddenSample(runID int64, recs []persona.Record) []int {
	var ids []string
	var pos []int
	for i := range recs {
		if recs[i].Verdict == persona.ForbiddenTopic {
			ids = append(ids, recs[i].TurnID)
			pos = append(pos, i)
		}
	}
	picked := Sample(runID, ids, SampleSize)
	for k, p := range picked {
		picked[k] = pos[p]
	}
	return picked
}

// NameGroup is one off-canon name of one character in a run.
type NameGroup struct {
	CharacterID, Name string
	// Turns are the positions in recs of the records listing the name in
	// off_canon_entities, in run order (whatever their verdict: a forbidden
	// topic outranks an off-canon name).
	Turns []int
}

// OffCanonNames groups every name of off_canon_entities in recs by
// character and name, most turns first (ties: first appearance in the run).
func OffCanonNames(recs []persona.Record) []NameGroup {
	index := map[string]int{}
	var out []NameGroup
	for i := range recs {
		r := &recs[i]
		for _, n := range r.OffCanonEntities {
			k := OffCanonKey(r.CharacterID, n)
			g, ok := index[k]
			if !ok {
				g = len(out)
				index[k] = g
				out = append(out, NameGroup{CharacterID: r.CharacterID, Name: n})
			}
			if t := out[g].Turns; len(t) == 0 || t[len(t)-1] != i {
				out[g].Turns = append(out[g].Turns, i)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b NameGroup) int { return cmp.Compare(len(b.Turns), len(a.Turns)) })
	return out
}

// Mixed is a reply read with both 존댓말 and 반말 sentences.
type Mixed struct {
	Pos     int // position in recs
	Reading speech.Reading
}

// Unknown is a reply read 반말 in every sentence whose last 어절 (the last
// sentence's LastWord) ends in no known ending: not one of the profile's
// polite endings (it would not read 반말) and not a known 반말 final
// (PlainFinal). A polite reply the profile misreads as 반말 reaches the
// review through this list even when no sentence of it reads 존댓말 (seed:
// "확인하셨습니까?" alone).
type Unknown struct {
	Pos     int // position in recs
	Reading speech.Reading
	// Word is the reply's last 어절.
	Word string
	// Candidates are the endings derived from Word that the queue proposes
	// (see Candidate; polite shape, and Word reads 존댓말 with it added), in
	// the order of EndingReview.Candidates; empty when there is none, and
	// the item's only action is to be marked seen (SeenKey, EndingSeen).
	Candidates []string
}

// Candidate is an ending the endings queue proposes. It is derived from a
// 반말-read last 어절 w: the last one or two syllables of w, and, when the
// syllable before them has a final consonant, the same tail with that
// consonant in front in the profile's ending syntax ("ㅂ니까" from
// 준비되셨습니까: 습 ends in ㅂ; package speech, "Decisions"). A form is proposed
// only when it is of polite shape (PoliteShape), is not already one of the
// profile's endings, and w reads 존댓말 with it added (a noun exception such
// as 필요 under extended still wins, so 필요 is never proposed).
type Candidate struct {
	// Ending is the proposed ending, as it would be written in the profile.
	Ending string
	// Sentences counts the 반말-read sentences of the run's mixed replies
	// whose last 어절 gives Ending; Words are those 어절, distinct, in
	// order of appearance.
	Sentences int
	Words     []string
	// Finals counts the run's Unknown replies whose last 어절 gives Ending.
	Finals int
	// Flips counts the run's replies read 반말 that would read 존댓말 with
	// Ending added to the profile (one of their sentences' last 어절 would;
	// Unknown replies are among them).
	Flips int
}

// EndingReview is the endings queue of a run: the mixed-style sample, the
// unknown-final list and the candidate endings.
type EndingReview struct {
	// Mixed are every mixed reply of the run, Sample the positions in
	// Mixed of the up to SampleSize shown (Sample with the run id).
	Mixed  []Mixed
	Sample []int
	// Unknown are every unknown-final reply of the run in run order,
	// UnknownSample the positions in Unknown of the up to SampleSize shown
	// (Sample with the run id, as for Mixed).
	Unknown       []Unknown
	UnknownSample []int
	// Candidates are ranked by Sentences, then Flips (fewer first: an
	// ending that would change less is the safer one to read first), then
	// longer first (in runes: ㅂ니까 before 니까), then as first seen
	// (mixed replies before unknown-final ones, in run order).
	Candidates []Candidate
}

// ReviewEndings reads every reply of the run with profile p (the run's,
// ProfileOf) and builds the endings queue. reply returns a turn's
// reply_text (false when null or unknown).
func ReviewEndings(runID int64, p *speech.Profile, recs []persona.Record, reply func(turnID string) (string, bool)) EndingReview {
	var out EndingReview
	type tally struct {
		c    Candidate
		seen map[string]bool
	}
	cands := map[string]*tally{}
	var order []string
	// with caches the profile with one candidate added; a nil entry marks
	// a form that is no candidate (wrong shape or already listed).
	with := map[string]*speech.Profile{}
	// proposed lists the candidate forms derived from word w.
	proposed := func(w string) []string {
		var es []string
		for _, e := range forms(w) {
			q, seen := with[e]
			if !seen {
				if PoliteShape(e) && !HasEnding(p, e) {
					q = p.With([]string{e}, nil)
				}
				with[e] = q
			}
			if q != nil && q.Ending(w) != "" {
				es = append(es, e)
			}
		}
		return es
	}
	get := func(e string) *tally {
		t := cands[e]
		if t == nil {
			t = &tally{c: Candidate{Ending: e}, seen: map[string]bool{}}
			cands[e] = t
			order = append(order, e)
		}
		return t
	}
	var banmal [][]string // last words of the run's 반말 replies
	for i := range recs {
		text, ok := reply(recs[i].TurnID)
		if !ok {
			continue
		}
		rd := p.Read(text)
		switch {
		case rd.Style() == speech.Banmal:
			words := make([]string, len(rd.Sentences))
			for k, s := range rd.Sentences {
				words[k] = s.LastWord
			}
			banmal = append(banmal, words)
			if last := words[len(words)-1]; !PlainFinal(last) {
				out.Unknown = append(out.Unknown, Unknown{Pos: i, Reading: rd, Word: last})
			}
			continue
		case rd.Polite == 0 || rd.Polite == len(rd.Sentences):
			continue
		}
		out.Mixed = append(out.Mixed, Mixed{Pos: i, Reading: rd})
		for _, s := range rd.Sentences {
			if s.Polite() {
				continue
			}
			for _, e := range proposed(s.LastWord) {
				t := get(e)
				t.c.Sentences++
				if !t.seen[s.LastWord] {
					t.seen[s.LastWord] = true
					t.c.Words = append(t.c.Words, s.LastWord)
				}
			}
		}
	}
	for k := range out.Unknown {
		u := &out.Unknown[k]
		u.Candidates = proposed(u.Word)
		for _, e := range u.Candidates {
			get(e).c.Finals++
		}
	}
	ids := make([]string, len(out.Mixed))
	for k, m := range out.Mixed {
		ids[k] = recs[m.Pos].TurnID
	}
	out.Sample = Sample(runID, ids, SampleSize)
	ids = ids[:0]
	for _, u := range out.Unknown {
		ids = append(ids, recs[u.Pos].TurnID)
	}
	out.UnknownSample = Sample(runID, ids, SampleSize)
	// A 반말 reply flips when one of its last words gives the candidate and
	// the profile with the candidate added reads it as 존댓말 (a noun
	// exception still wins).
	for _, words := range banmal {
		flipped := map[string]bool{}
		for _, w := range words {
			for _, e := range forms(w) {
				if t := cands[e]; t != nil && !flipped[e] && with[e].Ending(w) != "" {
					flipped[e] = true
					t.c.Flips++
				}
			}
		}
	}
	for _, e := range order {
		out.Candidates = append(out.Candidates, cands[e].c)
	}
	slices.SortStableFunc(out.Candidates, func(a, b Candidate) int {
		if c := cmp.Compare(b.Sentences, a.Sentences); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Flips, b.Flips); c != 0 {
			return c
		}
		return cmp.Compare(utf8.RuneCountInString(b.Ending), utf8.RuneCountInString(a.Ending))
	})
	rank := make(map[string]int, len(out.Candidates))
	for k, c := range out.Candidates {
		rank[c.Ending] = k
	}
	for k := range out.Unknown {
		slices.SortStableFunc(out.Unknown[k].Candidates, func(a, b string) int { return cmp.Compare(rank[a], rank[b]) })
	}
	return out
}

// HasEnding reports whether profile p lists ending e.
func HasEnding(p *speech.Profile, e string) bool { return slices.Contains(p.Endings, e) }
