package cardfile

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// cardsDir is where the real user files live, relative to this package.
const cardsDir = "../../../shared/data/cards"

// realCard returns the bytes of one real card file, skipping the test when
// the shared data folder is absent (a fresh clone has no ../shared).
func realCard(t testing.TB, name string) []byte {
	t.Helper()
	if _, err := os.Stat(cardsDir); err != nil {
		t.Skipf("real cards folder %s is missing (a fresh clone has no ../shared; CI has it): %v", cardsDir, err)
	}
	b, err := os.ReadFile(filepath.Join(cardsDir, name))
	if err != nil {
		t.Fatalf("reading real card: %v", err)
	}
	return b
}

// testChunk is one PNG chunk for pngOf.
type testChunk struct {
	typ  string
	data []byte
}

// pngOf builds a 1×1 grey PNG: signature, IHDR, the given chunks, IDAT, IEND.
func pngOf(cs ...testChunk) []byte {
	var buf bytes.Buffer
	buf.WriteString("\x89PNG\r\n\x1a\n")
	put := func(c testChunk) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(c.data)))
		buf.Write(n[:])
		buf.WriteString(c.typ)
		buf.Write(c.data)
		binary.BigEndian.PutUint32(n[:], crc32.ChecksumIEEE(append([]byte(c.typ), c.data...)))
		buf.Write(n[:])
	}
	put(testChunk{"IHDR", []byte{0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0}})
	for _, c := range cs {
		put(c)
	}
	put(testChunk{"IDAT", deflate([]byte{0, 0})})
	put(testChunk{"IEND", nil})
	return buf.Bytes()
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// tEXt returns a tEXt chunk holding base64 of js under keyword kw.
func tEXt(kw, js string) testChunk {
	return testChunk{"tEXt", []byte(kw + "\x00" + base64.StdEncoding.EncodeToString([]byte(js)))}
}

// zTXt returns a zTXt chunk holding compressed base64 of js.
func zTXt(kw, js string) testChunk {
	return testChunk{"zTXt", append([]byte(kw+"\x00\x00"), deflate([]byte(base64.StdEncoding.EncodeToString([]byte(js))))...)}
}

// iTXt returns a compressed iTXt chunk holding base64 of js.
func iTXt(kw, js string) testChunk {
	return testChunk{"iTXt", append([]byte(kw+"\x00\x01\x00ko\x00\x00"), deflate([]byte(base64.StdEncoding.EncodeToString([]byte(js))))...)}
}

// zipOf builds a zip with the given entries (name, content) after prefix.
func zipOf(t testing.TB, prefix string, entries ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString(prefix)
	zw := zip.NewWriter(&buf)
	zw.SetOffset(int64(len(prefix)))
	for _, e := range entries {
		w, err := zw.Create(e[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// v2 and v3 wrap a data object's JSON text into a spec card.
func v2(data string) string {
	return `{"spec":"chara_card_v2","spec_version":"2.0","data":` + data + `}`
}

func v3(data string) string {
	return `{"spec":"chara_card_v3","spec_version":"3.0","data":` + data + `}`
}

// tree decodes JSON into a generic tree with numbers kept as written.
func tree(t testing.TB, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decoding %.60q: %v", b, err)
	}
	return m
}

// withoutOurs returns doc without data.extensions["evident/persona"]; when
// that leaves data.extensions empty it is put back as it was in before
// (absent, null or []), since SetPersona had to create the object.
func withoutOurs(doc, before map[string]any) map[string]any {
	data, _ := doc["data"].(map[string]any)
	exts, ok := data["extensions"].(map[string]any)
	if !ok {
		return doc
	}
	delete(exts, ExtensionKey)
	if len(exts) == 0 {
		bdata, _ := before["data"].(map[string]any)
		if old, had := bdata["extensions"]; had {
			data["extensions"] = old
		} else {
			delete(data, "extensions")
		}
	}
	return doc
}

// pngText returns the raw text of the first tEXt chunk with keyword kw,
// decoded from base64: an independent reader for checks.
func pngText(t testing.TB, b []byte, kw string) ([]byte, bool) {
	t.Helper()
	for off := 8; off+12 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off:]))
		typ, data := string(b[off+4:off+8]), b[off+8:off+8+n]
		off += 12 + n
		if typ != "tEXt" {
			continue
		}
		if k, v, ok := bytes.Cut(data, []byte{0}); ok && string(k) == kw {
			js, err := base64.StdEncoding.DecodeString(string(v))
			if err != nil {
				t.Fatalf("chunk %s: %v", kw, err)
			}
			return js, true
		}
	}
	return nil, false
}

// chunkTypes lists the PNG's chunks as "type" or "type:keyword" for text
// chunks, and the bytes of each non-card chunk.
func chunkTypes(b []byte) (types []string, others [][]byte) {
	for off := 8; off+12 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off:]))
		typ, data := string(b[off+4:off+8]), b[off+8:off+8+n]
		whole := b[off : off+12+n]
		off += 12 + n
		if k, _, ok := bytes.Cut(data, []byte{0}); typ == "tEXt" && ok && (string(k) == "chara" || string(k) == "ccv3") {
			types = append(types, typ+":"+string(k))
			continue
		}
		types = append(types, typ)
		others = append(others, whole)
		if typ == "IEND" {
			break
		}
	}
	return types, others
}
