package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CLI refuses what the screen's upload refuses (issue 12 item 4: one
// validator, crystal/report.ReadRuns).
func TestCrystalScoreRefusesWhatTheUploadRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	refs := write("refs.jsonl", `{"id": "q1", "question": "How many dots?", "answer": "3", "reference_steps": ["There are 3 dots."]}`+"\n")
	for _, c := range []struct {
		name, preds, want string
	}{
		{"predictions for none of the items are refused", `{"id": "other", "answer": "3"}` + "\n",
			`none of the 1 predictions has the id of one of the 1 reference items (the first is "other")`},
		{"an empty predictions file is refused", "\n", "no predictions"},
	} {
		t.Run(c.name, func(t *testing.T) {
			preds := write("p.jsonl", c.preds)
			_, errOut, code := crystalRun(t, "score", "--refs", refs, "--preds", preds)
			if code != 2 || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 mentioning %q", code, errOut, c.want)
			}
		})
	}
}
