package review

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"slices"
	"strconv"

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

// Candidate is an ending the mixed-style queue proposes.
type Candidate struct {
	// Ending is the last one or two syllables of a last 어절.
	Ending string
	// Sentences counts the 반말-read sentences of the run's mixed replies
	// whose last 어절 ends in Ending; Words are those 어절, distinct, in
	// order of appearance.
	Sentences int
	Words     []string
	// Flips counts the run's replies read 반말 that would read 존댓말 with
	// Ending added to the profile (one of their sentences would).
	Flips int
}

// EndingReview is the mixed-style queue of a run.
type EndingReview struct {
	// Mixed are every mixed reply of the run, Sample the positions in
	// Mixed of the up to SampleSize shown (Sample with the run id).
	Mixed  []Mixed
	Sample []int
	// Candidates are ranked by Sentences, then Flips (fewer first: an
	// ending that would change less is the safer one to read first), then
	// longer first, then as first seen.
	Candidates []Candidate
}

// ReviewEndings reads every reply of the run with profile p (the run's,
// ProfileOf) and builds the mixed-style queue. reply returns a turn's
// reply_text (false when null or unknown).
func ReviewEndings(runID int64, p *speech.Profile, recs []persona.Record, reply func(turnID string) (string, bool)) EndingReview {
	var out EndingReview
	type tally struct {
		c    Candidate
		seen map[string]bool
	}
	cands := map[string]*tally{}
	var order []string
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
			continue
		case rd.Polite == 0 || rd.Polite == len(rd.Sentences):
			continue
		}
		out.Mixed = append(out.Mixed, Mixed{Pos: i, Reading: rd})
		for _, s := range rd.Sentences {
			if s.Polite() {
				continue
			}
			for _, e := range suffixes(s.LastWord) {
				if HasEnding(p, e) { // read 반말 by a noun exception
					continue
				}
				t := cands[e]
				if t == nil {
					t = &tally{c: Candidate{Ending: e}, seen: map[string]bool{}}
					cands[e] = t
					order = append(order, e)
				}
				t.c.Sentences++
				if !t.seen[s.LastWord] {
					t.seen[s.LastWord] = true
					t.c.Words = append(t.c.Words, s.LastWord)
				}
			}
		}
	}
	ids := make([]string, len(out.Mixed))
	for k, m := range out.Mixed {
		ids[k] = recs[m.Pos].TurnID
	}
	out.Sample = Sample(runID, ids, SampleSize)
	// A 반말 reply flips when one of its last words ends in the candidate and
	// the profile with the candidate added reads it as 존댓말 (a noun
	// exception still wins).
	with := map[string]*speech.Profile{}
	for _, e := range order {
		with[e] = p.With([]string{e}, nil)
	}
	for _, words := range banmal {
		flipped := map[string]bool{}
		for _, w := range words {
			for _, e := range suffixes(w) {
				if q := with[e]; q != nil && !flipped[e] && q.Ending(w) != "" {
					flipped[e] = true
					cands[e].c.Flips++
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
		return cmp.Compare(len([]rune(b.Ending)), len([]rune(a.Ending)))
	})
	return out
}

// suffixes are the last two syllables and the last syllable of a word (one
// of them when the word has one syllable).
func suffixes(word string) []string {
	r := []rune(word)
	switch len(r) {
	case 0:
		return nil
	case 1:
		return []string{word}
	}
	return []string{string(r[len(r)-2:]), string(r[len(r)-1:])}
}

// HasEnding reports whether profile p lists ending e.
func HasEnding(p *speech.Profile, e string) bool { return slices.Contains(p.Endings, e) }
