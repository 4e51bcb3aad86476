package evalrun

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"

	"evident/persona"
)

// Summary is what `evident eval` reports about one run: the gold set it was
// given, the agreement report (Evaluate) and the model comparison
// (CompareModels). Its JSON is the output of `evident eval --json`.
type Summary struct {
	Run      int64  `json:"run"`         // run id in the store
	GoldFile string `json:"gold_file"`   // the gold file as named on the command line
	Gold     int    `json:"gold_labels"` // labels read from it
	// NotStored, when not "", says why the labels were not stored (a store
	// the user may only read); "" means they were.
	NotStored string      `json:"gold_not_stored,omitempty"`
	Report    Report      `json:"agreement"`
	Models    ModelReport `json:"models"`
}

// WriteJSON writes s as indented JSON (HTML characters not escaped).
func (s Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteText writes s for people: agreement with its Wilson interval and
// kappa, the confusion matrix (columns aligned for Hangul, which takes two
// terminal columns), disagreements by reason, gold turns without a record or
// with an invalid verdict (the first five ids), then the models' mismatch
// rates and McNemar pairs. Errors are w's.
func (s Summary) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	writeEval(bw, s)
	return bw.Flush()
}

var shortVerdicts = map[persona.Verdict]string{
	persona.ForbiddenTopic: "금지", persona.OffCanon: "세계관", persona.SpeechOff: "말투",
	persona.RecallFailed: "기억", persona.Kept: "설정",
}

// writeEval is WriteText without the buffer.
func writeEval(w io.Writer, e Summary) {
	rep := e.Report
	stored := "stored"
	if e.NotStored != "" {
		stored = "not stored: " + e.NotStored
	}
	fmt.Fprintf(w, "run #%d · %d gold labels from %s (%s)\n", e.Run, e.Gold, e.GoldFile, stored)
	if rep.N == 0 {
		fmt.Fprintln(w, "agreement: no gold turn has a record in this run, so there is nothing to compare")
	} else {
		fmt.Fprintf(w, "agreement %d/%d = %.1f %% (95 %% Wilson %.1f – %.1f %%)", rep.Agreed, rep.N, 100**rep.Agreement,
			100*rep.Interval.Lo, 100*rep.Interval.Hi)
		if rep.Kappa != nil {
			fmt.Fprintf(w, " · Cohen kappa %.3f\n", *rep.Kappa)
		} else {
			fmt.Fprintln(w, " · Cohen kappa undefined")
		}
		fmt.Fprintln(w, "confusion (rows gold, columns predicted):")
		fmt.Fprint(w, pad("", 10, false))
		for _, l := range rep.Labels {
			fmt.Fprint(w, pad(shortVerdicts[l], 8, true))
		}
		fmt.Fprintln(w)
		for i, l := range rep.Labels {
			fmt.Fprint(w, pad("  "+shortVerdicts[l], 10, false))
			for _, n := range rep.Confusion[i] {
				fmt.Fprintf(w, "%8d", n)
			}
			fmt.Fprintln(w)
		}
		if len(rep.Disagreements) > 0 {
			fmt.Fprintln(w, "disagreements by reason (gold → predicted):")
			for _, g := range rep.Disagreements {
				detail := ""
				if g.Detail != "" {
					detail = " · " + g.Detail
				}
				fmt.Fprintf(w, "  %3d  %s → %s%s: %s\n", g.Count, g.Gold, g.Predicted, detail, strings.Join(g.TurnIDs, " "))
			}
		}
	}
	if len(rep.Missing) > 0 {
		fmt.Fprintf(w, "gold turns without a record in run #%d: %d (%s)\n", e.Run, len(rep.Missing), firstFew(rep.Missing))
	}
	if len(rep.Invalid) > 0 {
		fmt.Fprintf(w, "gold turns left out (invalid verdict): %d (%s)\n", len(rep.Invalid), firstFew(rep.Invalid))
	}
	m := e.Models
	if m.Prompts == 0 {
		fmt.Fprintln(w, "models: no prompt_id was answered by several models; nothing to compare")
		return
	}
	fmt.Fprintf(w, "models on %d shared prompts (mismatch = verdict other than %s):\n", m.Prompts, persona.Kept)
	for _, r := range m.Models {
		fmt.Fprintf(w, "  %-20s %3d/%-3d %5.1f %% (95 %% Wilson %.1f – %.1f %%)\n", r.Model, r.Mismatches, r.N,
			100*r.Rate, 100*r.Interval.Lo, 100*r.Interval.Hi)
	}
	fmt.Fprintln(w, "pairs (McNemar exact test on the discordant prompts):")
	for _, p := range m.Pairs {
		fmt.Fprintf(w, "  %s vs %s: n %d, only %s %d, only %s %d, both %d, neither %d, p = %.3g\n",
			p.ModelA, p.ModelB, p.N, p.ModelA, p.B, p.ModelB, p.C, p.Both, p.Neither, p.P)
	}
}

// pad pads s with spaces to width terminal columns (a Hangul syllable takes
// two), on the left when right is true.
func pad(s string, width int, right bool) string {
	w := 0
	for _, r := range s {
		if unicode.Is(unicode.Hangul, r) {
			w += 2
		} else {
			w++
		}
	}
	if w >= width {
		return s
	}
	if right {
		return strings.Repeat(" ", width-w) + s
	}
	return s + strings.Repeat(" ", width-w)
}

func firstFew(ids []string) string {
	if len(ids) > 5 {
		return strings.Join(ids[:5], " ") + " …"
	}
	return strings.Join(ids, " ")
}
