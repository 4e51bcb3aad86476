package cardfile

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// The two card keywords, in order of preference when reading.
const (
	keyCCv3  = "ccv3"
	keyChara = "chara"
)

// chunk is one PNG chunk: its type, data, and the byte range [start, end) of
// the whole chunk (length, type, data, CRC) in the file.
type chunk struct {
	typ        string
	data       []byte
	start, end int
	crc        uint32
}

// walk splits a PNG (signature already checked) into its chunks up to and
// including IEND, and returns the offset just after IEND.
func walk(b []byte) ([]chunk, int, error) {
	off := len(pngSignature)
	var cs []chunk
	for {
		if len(b)-off < 12 {
			return nil, 0, fmt.Errorf("truncated PNG: no IEND chunk (chunk at byte %d cut off; the file has %d bytes)", off, len(b))
		}
		n := binary.BigEndian.Uint32(b[off:])
		if n > 1<<31-1 || uint64(n) > uint64(len(b)-off-12) {
			return nil, 0, fmt.Errorf("truncated PNG: chunk %q at byte %d says %d data bytes, past the end of the file (%d bytes)",
				printable(b[off+4:off+8]), off, n, len(b))
		}
		c := chunk{
			typ:   string(b[off+4 : off+8]),
			data:  b[off+8 : off+8+int(n)],
			start: off,
			end:   off + 12 + int(n),
		}
		c.crc = binary.BigEndian.Uint32(b[c.end-4:])
		cs = append(cs, c)
		off = c.end
		if c.typ == "IEND" {
			return cs, off, nil
		}
	}
}

// printable returns s with bytes outside printable ASCII as '?'.
func printable(s []byte) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, string(s))
}

// cardKeyword reports whether c is a tEXt, zTXt or iTXt chunk whose keyword is
// a card keyword (case-insensitive), returning it in lower case and as written.
func cardKeyword(c chunk) (canon, written string, ok bool) {
	switch c.typ {
	case "tEXt", "zTXt", "iTXt":
	default:
		return "", "", false
	}
	i := bytes.IndexByte(c.data, 0)
	if i < 0 {
		return "", "", false
	}
	written = string(c.data[:i])
	canon = strings.ToLower(written)
	if canon != keyCCv3 && canon != keyChara {
		return "", "", false
	}
	return canon, written, true
}

// textOf returns the text of a card text chunk, inflated when compressed.
func textOf(c chunk) ([]byte, error) {
	rest := c.data[bytes.IndexByte(c.data, 0)+1:]
	switch c.typ {
	case "zTXt":
		if len(rest) == 0 || rest[0] != 0 {
			return nil, errors.New("zTXt chunk without compression method 0")
		}
		return inflate(rest[1:])
	case "iTXt":
		if len(rest) < 2 {
			return nil, errors.New("iTXt chunk cut short before its compression flag")
		}
		flag, method := rest[0], rest[1]
		rest = rest[2:]
		for range 2 { // language tag, translated keyword
			i := bytes.IndexByte(rest, 0)
			if i < 0 {
				return nil, errors.New("iTXt chunk without the NUL after its language tag or translated keyword")
			}
			rest = rest[i+1:]
		}
		switch {
		case flag == 0:
			return rest, nil
		case flag == 1 && method == 0:
			return inflate(rest)
		}
		return nil, fmt.Errorf("iTXt chunk with compression flag %d, method %d", flag, method)
	}
	return rest, nil
}

// inflate decompresses zlib data, at most maxExpand bytes.
func inflate(b []byte) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("zlib: %v", err)
	}
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, maxExpand+1))
	if err != nil {
		return nil, fmt.Errorf("zlib: %v", err)
	}
	if len(out) > maxExpand {
		return nil, fmt.Errorf("zlib: the text expands past %d MiB", maxExpand>>20)
	}
	return out, nil
}

// decodePayload turns a card chunk's text into JSON bytes: base64 (padded or
// not; line breaks ignored), or the text itself when it starts with '{'.
func decodePayload(text []byte) ([]byte, error) {
	t := bytes.Trim(text, " \t\r\n")
	if len(t) > 0 && t[0] == '{' {
		return t, nil
	}
	if len(t) == 0 {
		return nil, errors.New("empty chunk text (want base64 of the card JSON)")
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(t)))
	n, err := base64.StdEncoding.Decode(out, t)
	if err == nil {
		return out[:n], nil
	}
	if n, err2 := base64.RawStdEncoding.Decode(out, t); err2 == nil {
		return out[:n], nil
	}
	var ce base64.CorruptInputError
	if errors.As(err, &ce) {
		return nil, fmt.Errorf("base64 at byte %d of the chunk text: %v", int64(ce)+int64(len(text)-len(bytes.TrimLeft(text, " \t\r\n"))), err)
	}
	return nil, fmt.Errorf("base64: %v", err)
}

