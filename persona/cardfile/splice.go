package cardfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// span is the byte range [start, end) of one JSON value in a document.
type span struct{ start, end int }

// members walks the JSON object raw[obj.start:obj.end] and returns the span
// of each member's value (for a key written twice, the last one, as
// encoding/json decodes it) and how many members the object has.
func members(raw []byte, obj span) (map[string]span, int, error) {
	ms, n, _, err := walkObject(raw, obj)
	return ms, n, err
}

// walkObject is members, also returning where the last member's value ends
// (just after the '{' for an empty object).
func walkObject(raw []byte, obj span) (out map[string]span, n, last int, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw[obj.start:obj.end]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, 0, 0, fmt.Errorf("byte %d: not an object", obj.start)
	}
	out = map[string]span{}
	last = obj.start + int(dec.InputOffset())
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, 0, 0, err
		}
		key, ok := t.(string)
		if !ok {
			return nil, 0, 0, fmt.Errorf("byte %d: object key is %v", obj.start+int(dec.InputOffset()), t)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, 0, 0, err
		}
		last = obj.start + int(dec.InputOffset())
		out[key] = span{last - len(v), last}
		n++
	}
	return out, n, last, nil
}

// setMember returns raw with member key of the object at obj set to the JSON
// value val: the old value's bytes replaced when the key is there, else
// `"key":val` inserted just after the last member's value (just after the
// '{' of an empty object). Every other byte of raw is kept.
func setMember(raw []byte, obj span, key string, val []byte) ([]byte, error) {
	ms, n, last, err := walkObject(raw, obj)
	if err != nil {
		return nil, err
	}
	if sp, ok := ms[key]; ok {
		return splice(raw, sp, val), nil
	}
	k, err := marshal(key)
	if err != nil {
		return nil, err
	}
	ins := make([]byte, 0, len(k)+len(val)+2)
	if n > 0 {
		ins = append(ins, ',')
	}
	ins = append(append(append(ins, k...), ':'), val...)
	return splice(raw, span{last, last}, ins), nil
}

// splice returns a new slice: raw with the bytes of sp replaced by val.
func splice(raw []byte, sp span, val []byte) []byte {
	out := make([]byte, 0, len(raw)-(sp.end-sp.start)+len(val))
	out = append(out, raw[:sp.start]...)
	out = append(out, val...)
	return append(out, raw[sp.end:]...)
}

// whole is the span of the document's top-level value (white space around
// it left out).
func whole(raw []byte) span {
	s := len(raw) - len(bytes.TrimLeft(raw, " \t\r\n"))
	return span{s, len(bytes.TrimRight(raw, " \t\r\n"))}
}

// spliceExtension returns raw with data.extensions[ExtensionKey] set to ext:
// replaced in place when there, inserted into data.extensions when that is
// an object without it, and data.extensions set to {ExtensionKey: ext} when
// it is absent, null or [] (the only value that changes besides ours).
func spliceExtension(raw, ext []byte) ([]byte, error) {
	top, _, err := members(raw, whole(raw))
	if err != nil {
		return nil, err
	}
	data, ok := top["data"]
	if !ok {
		return nil, errors.New(`no "data" member`)
	}
	dm, _, err := members(raw, data)
	if err != nil {
		return nil, err
	}
	if exts, ok := dm["extensions"]; ok && raw[exts.start] == '{' {
		return setMember(raw, exts, ExtensionKey, ext)
	}
	k, err := marshal(ExtensionKey)
	if err != nil {
		return nil, err
	}
	obj := append(append(append(append([]byte{'{'}, k...), ':'), ext...), '}')
	return setMember(raw, data, "extensions", obj)
}

// spliceSpec returns raw with the top-level spec and spec_version set.
func spliceSpec(raw []byte, spec, version string) ([]byte, error) {
	for _, kv := range [][2]string{{"spec", spec}, {"spec_version", version}} {
		v, err := marshal(kv[1])
		if err != nil {
			return nil, err
		}
		if raw, err = setMember(raw, whole(raw), kv[0], v); err != nil {
			return nil, err
		}
	}
	return raw, nil
}
