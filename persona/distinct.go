package persona

// smallDistinct is the list length up to which Distinct compares against the
// earlier elements instead of building a set: for the few names a reply
// usually has, a scan is cheaper than a map, and its cost is bounded by
// smallDistinct² comparisons.
const smallDistinct = 16

// Distinct calls yield(i, list[i]) for the first occurrence of each distinct
// string of list, in list order, and stops early when yield returns false.
//
// It runs in time linear in len(list) (a set once the list is longer than
// smallDistinct), so a hostile row with hundreds of thousands of
// named_entities costs no more than reading it (issue 15: the rules'
// de-duplication was quadratic).
func Distinct(list []string, yield func(i int, s string) bool) {
	if len(list) <= smallDistinct {
	outer:
		for i, s := range list {
			for _, p := range list[:i] {
				if p == s {
					continue outer
				}
			}
			if !yield(i, s) {
				return
			}
		}
		return
	}
	seen := make(map[string]struct{}, len(list))
	for i, s := range list {
		if _, dup := seen[s]; dup {
			continue
		}
		seen[s] = struct{}{}
		if !yield(i, s) {
			return
		}
	}
}
