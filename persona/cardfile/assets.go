package cardfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// maxAssets caps what all the assets of one CHARX may expand to together;
// each one is also capped at maxExpand.
const maxAssets = 128 << 20

// Asset is one element of data.assets (Character Card V3 SPEC_V3.md
// "assets"), and for a CHARX its bytes.
type Asset struct {
	// Index is the element's position in data.assets.
	Index int
	// Type, URI, Name and Ext are the element's fields as written ("" when
	// absent or not a string; such a field is also a [Fault]).
	Type, URI, Name, Ext string
	// Scheme is the URI's scheme in lower case: "embeded" (the spec's
	// spelling), "embedded" (the common misspelling, read the same),
	// "ccdefault", "__asset" (a PNG chunk asset), "https", "http",
	// "data", or what else the URI has; "" for a URI without one.
	Scheme string
	// Path is, for an embeded:// or embedded:// URI, the zip entry the
	// asset was read from (CHARX), else the path the URI names.
	Path string
	// Data is the asset's bytes when it was read from a CHARX; nil
	// otherwise. Only embedded assets are read; URLs are never fetched.
	Data []byte
	// Problem says why an embedded asset was not read: the path escapes
	// the archive ("refused: …"), no such entry, the entry is too large or
	// broken, or the card is not a CHARX. "" when read or not embedded.
	Problem string
}

// Assets returns data.assets as read: every element that is an object, in
// order, with Data filled for a CHARX's embedded assets (see [Asset]). A
// card without data.assets has none (the spec's default icon is not
// listed). The slice is f's own; do not change it.
func (f *File) Assets() []Asset { return f.assets }

// assetsOf lists data.assets without reading anything.
func assetsOf(data map[string]any) []Asset {
	list, _ := data["assets"].([]any)
	var out []Asset
	for i, x := range list {
		o, ok := x.(map[string]any)
		if !ok {
			continue
		}
		a := Asset{Index: i}
		a.Type, _ = o["type"].(string)
		a.URI, _ = o["uri"].(string)
		a.Name, _ = o["name"].(string)
		a.Ext, _ = o["ext"].(string)
		if scheme, rest, ok := strings.Cut(a.URI, ":"); ok && scheme != "" && !strings.ContainsAny(scheme, "/\\") {
			a.Scheme = strings.ToLower(scheme)
			if a.Scheme == "embeded" || a.Scheme == "embedded" {
				a.Path = strings.TrimPrefix(rest, "//")
				a.Problem = "not read: the card is not a CHARX"
			}
		}
		out = append(out, a)
	}
	return out
}

// unsafePath says why an embedded asset path may not be looked up in the
// archive ("" when it may): it must be relative, '/'-separated, and never
// climb out with "..".
func unsafePath(p string) string {
	switch {
	case p == "":
		return "empty path"
	case strings.ContainsRune(p, 0):
		return "NUL in the path"
	case strings.Contains(p, `\`):
		return "backslash in the path (the spec separates by '/')"
	case strings.HasPrefix(p, "/"):
		return "absolute path"
	case len(p) >= 2 && p[1] == ':' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z'):
		return "drive-letter path"
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "the path escapes the archive (..)"
		}
	}
	return ""
}

// readAssets fills Data (or Problem) of every embedded asset of f from the
// zip: the path is looked up relative to the folder of card.json, then from
// the root, exactly (case-sensitive, as the spec says), then percent-decoded
// the same way. Each entry is capped at maxExpand, all of them at
// maxAssets.
func readAssets(f *File, zr *zip.Reader, cardDir string) {
	entries := map[string]*zip.File{}
	for _, zf := range zr.File {
		n := strings.ReplaceAll(zf.Name, `\`, "/")
		if _, ok := entries[n]; !ok && !zf.FileInfo().IsDir() {
			entries[n] = zf
		}
	}
	lookup := func(p string) *zip.File {
		if cardDir != "" && cardDir != "." {
			if zf := entries[cardDir+"/"+p]; zf != nil {
				return zf
			}
		}
		return entries[p]
	}
	var total int64
	for i := range f.assets {
		a := &f.assets[i]
		if a.Scheme != "embeded" && a.Scheme != "embedded" {
			continue
		}
		p := a.Path
		if why := unsafePath(p); why != "" {
			a.Problem = fmt.Sprintf("refused: %s: %q", why, p)
			continue
		}
		zf := lookup(strings.TrimPrefix(p, "./"))
		if zf == nil {
			if u, err := url.PathUnescape(p); err == nil && u != p {
				if why := unsafePath(u); why != "" {
					a.Problem = fmt.Sprintf("refused: %s: %q (percent-decoded from %q)", why, u, p)
					continue
				}
				zf = lookup(strings.TrimPrefix(u, "./"))
			}
		}
		if zf == nil {
			a.Problem = fmt.Sprintf("no zip entry %q", path.Clean(p))
			continue
		}
		a.Path = zf.Name
		left := int64(maxAssets) - total
		if zf.UncompressedSize64 > maxExpand || int64(zf.UncompressedSize64) > left {
			a.Problem = tooLarge(zf.UncompressedSize64 > maxExpand)
			continue
		}
		b, err := readEntryCapped(zf, min(left, maxExpand))
		if err != nil {
			a.Problem = fmt.Sprintf("zip entry %q: %v", zf.Name, err)
			continue
		}
		if int64(len(b)) > min(left, maxExpand) {
			a.Problem = tooLarge(int64(len(b)) > maxExpand)
			continue
		}
		a.Data, a.Problem = b, ""
		total += int64(len(b))
	}
}

func tooLarge(entry bool) string {
	if entry {
		return fmt.Sprintf("not read: the entry expands past %d MiB", maxExpand>>20)
	}
	return fmt.Sprintf("not read: the card's assets together expand past %d MiB", maxAssets>>20)
}

// zipPrefix returns how many bytes come before the zip in b: where its
// first local file header is. That is the base offset archive/zip finds
// (the end of central directory record's position less the directory's
// size and offset; non-zero when a stub was glued in front without fixing
// the offsets) plus the smallest local header offset the central directory
// names (non-zero when the offsets were fixed, as zip -A and
// zip.Writer.SetOffset do). When the directory cannot be walked (ZIP64),
// it is the position of the first local file header signature.
func zipPrefix(b []byte) int64 {
	le16 := func(i int) int { return int(binary.LittleEndian.Uint16(b[i:])) }
	le32 := func(i int) int64 { return int64(binary.LittleEndian.Uint32(b[i:])) }
	fallback := max(int64(bytes.Index(b, []byte("PK\x03\x04"))), 0)
	sig := []byte("PK\x05\x06")
	for i := bytes.LastIndex(b, sig); i >= 0; i = bytes.LastIndex(b[:i], sig) {
		if len(b)-i < 22 || i+22+le16(i+20) > len(b) {
			continue
		}
		size, off := le32(i+12), le32(i+16)
		if size == 0xFFFFFFFF || off == 0xFFFFFFFF || size > int64(i) {
			return fallback
		}
		base := int64(i) - size - off
		if base < 0 {
			return fallback
		}
		first := int64(-1)
		for p := i - int(size); p+46 <= i && string(b[p:p+4]) == "PK\x01\x02"; p += 46 + le16(p+28) + le16(p+30) + le16(p+32) {
			if lo := le32(p + 42); first < 0 || lo < first {
				first = lo
			}
		}
		if first < 0 || first == 0xFFFFFFFF || base+first+4 > int64(len(b)) || string(b[base+first:base+first+4]) != "PK\x03\x04" {
			return fallback
		}
		return base + first
	}
	return fallback
}
