package web

import (
	"sort"
	"strings"

	"evident/persona"
	"evident/persona/speech"
)

// Segment is a piece of a reply: plain text, or text marked with a class
// (Mark) and a tooltip (Title).
type Segment struct {
	Text  string
	Mark  string
	Title string
}

// span is a byte range of a text to mark.
type span struct {
	start, end int
	class      string
	title      string
}

// Mark classes.
const (
	markOffCanon  = "m-offcanon"
	markForbidden = "m-forbidden"
	markTouched   = "m-touched"
	markEnding    = "m-ending"
	markRecall    = "m-recall"
)

// replySpans are the spans of reply that record r cites: every occurrence of
// each off-canon name and of the touched term, and the sentence endings the
// summary quotes in 「」 (where they end a sentence of the reply).
func replySpans(r *persona.Record, reply string) []span {
	var out []span
	for _, name := range r.OffCanonEntities {
		out = append(out, occurrences(reply, name, markOffCanon, "세계관 밖 고유명사")...)
	}
	if r.TouchedTerm != nil {
		if r.TouchedTopic != nil {
			out = append(out, occurrences(reply, *r.TouchedTerm, markForbidden, "금지 소재: "+*r.TouchedTopic)...)
		} else {
			out = append(out, occurrences(reply, *r.TouchedTerm, markTouched, "사전 낱말 (이 카드가 막은 소재는 아님)")...)
		}
	}
	return append(out, endingSpans(reply, quoted(r.Summary))...)
}

// occurrences marks every non-overlapping occurrence of word in text.
func occurrences(text, word, class, title string) []span {
	if word == "" {
		return nil
	}
	var out []span
	for at := 0; ; {
		i := strings.Index(text[at:], word)
		if i < 0 {
			return out
		}
		out = append(out, span{at + i, at + i + len(word), class, title})
		at += i + len(word)
	}
}

// quoted returns the words a summary quotes in 「」, in order.
func quoted(summary string) map[string]bool {
	out := map[string]bool{}
	for rest := summary; ; {
		i := strings.Index(rest, "「")
		if i < 0 {
			return out
		}
		rest = rest[i+len("「"):]
		j := strings.Index(rest, "」")
		if j < 0 {
			return out
		}
		out[rest[:j]] = true
		rest = rest[j+len("」"):]
	}
}

// endingSpans marks, in each sentence of reply whose last 어절 is one of
// words, that last 어절.
func endingSpans(reply string, words map[string]bool) []span {
	if len(words) == 0 {
		return nil
	}
	var out []span
	at := 0
	for _, s := range speech.Split(reply) {
		i := strings.Index(reply[at:], s)
		if i < 0 {
			continue
		}
		start := at + i
		at = start + len(s)
		w := speech.LastWord(s)
		if w == "" || !words[w] {
			continue
		}
		if j := strings.LastIndex(s, w); j >= 0 {
			out = append(out, span{start + j, start + j + len(w), markEnding, "인용된 종결 어절"})
		}
	}
	return out
}

// markRank orders marks that cover the same text: the verdict priority.
var markRank = map[string]int{markForbidden: 0, markOffCanon: 1, markTouched: 2, markEnding: 3, markRecall: 4}

// segments cuts text at the spans into plain and marked pieces. Where spans
// overlap the earlier, then the longer, then the higher-priority one wins; a
// span covering exactly the same text adds its title to the winner's.
func segments(text string, spans []span) []Segment {
	sort.SliceStable(spans, func(i, j int) bool {
		a, b := spans[i], spans[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.end != b.end {
			return a.end > b.end
		}
		return markRank[a.class] < markRank[b.class]
	})
	var out []Segment
	at := 0
	var last *span
	for i := range spans {
		sp := &spans[i]
		if sp.start < at {
			if last != nil && sp.start == last.start && sp.end == last.end && sp.title != last.title {
				out[len(out)-1].Title += " · " + sp.title
			}
			continue
		}
		if sp.start > at {
			out = append(out, Segment{Text: text[at:sp.start]})
		}
		out = append(out, Segment{Text: text[sp.start:sp.end], Mark: sp.class, Title: sp.title})
		at, last = sp.end, sp
	}
	if at < len(text) {
		out = append(out, Segment{Text: text[at:]})
	}
	return out
}
