package batch

import (
	"fmt"
	"testing"
)

func TestIDSet(t *testing.T) {
	s := newIDSet()
	for i := 0; i < 5000; i++ {
		if !s.add(fmt.Sprintf("T-%d", i), int32(i), int32(i+1)) {
			t.Fatalf("T-%d reported as present before it was added", i)
		}
	}
	t.Run("a repeated id is refused and keeps its first position", func(t *testing.T) {
		if s.add("T-42", 9999, 9999) {
			t.Fatal("T-42 added twice")
		}
		if e, ok := s.get("T-42"); !ok || e.pos != 42 || e.line != 43 {
			t.Fatalf("T-42 = %+v %v", e, ok)
		}
	})
	t.Run("an unknown id is absent", func(t *testing.T) {
		if _, ok := s.get("T-5000"); ok {
			t.Fatal("T-5000 found")
		}
	})
	t.Run("ids that share a hash are told apart by their bytes", func(t *testing.T) {
		c := newIDSet()
		c.hash = func(string) uint64 { return 7 } // every id collides
		for i, id := range []string{"a", "b", "ab"} {
			if !c.add(id, int32(i), int32(i+1)) {
				t.Fatalf("%s refused", id)
			}
		}
		if c.add("b", 9, 9) {
			t.Error("b added twice through the chain")
		}
		for i, id := range []string{"a", "b", "ab"} {
			if e, ok := c.get(id); !ok || e.pos != int32(i) {
				t.Errorf("%s = %+v %v, want pos %d", id, e, ok, i)
			}
		}
		if _, ok := c.get("ba"); ok {
			t.Error("ba found")
		}
	})
}
