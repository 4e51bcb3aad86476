// Package datauri reads base64 data URIs (RFC 2397, "data:image/png;base64,…"),
// the one way the module carries an image inline: in a model message
// (evident/llm), in a CRYSTAL item's "image" field (evident/crystal/run, the
// screen through evident/crystal/report).
//
// It must not import anything of the module; stdlib only, no I/O.
//
// # Decisions where RFC 2397 is silent or lenient
//
//   - Only base64 data URIs are read; percent-encoded ones are refused, as
//     no image source of the module writes them.
//   - The "data:" scheme and the ";base64" parameter match case-insensitively;
//     the media type is lower-cased; other parameters (";charset=…") are
//     skipped. An empty media type is refused (RFC 2397 would default it to
//     text/plain, which is never an image).
//   - Whitespace (space, tab, CR, LF) inside the payload is dropped (data
//     URIs pasted from files are often wrapped); missing "=" padding is
//     accepted.
package datauri

import (
	"encoding/base64"
	"errors"
	"strings"
)

// Errors of Split and Decode.
var (
	// ErrNotDataURI: the text does not start with "data:" or has no ",".
	ErrNotDataURI = errors.New("not a data URI")
	// ErrNotBase64: a data URI without the ";base64" parameter.
	ErrNotBase64 = errors.New("data URI is not base64")
	// ErrNoMediaType: a data URI with an empty media type.
	ErrNoMediaType = errors.New("data URI has no media type")
	// ErrPayload: the payload is not base64.
	ErrPayload = errors.New("malformed base64 in data URI")
)

// Is says whether s starts with the data URI scheme ("data:", any case,
// leading spaces ignored).
func Is(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return len(s) >= 5 && strings.EqualFold(s[:5], "data:")
}

// Split returns the lower-cased media type and the base64 payload (whitespace
// removed, not decoded) of a base64 data URI. Errors: ErrNotDataURI,
// ErrNotBase64, ErrNoMediaType.
func Split(uri string) (mediaType, payload string, err error) {
	uri = strings.TrimSpace(uri)
	head, payload, ok := strings.Cut(uri, ",")
	if !ok || !Is(head) {
		return "", "", ErrNotDataURI
	}
	params := strings.Split(head[5:], ";")
	mediaType = strings.ToLower(strings.TrimSpace(params[0]))
	b64 := false
	for _, p := range params[1:] {
		if strings.EqualFold(strings.TrimSpace(p), "base64") {
			b64 = true
		}
	}
	switch {
	case !b64:
		return "", "", ErrNotBase64
	case mediaType == "":
		return "", "", ErrNoMediaType
	}
	payload = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, payload)
	return mediaType, payload, nil
}

// Decode returns the media type and the decoded bytes of a base64 data URI
// (standard alphabet, padding optional). Errors: Split's, or ErrPayload
// wrapping the decoder's error.
func Decode(uri string) (mediaType string, data []byte, err error) {
	mediaType, payload, err := Split(uri)
	if err != nil {
		return "", nil, err
	}
	data, err = base64.StdEncoding.DecodeString(payload)
	if err != nil {
		var rawErr error
		if data, rawErr = base64.RawStdEncoding.DecodeString(strings.TrimRight(payload, "=")); rawErr != nil {
			return "", nil, errors.Join(ErrPayload, err)
		}
	}
	return mediaType, data, nil
}
