package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// evident runs the command line in-process and returns stdout, stderr and the
// error.
func evident(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	a := app()
	a.Writer, a.ErrWriter = &out, &errOut
	err := a.Run(context.Background(), append([]string{"evident"}, args...))
	return out.String(), errOut.String(), err
}

// runSub runs "evident SUB ARGS" in-process with only the subcommand sub
// registered, and returns stdout, stderr (with the error line main would
// print) and the exit code main would return.
func runSub(t *testing.T, sub *cli.Command, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &cli.Command{
		Name:           "evident",
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Commands:       []*cli.Command{sub},
		Writer:         &out,
		ErrWriter:      &errOut,
	}
	err := a.Run(context.Background(), append([]string{"evident", sub.Name}, args...))
	if err != nil {
		errOut.WriteString("evident: " + err.Error() + "\n")
	}
	return out.String(), errOut.String(), exitCode(err)
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestJudgeDemo(t *testing.T) {
	out, errOut, err := evident(t, "judge", "--demo")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 195 {
		t.Fatalf("%d records, want the demo's 195", len(lines))
	}
	var first struct {
		TurnID  string `json:"turn_id"`
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.TurnID != "T-010001" {
		t.Errorf("first record %q (%v)", lines[0], err)
	}
	if want := "judged 195 (금지 소재 접촉 15 · 세계관 밖 고유명사 18 · 말투 어긋남 36 · 앞 회차를 기억 못 함 9 · 설정대로 말함 117), rejected 0\n"; errOut != want {
		t.Errorf("tally %q, want %q", errOut, want)
	}
}

func TestJudgeThenCheck(t *testing.T) {
	dir := t.TempDir()
	verdicts := filepath.Join(dir, "v.jsonl")
	if _, _, err := evident(t, "judge", "--demo", "--out", verdicts); err != nil {
		t.Fatal(err)
	}
	out, _, err := evident(t, "check", "--demo", "--verdicts", verdicts)
	if err != nil {
		t.Fatalf("check of our own records failed: %v\n%s", err, out)
	}
	if !strings.Contains(out, " 1  ok   pass 195  fail 0") || !strings.Contains(out, "10  ok   pass 195  fail 0") {
		t.Errorf("report:\n%s", out)
	}

	t.Run("check reads the summary sidecar", func(t *testing.T) {
		log := filepath.Join(dir, "summaries.jsonl")
		if _, _, err := evident(t, "judge", "--demo", "--out", filepath.Join(dir, "v2.jsonl"), "--summary-log", log); err != nil {
			t.Fatal(err)
		}
		out, _, err := evident(t, "check", "--demo", "--verdicts", verdicts, "--summary-log", log)
		if err != nil || !strings.Contains(out, "summaries: model 0, rule 195\n") {
			t.Errorf("err %v, report:\n%s", err, out)
		}
	})

	t.Run("a tampered record makes check exit 1", func(t *testing.T) {
		b, _ := os.ReadFile(verdicts)
		bad := write(t, dir, "bad.jsonl", strings.Replace(string(b), `"verdict":"설정대로 말함"`, `"verdict":"괜찮음"`, 1))
		out, _, err := evident(t, "check", "--demo", "--verdicts", bad)
		var ec cli.ExitCoder
		if !errors.As(err, &ec) || ec.ExitCode() != 1 {
			t.Fatalf("err = %v, want exit code 1", err)
		}
		if !strings.Contains(out, " 1  FAIL pass 194  fail 1") {
			t.Errorf("report:\n%s", out)
		}
	})
}

func TestJudgeFilesAndRejects(t *testing.T) {
	dir := t.TempDir()
	cards := write(t, dir, "cards.csv", "character_id,name,honorific_rule,first_person,canon_entities,forbidden_topics,entity_roles\n"+
		`C1,도강,반말,나,"[""하늘""]","[""현실 정치""]","[{""role"":""동생"",""entity"":""하늘""}]"`+"\n")
	lex := write(t, dir, "lexicon.jsonl", `{"term":"선거","topic":"현실 정치"}`+"\n")
	turns := write(t, dir, "turns.jsonl", `{"turn_id":"T1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"검을 잡아.","first_person":"나","named_entities":[]}`+"\n"+
		`{"turn_id":"T2","session_id":"S","character_id":"C1","model_id":"m","reply_text":"응.","created_at":"yesterday"}`+"\n")
	rejects := filepath.Join(dir, "rejects.jsonl")
	out, errOut, err := evident(t, "judge", "--turns", turns, "--cards", cards, "--lexicon", lex, "--rejects", rejects)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, `"turn_id":"T1"`) {
		t.Errorf("records %q", out)
	}
	if !strings.Contains(errOut, "judged 1 (") || !strings.Contains(errOut, "rejected 1") {
		t.Errorf("tally %q", errOut)
	}
	b, _ := os.ReadFile(rejects)
	var r struct {
		File   string `json:"file"`
		Line   int    `json:"line"`
		TurnID string `json:"turn_id"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Line != 2 || r.TurnID != "T2" || !strings.Contains(r.Reason, "created_at") || r.File != turns {
		t.Errorf("reject %s (%v)", b, err)
	}
}

func TestErrorsNameFileLineColumn(t *testing.T) {
	dir := t.TempDir()
	cards := write(t, dir, "cards.json", "[\n  {\"character_id\": \"C1\",\n   \"name\": }\n]\n")
	lex := write(t, dir, "lexicon.csv", "term,topic\n")
	turns := write(t, dir, "turns.jsonl", "")
	out, errOut, err := evident(t, "judge", "--turns", turns, "--cards", cards, "--lexicon", lex)
	msg := errOut
	if err != nil {
		msg += err.Error()
	}
	if !strings.Contains(msg, "cards.json") || !strings.Contains(msg, "line 3") || !strings.Contains(msg, "column") {
		t.Errorf("want file, line 3 and column in %q (stdout %q)", msg, out)
	}
}

func TestFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"judge without tables asks for them", []string{"judge"}, "--turns is required"},
		{"demo cannot be mixed with files", []string{"judge", "--demo", "--turns", "x.jsonl"}, "--demo cannot be combined"},
		{"an unknown profile is named", []string{"judge", "--demo", "--speech-profile", "fancy"}, `unknown speech profile "fancy"`},
		{"an unknown extension is named", []string{"judge", "--turns", "t.txt", "--cards", "c.json", "--lexicon", "l.csv"}, "t.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := evident(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// verdicts maps turn_id to verdict in JSONL records.
func verdicts(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			TurnID  string `json:"turn_id"`
			Verdict string `json:"verdict"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		m[r.TurnID] = r.Verdict
	}
	return m
}

// TestProfiles checks the profile and --endings flags on the demo turns the
// hand reading marks as profile-sensitive: T-010041 "필요." and T-020006
// "중요." (nouns ending in 요) and T-020203 (-습니까 from a 존댓말 card).
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	endings := write(t, dir, "endings.txt", "# -ㅂ니까 questions are polite\nㅂ니까\n")
	tests := []struct {
		name string
		args []string
		want map[string]string
	}{
		{"the seed profile reads nouns in 요 as 존댓말 and 습니까 as 반말", []string{"judge", "--demo"},
			map[string]string{"T-010041": "말투 어긋남", "T-020006": "말투 어긋남", "T-020203": "말투 어긋남"}},
		{"the extended profile fixes all three", []string{"judge", "--demo", "--speech-profile", "extended"},
			map[string]string{"T-010041": "설정대로 말함", "T-020006": "설정대로 말함", "T-020203": "설정대로 말함"}},
		{"an endings file adding ㅂ니까 fixes only the question", []string{"judge", "--demo", "--endings", endings},
			map[string]string{"T-010041": "말투 어긋남", "T-020006": "말투 어긋남", "T-020203": "설정대로 말함"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := evident(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			got := verdicts(t, out)
			for id, v := range tt.want {
				if got[id] != v {
					t.Errorf("%s: %q, want %q", id, got[id], v)
				}
			}
		})
	}
}

func TestJudgeIntoStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "e.db")
	_, errOut, err := evident(t, "judge", "--demo", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "judged 195 (") || !strings.Contains(errOut, "stored run 1 in "+db) {
		t.Errorf("stderr %q", errOut)
	}
	out, _, err := evident(t, "eval", "--db", db, "--gold", "../../persona/demo/data/gold.jsonl", "--json")
	if err != nil || !strings.Contains(out, `"agreed": 108`) {
		t.Errorf("eval on the stored run: %v\n%.400s", err, out)
	}
	if _, _, err := evident(t, "judge", "--demo", "--db", db, "--out", "x.jsonl"); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Errorf("--db with --out: err = %v", err)
	}
}

