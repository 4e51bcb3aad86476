package web

import (
	"fmt"
	"strings"
	"testing"

	"evident/arc/agent"
)

func TestScanTranscript(t *testing.T) {
	entry := func(it int, kind string) string {
		return fmt.Sprintf(`{"time":"2026-12-01T10:00:00Z","iteration":%d,"kind":%q}`, it, kind)
	}
	tests := []struct {
		name                     string
		input                    string
		q                        transcriptQuery
		lines                    []int
		total, start, unreadable int
	}{
		{name: "a window skips and takes among all entries, blank lines not counted",
			input: entry(0, "prompt") + "\n\n" + entry(0, "turn") + "\n" + entry(1, "prompt") + "\n" + entry(1, "turn") + "\n",
			q:     transcriptQuery{FromIteration: -1, Skip: 1, Take: 2}, lines: []int{3, 4}, total: 4, start: 1},
		{name: "a kind filter counts only that kind",
			input: entry(0, "prompt") + "\n" + entry(0, "turn") + "\n" + entry(1, "prompt") + "\n",
			q:     transcriptQuery{Kind: "prompt", FromIteration: -1, Take: 10}, lines: []int{1, 3}, total: 2},
		{name: "an iteration starts the window at its first entry",
			input: entry(0, "prompt") + "\n" + entry(0, "turn") + "\n" + entry(2, "prompt") + "\n" + entry(3, "turn") + "\n",
			q:     transcriptQuery{FromIteration: 1, Take: 1}, lines: []int{3}, total: 4, start: 2},
		{name: "a final partial line that does not parse is left out (a writer is in the middle of it)",
			input: entry(0, "prompt") + "\n" + `{"time":"2026-12-01T10:00:00Z","itera`,
			q:     transcriptQuery{FromIteration: -1, Take: 10}, lines: []int{1}, total: 1},
		{name: "a final line without its newline that parses is kept",
			input: entry(0, "prompt") + "\n" + entry(0, "stop"),
			q:     transcriptQuery{FromIteration: -1, Take: 10}, lines: []int{1, 2}, total: 2},
		{name: "a bad line in the middle is an entry with its error, and the rest still shows",
			input: "garbage\n" + `{"iteration":0}` + "\n" + `{"time":"yesterday","kind":"prompt"}` + "\n" + entry(0, "stop") + "\n",
			q:     transcriptQuery{FromIteration: -1, Take: 10}, lines: []int{1, 2, 3, 4}, total: 4, unreadable: 3},
		{name: "a line longer than agent.MaxTranscriptLine is an error entry, not kept whole",
			input: `{"kind":"agent_event","event":{"text":"` + strings.Repeat("x", agent.MaxTranscriptLine) + `"}}` + "\n" + entry(0, "stop") + "\n",
			q:     transcriptQuery{FromIteration: -1, Take: 10}, lines: []int{1, 2}, total: 2, unreadable: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := scanTranscript(strings.NewReader(tc.input), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var lines []int
			for _, e := range res.Entries {
				lines = append(lines, e.Line)
				if len(e.Raw) > arcMaxField+100 {
					t.Errorf("line %d keeps %d raw bytes", e.Line, len(e.Raw))
				}
			}
			if fmt.Sprint(lines) != fmt.Sprint(tc.lines) || res.Total != tc.total || res.Start != tc.start || res.Unreadable != tc.unreadable {
				t.Errorf("lines %v total %d start %d unreadable %d; want %v %d %d %d", lines, res.Total, res.Start, res.Unreadable,
					tc.lines, tc.total, tc.start, tc.unreadable)
			}
		})
	}
}

func TestReplyParts(t *testing.T) {
	tests := []struct {
		name, event string
		want        string
	}{
		{"a Codex agent message is its text", `{"type":"item.completed","item":{"type":"agent_message","text":"hello"}}`, "[{agent_message hello}]"},
		{"a Codex command shows the command and its output", `{"type":"item.completed","item":{"type":"command_execution","command":"ls","aggregated_output":"a b"}}`,
			"[{command_execution command ls} {command_execution output a b}]"},
		{"a Claude Code assistant message shows text and tool use", `{"type":"assistant","message":{"content":[{"type":"text","text":"hi"},{"type":"tool_use","name":"Bash","input":{"command":"ls"}}]}}`,
			`[{assistant text hi} {tool use Bash {"command":"ls"}}]`},
		{"a Claude Code result is its text", `{"type":"result","result":"done"}`, "[{result done}]"},
		{"a line that was not JSON is its text", `{"text":"plain output"}`, "[{output plain output}]"},
		{"any other event has no text part", `{"type":"thread.started","thread_id":"t"}`, "[]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(replyParts([]byte(tc.event))); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestValidRunName(t *testing.T) {
	for name, want := range map[string]bool{"run-1": true, "my run": true, "": false, ".": false, "..": false,
		".git": false, "a/b": false, `a\b`: false, "../x": false, "a\x00b": false, "a\nb": false} {
		if validRunName(name) != want {
			t.Errorf("validRunName(%q) = %v", name, !want)
		}
	}
}

// FuzzScanTranscript: any input gives entries in line order, a window no
// larger than asked, and no panic.
func FuzzScanTranscript(f *testing.F) {
	f.Add(`{"time":"2026-12-01T10:00:00Z","iteration":0,"kind":"prompt","text":"x"}`+"\n", 0, 5)
	f.Add("garbage\n\n{\"kind\":\"turn\"}\n{\"kind\":", 1, 1)
	f.Add(`{"kind":"agent_event","event":{"text":"a"}}`+"\r\n"+`{"kind":"mystery","x":[1,2]}`, 0, 2)
	f.Fuzz(func(t *testing.T, input string, skip, take int) {
		skip, take = max(0, skip%100), max(0, take%100)
		res, err := scanTranscript(strings.NewReader(input), transcriptQuery{FromIteration: -1, Skip: skip, Take: take})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Entries) > take || res.Total < len(res.Entries) {
			t.Fatalf("window %d of %d, take %d", len(res.Entries), res.Total, take)
		}
		for i := 1; i < len(res.Entries); i++ {
			if res.Entries[i].Line <= res.Entries[i-1].Line {
				t.Fatalf("lines out of order: %d after %d", res.Entries[i].Line, res.Entries[i-1].Line)
			}
		}
	})
}
