package worldmodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"slices"

	"go.starlark.net/starlark"
)

// Two independent seeds give a 128-bit key. They are random per process,
// which is why keys are only comparable within one process.
var keySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// maxKeyDepth bounds nesting, which also stops a list that contains itself.
const maxKeyDepth = 200

// maxKeyValues bounds the values one key visits, counting a value shared by
// several containers once per container, so that a state of a few hundred
// tuples nested to share each other ((t, t) forty times) is an error and
// not 2^40 steps.
const maxKeyValues = 1 << 24

// ValueKey returns the StateKey of a Starlark value: a hash of its canonical
// encoding, in which dict entries and set elements are sorted so that two
// equal dicts built in different orders have one key. Tuples and lists
// differ, and so do 1 and 1.0 (a search merely revisits such a state).
// Supported: None, bool, int, float, string, bytes, tuple, list, dict, set
// and grid; anything else (functions, say) is an error.
func ValueKey(v starlark.Value) (StateKey, error) {
	budget := maxKeyValues
	buf, err := appendCanon(nil, v, 0, &budget)
	if err != nil {
		return StateKey{}, err
	}
	return StateKey{maphash.Bytes(keySeeds[0], buf), maphash.Bytes(keySeeds[1], buf)}, nil
}

func appendLen(b []byte, tag byte, n int) []byte {
	b = append(b, tag)
	return binary.AppendUvarint(b, uint64(n))
}

func appendCanon(b []byte, v starlark.Value, depth int, budget *int) ([]byte, error) {
	if depth > maxKeyDepth {
		return nil, fmt.Errorf("state nested deeper than %d levels (or contains itself)", maxKeyDepth)
	}
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("state too large to key: more than %d values (shared values count once per container)", maxKeyValues)
	}
	switch v := v.(type) {
	case starlark.NoneType:
		return append(b, 'n'), nil
	case starlark.Bool:
		if v {
			return append(b, 'T'), nil
		}
		return append(b, 'F'), nil
	case starlark.Int:
		if i, ok := v.Int64(); ok {
			b = append(b, 'i')
			return binary.AppendVarint(b, i), nil
		}
		t := v.BigInt().Text(16)
		return append(appendLen(b, 'I', len(t)), t...), nil
	case starlark.Float:
		f := float64(v)
		if f == 0 {
			f = 0 // -0 == 0
		}
		b = append(b, 'f')
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f)), nil
	case starlark.String:
		return append(appendLen(b, 's', len(v)), v...), nil
	case starlark.Bytes:
		return append(appendLen(b, 'y', len(v)), v...), nil
	case starlark.Tuple:
		b = appendLen(b, 't', len(v))
		for _, e := range v {
			var err error
			if b, err = appendCanon(b, e, depth+1, budget); err != nil {
				return nil, err
			}
		}
		return b, nil
	case *starlark.List:
		b = appendLen(b, 'l', v.Len())
		for i := 0; i < v.Len(); i++ {
			var err error
			if b, err = appendCanon(b, v.Index(i), depth+1, budget); err != nil {
				return nil, err
			}
		}
		return b, nil
	case *starlark.Dict:
		items := v.Items()
		parts := make([][]byte, len(items))
		for i, kv := range items {
			k, err := appendCanon(nil, kv[0], depth+1, budget)
			if err != nil {
				return nil, err
			}
			// Length-prefix the key so that key‖value splits one way only.
			p := appendLen(nil, 'k', len(k))
			p = append(p, k...)
			if p, err = appendCanon(p, kv[1], depth+1, budget); err != nil {
				return nil, err
			}
			parts[i] = p
		}
		return appendSorted(appendLen(b, 'd', len(parts)), parts), nil
	case *starlark.Set:
		parts := make([][]byte, 0, v.Len())
		it := v.Iterate()
		defer it.Done()
		var e starlark.Value
		for it.Next(&e) {
			p, err := appendCanon(nil, e, depth+1, budget)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		}
		return appendSorted(appendLen(b, 'S', len(parts)), parts), nil
	case *Grid:
		b = append(b, 'g')
		b = binary.AppendUvarint(b, uint64(v.g.Width()))
		b = binary.AppendUvarint(b, uint64(v.g.Height()))
		return append(b, v.g.Cells()...), nil
	}
	return nil, fmt.Errorf("a %s has no value key (states must hold only data: None, bool, int, float, string, bytes, tuple, list, dict, set, grid)", v.Type())
}

// appendSorted appends parts in byte order, each length-prefixed.
func appendSorted(b []byte, parts [][]byte) []byte {
	slices.SortFunc(parts, bytes.Compare)
	for _, p := range parts {
		b = append(appendLen(b, '.', len(p)), p...)
	}
	return b
}