// readPNG reads the card of a PNG: the first "ccv3" text chunk, else the
// first "chara" one.
func readPNG(name string, b []byte) (*File, error) {
	cs, _, err := walk(b)
	if err != nil {
		return nil, cardError(name, "", ErrMalformed, err.Error())
	}
	var pick *chunk
	var written string
	for _, want := range []string{keyCCv3, keyChara} {
		for i := range cs {
			if canon, w, ok := cardKeyword(cs[i]); ok && canon == want {
				pick, written = &cs[i], w
				break
			}
		}
		if pick != nil {
			break
		}
	}
	if pick == nil {
		return nil, cardError(name, "", ErrNoCard, fmt.Sprintf(`no tEXt, zTXt or iTXt chunk with keyword "ccv3" or "chara" (chunks: %s)`, chunkList(cs)))
	}
	part := fmt.Sprintf("%s chunk %q", pick.typ, written)
	fail := func(detail string) error {
		return cardError(name, part, ErrMalformed, detail)
	}
	if got := crc32.ChecksumIEEE(b[pick.start+4 : pick.end-4]); got != pick.crc {
		return nil, fail(fmt.Sprintf("CRC mismatch (stored %08x, computed %08x): the file is damaged", pick.crc, got))
	}
	text, err := textOf(*pick)
	if err != nil {
		return nil, fail(err.Error())
	}
	js, err := decodePayload(text)
	if err != nil {
		return nil, fail(err.Error())
	}
	f, err := readDoc(name, FormatPNG, written, part, js)
	if err != nil {
		return nil, err
	}
	f.Chunk = pick.typ
	return f, nil
}

// chunkList names the chunk types in order, runs of one type as "IDAT ×3".
func chunkList(cs []chunk) string {
	var parts []string
	for i := 0; i < len(cs); {
		j := i
		for j < len(cs) && cs[j].typ == cs[i].typ {
			j++
		}
		s := printable([]byte(cs[i].typ))
		if j-i > 1 {
			s += fmt.Sprintf(" ×%d", j-i)
		}
		parts = append(parts, s)
		i = j
	}
	return strings.Join(parts, ", ")
}

// PNG returns orig with its card chunks replaced by f's document, every
// other chunk (and any bytes after IEND) kept as it was. Each card keyword
// the PNG had ("chara", "ccv3", any case, any of tEXt/zTXt/iTXt) gets one tEXt
// chunk with base64 JSON at the place of the first old card chunk: "chara"
// carries the document as chara_card_v2 2.0 and "ccv3" as chara_card_v3 3.0
// (relabelled only when the document's spec differs). A PNG without a card
// chunk gets "ccv3" for a V3 document or "chara" for a V2 one, just before
// IEND. The error is an *[Error]: orig is not a well-formed PNG, or f is nil.
func PNG(orig []byte, f *File) ([]byte, error) {
	if f == nil || f.doc == nil {
		return nil, cardError("", "", ErrNoCard, "no card to write (nil File)")
	}
	if !bytes.HasPrefix(orig, pngSignature) {
		return nil, cardError("", "", ErrFormat, fmt.Sprintf("not a PNG: starts with %q", head(orig)))
	}
	cs, end, err := walk(orig)
	if err != nil {
		return nil, cardError("", "", ErrMalformed, err.Error())
	}
	have := map[string]bool{}
	at := -1
	for i, c := range cs {
		if canon, _, ok := cardKeyword(c); ok {
			have[canon] = true
			if at < 0 {
				at = i
			}
		}
	}
	if at < 0 {
		at = len(cs) - 1 // IEND
		if f.Spec == SpecV3 {
			have[keyCCv3] = true
		} else {
			have[keyChara] = true
		}
	}
	var cards bytes.Buffer
	for _, kw := range []string{keyChara, keyCCv3} {
		if !have[kw] {
			continue
		}
		js, err := f.jsonAs(kw)
		if err != nil {
			return nil, cardError(f.Name, "", ErrMalformed, fmt.Sprintf("encoding the card: %v", err))
		}
		data := make([]byte, 0, len(kw)+1+base64.StdEncoding.EncodedLen(len(js)))
		data = append(append(data, kw...), 0)
		data = base64.StdEncoding.AppendEncode(data, js)
		if len(data) > 1<<31-1 {
			return nil, cardError(f.Name, "", ErrMalformed, "card too large for a PNG chunk")
		}
		writeChunk(&cards, "tEXt", data)
	}
	var out bytes.Buffer
	out.Grow(len(orig) + cards.Len())
	out.Write(pngSignature)
	for i, c := range cs {
		if i == at {
			out.Write(cards.Bytes())
		}
		if _, _, ok := cardKeyword(c); ok {
			continue
		}
		out.Write(orig[c.start:c.end])
	}
	out.Write(orig[end:])
	return out.Bytes(), nil
}

// writeChunk appends one PNG chunk (length, type, data, CRC) to w.
func writeChunk(w *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	w.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	w.WriteString(typ)
	w.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	w.Write(n[:])
}

// jsonAs returns the document's JSON as the chunk kw carries it: [File.JSON]
// with spec and spec_version spliced in when they differ (see docAs).
func (f *File) jsonAs(kw string) ([]byte, error) {
	spec, version := SpecV2, "2.0"
	if kw == keyCCv3 {
		spec, version = SpecV3, "3.0"
	}
	if f.raw == nil {
		return marshal(f.docAs(kw))
	}
	js, err := f.JSON()
	if err != nil || f.Spec == spec {
		return js, err
	}
	if out, err := spliceSpec(js, spec, version); err == nil {
		return out, nil
	}
	return marshal(f.docAs(kw))
}

// docAs returns the document as the chunk kw carries it: relabelled to
// chara_card_v2 2.0 for "chara" and chara_card_v3 3.0 for "ccv3" when the
// spec differs (a shallow copy; f is not changed).
func (f *File) docAs(kw string) map[string]any {
	spec, version := SpecV2, "2.0"
	if kw == keyCCv3 {
		spec, version = SpecV3, "3.0"
	}
	if f.Spec == spec {
		return f.doc
	}
	d := make(map[string]any, len(f.doc))
	for k, v := range f.doc {
		d[k] = v
	}
	d["spec"], d["spec_version"] = spec, version
	return d
}
