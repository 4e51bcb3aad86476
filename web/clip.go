package web

import (
	"fmt"

	"evident/internal/clip"
)

// maxShownText caps how much of one text (a reply, a user message, an
// evidence value) a page shows: 64 KiB. A row may hold any length — the
// judge reads lines of any size, and the live API takes rows up to its body
// limit — but a page that renders a 40 MB reply whole is 100 MB of HTML and
// seconds of server time (found by a test user). The rest is named, with
// where to read it whole (the records export keeps every byte).
const maxShownText = 64 << 10

// clipAt is the largest cut ≤ max bytes of s between two grapheme clusters
// (len(s) when s fits): a cluster that would cross max is left out whole, so
// the text before the note never ends in part of a character (an emoji ZWJ
// sequence without its last members, a flag's lone regional indicator, a
// letter without its combining marks). internal/clip, UAX #29.
func clipAt(s string, max int) int { return clip.Bytes(s, max) }

// clippedNote says how much of a text a page left out.
func clippedNote(left int) string {
	return fmt.Sprintf(" … (%d바이트 더 있음: 전문은 기록 JSONL·CSV 내보내기에 있습니다)", left)
}

// shownSegments is segments over at most maxShownText bytes of text: spans
// past the cut are dropped, one crossing it is cut short, and a last
// segment (Mark "clipped") says how much was left out.
func shownSegments(text string, spans []span) []Segment {
	cut := clipAt(text, maxShownText)
	if cut == len(text) {
		return segments(text, spans)
	}
	kept := make([]span, 0, len(spans))
	for _, sp := range spans {
		if sp.start >= cut {
			continue
		}
		sp.end = min(sp.end, cut)
		kept = append(kept, sp)
	}
	return append(segments(text[:cut], kept), Segment{Text: clippedNote(len(text) - cut), Mark: "clipped",
		Title: "이 화면은 글 하나를 64 KiB까지만 보여 줍니다"})
}

// shownText is text cut to maxShownText bytes with the note of what was left out.
func shownText(text string) string {
	cut := clipAt(text, maxShownText)
	if cut == len(text) {
		return text
	}
	return text[:cut] + clippedNote(len(text)-cut)
}
