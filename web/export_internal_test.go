package web

import (
	"context"
	"testing"

	"evident/persona"
	"evident/store"
)

func demoServer(t *testing.T) *Server {
	t.Helper()
	db, err := store.Open(context.Background(), store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, _, err := EnsureDemo(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	s, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEachEntryPages(t *testing.T) {
	s := demoServer(t)
	old := exportPage
	exportPage = 7 // the demo's 195 records: 27 full pages and one of 6
	t.Cleanup(func() { exportPage = old })
	for _, tc := range []struct {
		name string
		f    store.Filter
		want int
	}{
		{"the whole run comes page by page in run order, each record once", store.Filter{}, 195},
		{"a filter pages the same way: the 36 말투 어긋남 records", store.Filter{Verdict: persona.SpeechOff}, 36},
		{"a filter of exactly one page's worth ends after it", store.Filter{TurnID: "T-010116"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := s.db.Entries(context.Background(), 1, tc.f)
			if err != nil || len(want) != tc.want {
				t.Fatalf("store: %d entries, %v", len(want), err)
			}
			var got []int
			firsts := 0
			err = s.eachEntry(context.Background(), 1, tc.f, func() error { firsts++; return nil },
				func(e *store.Entry) error { got = append(got, e.Seq); return nil })
			if err != nil || firsts != 1 || len(got) != len(want) {
				t.Fatalf("%d entries, first called %d times, %v", len(got), firsts, err)
			}
			for i := range want {
				if got[i] != want[i].Seq {
					t.Fatalf("entry %d has seq %d, want %d", i, got[i], want[i].Seq)
				}
			}
		})
	}
	t.Run("a run that does not exist fails before first is called", func(t *testing.T) {
		called := false
		err := s.eachEntry(context.Background(), 9, store.Filter{}, func() error { called = true; return nil },
			func(*store.Entry) error { return nil })
		if err == nil || called {
			t.Errorf("err %v, first called %v", err, called)
		}
	})
}

func TestCSVCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"=1+1", "'=1+1"},
		{"+82 10", "'+82 10"},
		{"-1", "'-1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"안녕 =1", "안녕 =1"},
		{"T-010116", "T-010116"},
		{"", ""},
	} {
		if got := csvCell(tc.in); got != tc.want {
			t.Errorf("csvCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
