package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jsonNode is one decoded JSON value with object keys in document order.
type jsonNode struct {
	kind   byte // '{', '[', '"', 'n' (number), 'l' (literal true/false/null)
	text   string
	keys   []string
	values []jsonNode
}

// decodeNode decodes one JSON value from dec, keeping key order.
func decodeNode(dec *json.Decoder) (jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return jsonNode{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := jsonNode{kind: byte(t)}
		for dec.More() {
			if t == '{' {
				kt, err := dec.Token()
				if err != nil {
					return n, err
				}
				n.keys = append(n.keys, kt.(string))
			}
			v, err := decodeNode(dec)
			if err != nil {
				return n, err
			}
			n.values = append(n.values, v)
		}
		if _, err := dec.Token(); err != nil {
			return n, err
		}
		return n, nil
	case string:
		return jsonNode{kind: '"', text: t}, nil
	case json.Number:
		return jsonNode{kind: 'n', text: t.String()}, nil
	case bool:
		return jsonNode{kind: 'l', text: strconv.FormatBool(t)}, nil
	default:
		return jsonNode{kind: 'l', text: "null"}, nil
	}
}

// pythonIndent re-encodes the JSON value raw as Python's
// json.dumps(obj, indent=2) writes it after json.loads (spec arc.md
// "Compatibility facts"): two-space indentation, "," at line ends and ": "
// between key and value, {} and [] for empty containers, strings escaped as
// ensure_ascii does (\uXXXX in lower-case hex, surrogate pairs above
// U+FFFF), integers as written and other numbers as Python's float repr, no
// trailing newline. With sortKeys the keys of every object are sorted by
// code point, as json.dumps(sort_keys=True) — and so Flask's jsonify, which
// baseline1's server answers with — sorts them.
func pythonIndent(raw []byte, sortKeys bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := decodeNode(dec)
	if err != nil {
		return nil, fmt.Errorf("session: metadata JSON: %w", err)
	}
	var b []byte
	b, err = appendPython(b, n, 0, sortKeys)
	return b, err
}

func appendPython(b []byte, n jsonNode, depth int, sortKeys bool) ([]byte, error) {
	var err error
	switch n.kind {
	case '{', '[':
		if len(n.values) == 0 {
			return append(b, n.kind, n.kind+2), nil // {} and [] ('{'+2 == '}', '['+2 == ']')
		}
		order := make([]int, len(n.values))
		for i := range order {
			order[i] = i
		}
		if n.kind == '{' && sortKeys {
			slices.SortStableFunc(order, func(i, j int) int { return compareCodePoints(n.keys[i], n.keys[j]) })
		}
		b = append(b, n.kind)
		for k, i := range order {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, '\n')
			b = append(b, strings.Repeat("  ", depth+1)...)
			if n.kind == '{' {
				b = appendPythonString(b, n.keys[i])
				b = append(b, ": "...)
			}
			if b, err = appendPython(b, n.values[i], depth+1, sortKeys); err != nil {
				return nil, err
			}
		}
		b = append(b, '\n')
		b = append(b, strings.Repeat("  ", depth)...)
		return append(b, n.kind+2), nil
	case '"':
		return appendPythonString(b, n.text), nil
	case 'n':
		return appendPythonNumber(b, n.text)
	default:
		return append(b, n.text...), nil
	}
}

// compareCodePoints orders strings by Unicode code point, as Python sorts
// str keys (UTF-8 byte order is the same order).
func compareCodePoints(a, b string) int { return strings.Compare(a, b) }

// appendPythonString appends s as json.dumps(ensure_ascii=True) writes it.
func appendPythonString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, `\"`...)
		case r == '\\':
			b = append(b, `\\`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\b':
			b = append(b, `\b`...)
		case r == '\f':
			b = append(b, `\f`...)
		case r >= 0x20 && r < 0x7f:
			b = append(b, byte(r))
		default:
			if r == utf8.RuneError {
				r = 0xFFFD
			}
			units := []rune{r}
			if r > 0xFFFF {
				r -= 0x10000
				units = []rune{0xD800 + (r >> 10), 0xDC00 + (r & 0x3FF)}
			}
			for _, u := range units {
				b = append(b, '\\', 'u', hex[u>>12&0xF], hex[u>>8&0xF], hex[u>>4&0xF], hex[u&0xF])
			}
		}
	}
	return append(b, '"')
}

// appendPythonNumber appends a JSON number literal as Python re-dumps it: an
// integer literal as the integer, anything with a fraction or exponent as
// float repr (1.0, 1e+16, 1e-05, Infinity on overflow).
func appendPythonNumber(b []byte, lit string) ([]byte, error) {
	if !strings.ContainsAny(lit, ".eE") {
		if lit == "-0" {
			return append(b, '0'), nil
		}
		return append(b, lit...), nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return nil, fmt.Errorf("session: number %s: %w", lit, err)
	}
	switch {
	case math.IsInf(f, 1):
		return append(b, "Infinity"...), nil
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...), nil
	}
	// Python's float repr: the shortest round-tripping digits, positional
	// when the decimal exponent is in -4..15, else d.ddde±XX.
	e := strconv.FormatFloat(f, 'e', -1, 64) // e.g. -1.234e+05
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return append(b, s...), nil
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	return fmt.Appendf(b, "%se%s%02d", mant, sign, exp), nil
}
