package review_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"evident/persona/review"
)

func TestSample(t *testing.T) {
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = fmt.Sprintf("T-%03d", i)
	}
	picked := func(run int64, ids []string) []string {
		var out []string
		for _, p := range review.Sample(run, ids, 20) {
			out = append(out, ids[p])
		}
		return out
	}
	t.Run("the same run and ids give the same 20, in input order", func(t *testing.T) {
		a, b := picked(7, ids), picked(7, ids)
		if len(a) != 20 || !reflect.DeepEqual(a, b) {
			t.Fatalf("%v\n%v", a, b)
		}
		pos := review.Sample(7, ids, 20)
		if !slices.IsSorted(pos) {
			t.Errorf("positions %v not ascending", pos)
		}
	})
	t.Run("the sample does not depend on the order of the ids", func(t *testing.T) {
		rev := slices.Clone(ids)
		slices.Reverse(rev)
		a, b := picked(7, ids), picked(7, rev)
		slices.Sort(a)
		slices.Sort(b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%v\n%v", a, b)
		}
	})
	t.Run("another run id draws another sample", func(t *testing.T) {
		if reflect.DeepEqual(picked(7, ids), picked(8, ids)) {
			t.Error("runs 7 and 8 drew the same sample")
		}
	})
	t.Run("fewer ids than the sample size are all taken", func(t *testing.T) {
		if got := review.Sample(1, ids[:5], 20); !reflect.DeepEqual(got, []int{0, 1, 2, 3, 4}) {
			t.Errorf("%v", got)
		}
		if got := review.Sample(1, nil, 20); got != nil {
			t.Errorf("%v", got)
		}
	})
	t.Run("the rank is sha256 of run id, colon, id", func(t *testing.T) {
		got := review.Sample(1, []string{"A", "B", "C"}, 2)
		want := sampleBySHA(1, []string{"A", "B", "C"}, 2)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v, want %v", got, want)
		}
	})
}

// sampleBySHA is the documented rule written out: rank by the hex sha256 of
// "{run}:{id}", keep the n smallest, return their positions ascending.
func sampleBySHA(run int64, ids []string, n int) []int {
	type r struct {
		pos int
		hex string
	}
	var all []r
	for i, id := range ids {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%d:%s", run, id)))
		all = append(all, r{i, hex.EncodeToString(sum[:])})
	}
	slices.SortFunc(all, func(a, b r) int {
		if a.hex < b.hex {
			return -1
		}
		return 1
	})
	var out []int
	for _, x := range all[:n] {
		out = append(out, x.pos)
	}
	slices.Sort(out)
	return out
}
