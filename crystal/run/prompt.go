package run

import (
	"strings"

	"evident/crystal"
	"evident/llm"
)

// Prompt is the user text for one item: the question, then, when the item
// carries its options in an "options"/"choices" list, one "A) text" line per
// option in letter order (spec crystal.md "Data": options laid out as
// "A) …" lines). A question that already holds option lines
// (crystal.ParseOptions finds some) is sent as is, so options are never
// listed twice. An option's own leading "A)" or "(A)" is not repeated.
func Prompt(it crystal.Item) string {
	q := strings.TrimRight(it.Question, " \t\r\n")
	if len(it.Options) == 0 || len(crystal.ParseOptions(q)) > 0 {
		return q
	}
	var b strings.Builder
	b.WriteString(q)
	for k, opt := range it.Options {
		if k >= 26 {
			break
		}
		l := string(rune('A' + k))
		t := strings.TrimSpace(opt)
		for _, p := range []string{l + ")", "(" + l + ")"} {
			if strings.HasPrefix(t, p) {
				t = strings.TrimSpace(t[len(p):])
				break
			}
		}
		b.WriteString("\n" + l + ") " + t)
	}
	return b.String()
}

// Request is the call the benchmark's authors made for one item (spec
// crystal.md "Prompt and parsing"): the seed's system prompt
// (crystal.SystemPrompt), temperature crystal.Temperature (0.1), and one user
// message with Prompt(it) and the image (a data URI, or a URL) when there is
// one. No response_format is asked for: the system prompt is the output
// contract and crystal.ParseReply reads whatever comes back.
func Request(it crystal.Item, image string) llm.Request {
	var images []string
	if image != "" {
		images = []string{image}
	}
	return llm.Request{
		System:      crystal.SystemPrompt,
		Messages:    []llm.Message{llm.User(Prompt(it), images...)},
		Temperature: llm.Float(crystal.Temperature),
	}
}
