package live_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"evident/persona"
	"evident/persona/live"
)

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("이름%04d", i)
	}
	return out
}

// A turn over a limit is refused with a *LimitError naming the limit, its
// value, what the turn has and the row, and the state is left as it was
// (byte for byte): nothing of the turn is kept.
func TestATurnOverALimitIsRefusedNamingItAndLeavesTheStateUnchanged(t *testing.T) {
	j := smallJudge(t)
	reply198K := strings.Repeat("가", 66_000) // 198,000 bytes
	tests := []struct {
		name   string
		limits live.Limits
		turn   *persona.Turn
		want   live.LimitError
	}{
		{"2,000 distinct names are over the default 1,000", live.Limits{},
			turn("BIG", "2026-01-01T10:01:00Z", names(2000), false, "누구?", reply198K),
			live.LimitError{Limit: live.LimitNames, Max: 1000, Got: 2000, TurnID: "BIG", SessionID: "S"}},
		{"names are counted once each: 3 distinct of 5 entries are over a limit of 2", live.Limits{MaxNames: 2},
			turn("N", "2026-01-01T10:01:00Z", []string{"a", "b", "a", "c", "b"}, false, "?", "."),
			live.LimitError{Limit: live.LimitNames, Max: 2, Got: 3, TurnID: "N", SessionID: "S"}},
		{"a reply one byte over the default 1 MiB with its message", live.Limits{},
			turn("LONG", "2026-01-01T10:01:00Z", []string{}, false, "응", strings.Repeat("a", 1<<20-len("응")+1)),
			live.LimitError{Limit: live.LimitRowBytes, Max: 1 << 20, Got: 1<<20 + 1, TurnID: "LONG", SessionID: "S"}},
		{"a turn that would take the state past MaxStateBytes", live.Limits{MaxStateBytes: 400},
			turn("FULL", "2026-01-01T10:01:00Z", []string{"물새섬"}, false, "?", strings.Repeat("b", 300)),
			// the state after it: the header, T0's stamp, 2 mentions, 2 cited turns
			live.LimitError{Limit: live.LimitStateBytes, Max: 400, Got: 0, TurnID: "FULL", SessionID: "S"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st live.State
			if _, _, err := tc.limits.Step(j, &st, turn("T0", "2026-01-01T10:00:00Z", []string{"도윤"}, false, "가족은?", "동생 도윤이 있어.")); err != nil {
				t.Fatal(err)
			}
			before := string(st.AppendJSON(nil))
			if tc.want.Limit == live.LimitStateBytes { // what the state would be: the same turn without the limit
				var free live.State
				free.UnmarshalJSON([]byte(before))
				if _, _, err := live.Step(j, &free, tc.turn); err != nil {
					t.Fatal(err)
				}
				tc.want.Got = free.Bytes()
			}
			_, _, err := tc.limits.Step(j, &st, tc.turn)
			var le *live.LimitError
			if !errors.As(err, &le) || *le != tc.want || !errors.Is(err, live.ErrLimit) {
				t.Fatalf("error %v (%+v), want %+v", err, le, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want.Limit) || !strings.Contains(err.Error(), fmt.Sprint(tc.want.Max)) || !strings.Contains(err.Error(), fmt.Sprint(tc.want.Got)) {
				t.Fatalf("message %q does not name the limit, its value and what the turn has", err)
			}
			if got := string(st.AppendJSON(nil)); got != before {
				t.Fatalf("state changed:\n %s\nwas\n %s", got, before)
			}
		})
	}
}

// A turn at a limit is judged: the limits are maxima, inclusive.
func TestATurnAtALimitIsJudged(t *testing.T) {
	j := smallJudge(t)
	first := turn("T0", "2026-01-01T10:00:00Z", names(1000), false, "누구?", strings.Repeat("가", 1<<20/3)+"a")
	first.UserMessage = ptr("")
	var free live.State
	if _, _, err := live.Step(j, &free, first); err != nil {
		t.Fatalf("1,000 names and a 1 MiB reply: %v", err)
	}
	if live.RowBytes(first) != 1<<20 {
		t.Fatalf("row bytes %d, want the 1 MiB limit", live.RowBytes(first))
	}
	lim := live.Limits{MaxStateBytes: free.Bytes()}
	var st live.State
	if _, _, err := lim.Step(j, &st, first); err != nil {
		t.Fatalf("a state of exactly MaxStateBytes: %v", err)
	}
}

// Limits.Check refuses a negative limit, naming it; zero is the default.
func TestLimitsCheckRefusesANegativeLimit(t *testing.T) {
	tests := []struct {
		name string
		l    live.Limits
		want string
	}{
		{"zero limits are the defaults", live.Limits{}, ""},
		{"a negative names limit", live.Limits{MaxNames: -1}, "names_per_row is -1"},
		{"a negative state limit", live.Limits{MaxStateBytes: -5}, "state_bytes is -5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.l.Check()
			if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	if d := (live.Limits{}).Resolved(); d != live.DefaultLimits() || d.MaxNames != 1000 || d.MaxRowBytes != 1<<20 || d.MaxStateBytes != 2<<20 {
		t.Fatalf("defaults %+v", d)
	}
}

// BenchmarkStepAfterABigTurn is the next turn of a session whose first turn
// named 1,000 entities with a 200 KB reply: it costs what its own row does.
func BenchmarkStepAfterABigTurn(b *testing.B) {
	j := smallJudge(b)
	var st live.State
	if _, _, err := live.Step(j, &st, turn("T0", "2026-01-01T10:00:00Z", names(1000), false, "누구?", strings.Repeat("가", 66_000))); err != nil {
		b.Fatal(err)
	}
	js := st.AppendJSON(nil)
	next := turn("T1", "2026-01-01T10:01:00Z", []string{"도윤"}, true, "동생 이름이 뭐였지?", "글쎄.")
	for b.Loop() {
		b.StopTimer()
		var s live.State
		s.UnmarshalJSON(js)
		b.StartTimer()
		if _, _, err := live.Step(j, &s, next); err != nil {
			b.Fatal(err)
		}
	}
}
