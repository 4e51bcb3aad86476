package cardfile

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
)

// cardEntry is the name of the card document inside a CHARX zip.
const cardEntry = "card.json"

// readCHARX reads the card.json of a CHARX zip. ok is false when b is not a
// zip at all (no end-of-central-directory record), so the caller reports an
// unknown format instead.
func readCHARX(name string, b []byte) (f *File, ok bool, err error) {
	zr, zerr := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if zerr != nil {
		if !bytes.Contains(b, []byte("PK\x05\x06")) {
			return nil, false, nil
		}
		return nil, true, cardError(name, "", ErrMalformed, fmt.Sprintf("zip (CHARX): %v", zerr))
	}
	var root *zip.File
	var nested []*zip.File
	for _, zf := range zr.File {
		p := strings.TrimLeft(strings.ReplaceAll(zf.Name, `\`, "/"), "/")
		p = strings.TrimPrefix(path.Clean("/"+p), "/")
		if zf.FileInfo().IsDir() || !strings.EqualFold(path.Base(p), cardEntry) {
			continue
		}
		if p == path.Base(p) {
			if root == nil {
				root = zf
			}
			continue
		}
		nested = append(nested, zf)
	}
	pick := root
	if pick == nil {
		switch len(nested) {
		case 0:
			return nil, true, cardError(name, "", ErrNoCard, fmt.Sprintf("zip (CHARX) without %s (%d entries)", cardEntry, len(zr.File)))
		case 1:
			pick = nested[0]
		default:
			names := make([]string, len(nested))
			for i, zf := range nested {
				names[i] = fmt.Sprintf("%q", zf.Name)
			}
			return nil, true, cardError(name, "", ErrMalformed, fmt.Sprintf("zip (CHARX) with no root %s and several in folders: %s", cardEntry, strings.Join(names, ", ")))
		}
	}
	part := fmt.Sprintf("zip entry %q", pick.Name)
	js, rerr := readEntry(pick)
	if rerr != nil {
		return nil, true, cardError(name, part, ErrMalformed, rerr.Error())
	}
	f, err = readDoc(name, FormatCHARX, pick.Name, part, js)
	if err != nil {
		return nil, true, err
	}
	f.Prefix = zipPrefix(b)
	readAssets(f, zr, path.Dir(strings.ReplaceAll(pick.Name, `\`, "/")))
	return f, true, nil
}

// readEntry reads one zip entry, at most maxExpand bytes.
func readEntry(zf *zip.File) ([]byte, error) {
	b, err := readEntryCapped(zf, maxExpand)
	if err != nil {
		return nil, err
	}
	if len(b) > maxExpand {
		return nil, fmt.Errorf("entry expands past %d MiB", maxExpand>>20)
	}
	return b, nil
}

// readEntryCapped reads at most limit+1 bytes of one zip entry, so a result
// longer than limit means the entry is larger.
func readEntryCapped(zf *zip.File, limit int64) ([]byte, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, limit+1))
}
