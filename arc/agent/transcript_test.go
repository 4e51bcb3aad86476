package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTranscriptWritesEachKindWithItsFieldsAndReadsThemBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), TranscriptPath)
	clock := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	tr, err := OpenTranscript(path, func() time.Time { return clock })
	if err != nil {
		t.Fatal(err)
	}
	entries := []Entry{
		{Kind: KindPrompt, Name: "main", Text: "hello", Session: SessionFresh},
		{Iteration: 1, Kind: KindAgentEvent, Event: EventJSON([]byte(`{"type":"thread.started","thread_id":"t1"}`))},
		{Iteration: 1, Kind: KindAgentEvent, Event: EventJSON([]byte("plain text\n"))},
		{Iteration: 1, Kind: KindTurn, ExitCode: 0, Seconds: 1.5, AgentSession: "t1"},
		{Iteration: 1, Kind: KindInspection, Level: 1, Attempt: 1, Next: "continuation"},
		{Iteration: 1, Kind: KindStop, Reason: "solved"},
	}
	for _, e := range entries {
		if err := tr.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	tr.Close()
	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	want0 := `{"iteration":0,"kind":"prompt","name":"main","session":"fresh","text":"hello","time":"2026-12-01T10:00:00.123456789Z"}`
	if lines[0] != want0 {
		t.Errorf("line 1 = %s, want %s", lines[0], want0)
	}
	if !strings.Contains(lines[2], `"event":{"text":"plain text"}`) {
		t.Errorf("non-JSON line not wrapped: %s", lines[2])
	}
	var m map[string]any
	json.Unmarshal([]byte(lines[3]), &m)
	if m["exit_code"] != 0.0 || m["timed_out"] != false || m["agent_session"] != "t1" {
		t.Errorf("turn entry = %s", lines[3])
	}
	if strings.Contains(lines[3], `"level"`) {
		t.Errorf("turn entry carries inspection fields: %s", lines[3])
	}
	got, err := ReadTranscript(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 || got[0].Name != "main" || !got[0].Time.Equal(clock) || got[3].Seconds != 1.5 || got[5].Reason != "solved" {
		t.Errorf("read back %+v", got)
	}
	if string(got[1].Event) != `{"type":"thread.started","thread_id":"t1"}` {
		t.Errorf("event = %s", got[1].Event)
	}
}

func TestParseTranscriptNamesTheBadLineAndToleratesAPartialLastLine(t *testing.T) {
	good := `{"time":"2026-12-01T10:00:00Z","iteration":0,"kind":"stop","reason":"x"}` + "\n"
	if _, err := ParseTranscript(strings.NewReader(good+"{bad\n"+good), "t.jsonl"); err == nil || !strings.Contains(err.Error(), "t.jsonl line 2") {
		t.Errorf("err = %v, want one naming line 2", err)
	}
	got, err := ParseTranscript(strings.NewReader(good+`{"time":"20`), "t.jsonl")
	if err != nil || len(got) != 1 {
		t.Errorf("partial last line: %v, %d entries", err, len(got))
	}
	if _, err := ParseTranscript(strings.NewReader(`{"time":"2026-12-01T10:00:00Z"}`+"\n"), "t.jsonl"); err == nil || !strings.Contains(err.Error(), "kind") {
		t.Errorf("missing kind: %v", err)
	}
}

func FuzzParseTranscript(f *testing.F) {
	f.Add([]byte(`{"time":"2026-12-01T10:00:00Z","iteration":0,"kind":"stop","reason":"x"}` + "\n"))
	f.Add([]byte("{bad\n"))
	f.Add([]byte(`{"kind":"agent_event","event":{"text":"a"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseTranscript(strings.NewReader(string(b)), "fuzz")
	})
}
