// Package demo embeds a small original CRYSTAL sample set for demos and
// tests (spec crystal.md "Data": the real test set is gated, so ship a small
// original sample in the same format): 15 questions about 11 simple images —
// bar charts read off gridlines, dots to count, shapes, stacked blocks, a
// half-filled grid, an arrow — with multiple-choice options (as "A) …" lines,
// as "options" and as "choices"), numeric, yes/no and free-text answers, and
// 2–6 single-clause reference steps each; and predictions from three
// fictional models written for this project:
//
//   - lumen-7b: concise, close to the reference wording, two wrong answers;
//   - paraglide-mini: verbose paraphrases, steps out of order, answers in
//     words ("The answer is blue", "two units");
//   - quill-vl: raw replies — code fences, trailing commas, prose around the
//     JSON, a number as a step, one unparseable reply, one missing item and
//     one id that is not in the set.
//
// The images were drawn by this package's test (go test ./crystal/demo
// -update writes them; without -update the test checks that the committed
// files hold exactly the drawn pixels).
//
// Files under data/: refs.json (keyed by item id, the dataset's layout),
// preds.jsonl (JSON Lines, both prediction forms), images/*.png.
package demo

import (
	"bytes"
	"embed"
	"io/fs"

	"evident/crystal"
	"evident/crystal/report"
)

//go:embed data/refs.json data/preds.jsonl data/images/*.png
var files embed.FS

// Items returns the sample items in file order.
func Items() ([]crystal.Item, error) {
	b, err := files.ReadFile("data/refs.json")
	if err != nil {
		return nil, err
	}
	return report.ReadItems(bytes.NewReader(b), "demo:refs.json")
}

// Predictions returns the three fictional models' predictions grouped by
// model (lumen-7b, paraglide-mini, quill-vl).
func Predictions() ([]report.Run, error) {
	b, err := files.ReadFile("data/preds.jsonl")
	if err != nil {
		return nil, err
	}
	preds, err := report.ReadPredictions(bytes.NewReader(b), "demo:preds.jsonl", "demo")
	if err != nil {
		return nil, err
	}
	return report.Group(preds), nil
}

// Images returns the sample images; an item's Image field ("images/x.png")
// is a path in it.
func Images() fs.FS {
	sub, err := fs.Sub(files, "data")
	if err != nil {
		panic(err) // the embedded tree always has data/
	}
	return sub
}
