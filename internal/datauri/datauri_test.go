package datauri

import (
	"errors"
	"testing"
)

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		name    string
		uri     string
		mt      string
		data    string
		wantErr error
	}{
		{"a PNG data URI decodes to its bytes", "data:image/png;base64,aGk=", "image/png", "hi", nil},
		{"the scheme and base64 parameter match in any case; the media type is lower-cased", "DATA:Image/PNG;BASE64,aGk=", "image/png", "hi", nil},
		{"other parameters are skipped", "data:image/svg+xml;charset=utf-8;base64,aGk=", "image/svg+xml", "hi", nil},
		{"whitespace inside the payload is dropped", "data:image/png;base64,a G\nk=", "image/png", "hi", nil},
		{"missing padding is accepted", "data:image/png;base64,aGk", "image/png", "hi", nil},
		{"surrounding spaces are ignored", "  data:image/png;base64,aGk=  ", "image/png", "hi", nil},
		{"a percent-encoded data URI is refused", "data:image/png,hi", "", "", ErrNotBase64},
		{"an empty media type is refused", "data:;base64,aGk=", "", "", ErrNoMediaType},
		{"a path is not a data URI", "images/x.png", "", "", ErrNotDataURI},
		{"a data URI without a comma is not one", "data:image/png;base64", "", "", ErrNotDataURI},
		{"a payload that is not base64 is ErrPayload", "data:image/png;base64,!!!", "", "", ErrPayload},
	} {
		t.Run(c.name, func(t *testing.T) {
			mt, data, err := Decode(c.uri)
			if !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
				t.Fatalf("Decode(%q) error %v, want %v", c.uri, err, c.wantErr)
			}
			if mt != c.mt || string(data) != c.data {
				t.Errorf("Decode(%q) = %q, %q; want %q, %q", c.uri, mt, data, c.mt, c.data)
			}
		})
	}
}

func TestSplitKeepsThePayloadEncoded(t *testing.T) {
	mt, payload, err := Split("data:image/jpeg;base64,/9j/ 4AAQ")
	if err != nil || mt != "image/jpeg" || payload != "/9j/4AAQ" {
		t.Errorf("Split = %q, %q, %v; want image/jpeg, /9j/4AAQ", mt, payload, err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"data:image/png;base64,aGk=", "data:,", "data:;base64,", "DATA:a/b;BASE64,====", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mt, data, err := Decode(s)
		if err != nil && (mt != "" || data != nil) {
			t.Errorf("Decode(%q) returned %q, %d bytes with error %v", s, mt, len(data), err)
		}
		if err == nil && mt == "" {
			t.Errorf("Decode(%q) succeeded without a media type", s)
		}
	})
}
