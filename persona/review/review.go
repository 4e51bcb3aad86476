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
// the run id, in run order (ForbiddenQueue over recs).
func ForbiddenSample(runID int64, recs []persona.Record) []int {
	q := NewForbiddenQueue(runID)
	for i := range recs {
		q.Add(&recs[i])
	}
	var out []int
	for _, it := range q.Result().Sample {
		out = append(out, it.Pos)
	}
	return out
}

// NameGroup is one off-canon name of one character in a run.
type NameGroup struct {
	CharacterID string `json:"character_id"`
	Name        string `json:"name"`
	// Turns are the positions in recs of the records listing the name in
	// off_canon_entities, in run order (whatever their verdict: a forbidden
	// topic outranks an off-canon name). Only OffCanonNames fills it in;
	// NameQueue keeps Count, ByVerdict and Examples instead.
	Turns []int `json:"-"`
	// Count is how many records list the name (len(Turns)); ByVerdict
	// counts them per verdict; Examples are the first NameExamples of them.
	Count     int                     `json:"count"`
	ByVerdict map[persona.Verdict]int `json:"by_verdict"`
	Examples  []Item                  `json:"examples"`
}

// OffCanonNames groups every name of off_canon_entities in recs by
// character and name, most turns first (ties: first appearance in the run):
// NameQueue over recs, with Turns filled in.
func OffCanonNames(recs []persona.Record) []NameGroup {
	q := NewNameQueue()
	q.keepTurns = true
	for i := range recs {
		q.Add(&recs[i])
	}
	out := q.Result().Groups
	if len(out) == 0 {
		return nil
	}
	return out
}

// Mixed is a reply read with both 존댓말 and 반말 sentences.
type Mixed struct {
	Pos    int    `json:"pos"` // position in recs
	TurnID string `json:"turn_id"`
	// Reading is the reply as the profile reads it (not stored: the
	// screen reads the reply again).
	Reading speech.Reading `json:"-"`
}

// Unknown is a reply read 반말 in every sentence whose last 어절 (the last
// sentence's LastWord) ends in no known ending: not one of the profile's
// polite endings (it would not read 반말) and not a known 반말 final
// (PlainFinal). A polite reply the profile misreads as 반말 reaches the
// review through this list even when no sentence of it reads 존댓말 (seed:
// "확인하셨습니까?" alone).
type Unknown struct {
	Pos     int            `json:"pos"` // position in recs
	TurnID  string         `json:"turn_id"`
	Reading speech.Reading `json:"-"` // as Mixed.Reading
	// Word is the reply's last 어절.
	Word string `json:"word"`
	// Candidates are the endings derived from Word that the queue proposes
	// (see Candidate; polite shape, and Word reads 존댓말 with it added), in
	// the order of EndingReview.Candidates; empty when there is none, and
	// the item's only action is to be marked seen (SeenKey, EndingSeen).
	Candidates []string `json:"candidates"`
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
	Ending string `json:"ending"`
	// Sentences counts the 반말-read sentences of the run's mixed replies
	// whose last 어절 gives Ending; Words are those 어절, distinct, in
	// order of appearance, the first MaxWords of them.
	Sentences int      `json:"sentences"`
	Words     []string `json:"words"`
	// Finals counts the run's Unknown replies whose last 어절 gives Ending.
	Finals int `json:"finals"`
	// Flips counts the run's replies read 반말 that would read 존댓말 with
	// Ending added to the profile (one of their sentences' last 어절 would;
	// Unknown replies are among them).
	Flips int `json:"flips"`
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
// ProfileOf) and builds the endings queue (EndingQueue over recs, every
// mixed and unknown-final reply kept). reply returns a turn's reply_text
// (false when null or unknown).
func ReviewEndings(runID int64, p *speech.Profile, recs []persona.Record, reply func(turnID string) (string, bool)) EndingReview {
	q := NewEndingQueue(runID, p)
	q.keepAll = true
	for i := range recs {
		text, ok := reply(recs[i].TurnID)
		q.Add(&recs[i], text, ok)
	}
	r := q.Result()
	out := EndingReview{Mixed: q.allMixed, Candidates: r.Candidates}
	if len(out.Candidates) == 0 {
		out.Candidates = nil
	}
	for _, u := range q.allUnknown {
		out.Unknown = append(out.Unknown, r.ranked(u))
	}
	out.Sample = positions(out.Mixed, r.MixedSample, func(m Mixed) int { return m.Pos })
	out.UnknownSample = positions(out.Unknown, r.UnknownSample, func(u Unknown) int { return u.Pos })
	return out
}

// positions returns the indexes in all (ordered by pos) of the sampled items.
func positions[T any](all, sample []T, pos func(T) int) []int {
	var out []int
	for _, s := range sample {
		if i, ok := slices.BinarySearchFunc(all, pos(s), func(a T, p int) int { return cmp.Compare(pos(a), p) }); ok {
			out = append(out, i)
		}
	}
	return out
}

// HasEnding reports whether profile p lists ending e.
func HasEnding(p *speech.Profile, e string) bool { return slices.Contains(p.Endings, e) }
