package persona

import "golang.org/x/text/unicode/norm"

// SameEvidenceValue is the one meaning of "the same evidence value" (spec
// persona.md "Automatic checks", check 9: a value is verbatim the cited
// cell): nil equals nil; strings are equal after NFC normalisation of both
// (all text is NFC before any rule, so a decomposed copy is the same text);
// booleans are equal when equal; numbers (int, int64, float64, as JSON
// decodes them or code builds them) are equal when their float64 values
// are. Values of different kinds are never equal ("1" is not 1).
func SameEvidenceValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && (x == y || norm.NFC.String(x) == norm.NFC.String(y))
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	fa, oka := number(a)
	fb, okb := number(b)
	return oka && okb && fa == fb
}