// TestFailedRunsKeepOldFiles and the swapped-table cases: a run that fails
// leaves --out and --rejects as they were, a wrong table is a clear error,
// and a run that judges nothing exits 1.
func TestFailedRunsKeepOldFiles(t *testing.T) {
	dir := t.TempDir()
	out := write(t, dir, "out.jsonl", "precious\n")
	rej := write(t, dir, "rej.jsonl", "also precious\n")
	cards := write(t, dir, "cards.json", cardsTable)
	lex := write(t, dir, "lexicon.csv", "term,topic\n선거,현실 정치\n")
	good := write(t, dir, "turns.jsonl", `{"turn_id":"T1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"검을 잡아.","first_person":"나","named_entities":[]}`+"\n")

	t.Run("a missing turns file leaves --out and --rejects untouched", func(t *testing.T) {
		_, _, err := evident(t, "judge", "--turns", filepath.Join(dir, "missing.jsonl"), "--cards", cards, "--lexicon", lex, "--out", out, "--rejects", rej)
		if err == nil {
			t.Fatal("no error")
		}
		for path, want := range map[string]string{out: "precious\n", rej: "also precious\n"} {
			if b, _ := os.ReadFile(path); string(b) != want {
				t.Errorf("%s now holds %q", path, b)
			}
		}
	})
	t.Run("a good run replaces --out", func(t *testing.T) {
		if _, _, err := evident(t, "judge", "--turns", good, "--cards", cards, "--lexicon", lex, "--out", out, "--rejects", rej); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(out); !strings.Contains(string(b), `"turn_id":"T1"`) {
			t.Errorf("out = %q", b)
		}
		if b, _ := os.ReadFile(rej); len(b) != 0 {
			t.Errorf("rejects = %q, want empty", b)
		}
	})
	t.Run("a turns table given as the lexicon is refused", func(t *testing.T) {
		_, _, err := evident(t, "judge", "--turns", good, "--cards", cards, "--lexicon", good)
		if err == nil || !strings.Contains(err.Error(), "no topic_lexicon row could be read") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a lexicon given as the cards is refused", func(t *testing.T) {
		_, _, err := evident(t, "judge", "--turns", good, "--cards", lex, "--lexicon", lex)
		if err == nil || !strings.Contains(err.Error(), "no character_card row could be read") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a run where every turn is rejected exits 1", func(t *testing.T) {
		bad := write(t, dir, "bad.jsonl", `{"turn_id":"T1","session_id":"S","character_id":"nobody","model_id":"m"}`+"\n")
		_, errOut, err := evident(t, "judge", "--turns", bad, "--cards", cards, "--lexicon", lex)
		if exitCode(err) != 1 || !strings.Contains(errOut, "judged 0 (") {
			t.Errorf("err = %v, stderr %q", err, errOut)
		}
	})
	t.Run("a run where every turn is rejected keeps --out and writes --rejects", func(t *testing.T) {
		if err := os.WriteFile(out, []byte("precious\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		bad := write(t, dir, "bad2.jsonl", `{"turn_id":"T1","session_id":"S","character_id":"nobody","model_id":"m"}`+"\n[1]\n")
		_, _, err := evident(t, "judge", "--turns", bad, "--cards", cards, "--lexicon", lex, "--out", out, "--rejects", rej)
		if exitCode(err) != 1 || !strings.Contains(err.Error(), "(see "+rej+"); --out was left as it was") {
			t.Errorf("err = %v", err)
		}
		if b, _ := os.ReadFile(out); string(b) != "precious\n" {
			t.Errorf("--out now holds %q, want it kept", b)
		}
		b, _ := os.ReadFile(rej)
		if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 2 ||
			!strings.Contains(lines[0], `"line":1`) || !strings.Contains(lines[0], "nobody") || !strings.Contains(lines[1], `"line":2`) {
			t.Errorf("--rejects holds %q, want the two rows' reasons", b)
		}
	})
}

const cardsTable = `[{"character_id":"C1","name":"도강","honorific_rule":"반말","first_person":"나","canon_entities":["하늘"],"forbidden_topics":["현실 정치"],"entity_roles":[]}]`
