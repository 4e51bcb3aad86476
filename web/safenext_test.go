package web

import "testing"

func TestSafeNextKeepsRedirectsOnThisSite(t *testing.T) {
	tests := []struct {
		name, next, want string
	}{
		{"a path is kept", "/runs/1", "/runs/1"},
		{"a path with a query is kept", "/runs/1?verdict=%EB%A7%90%ED%88%AC&page=2", "/runs/1?verdict=%EB%A7%90%ED%88%AC&page=2"},
		{"the empty string goes home", "", "/"},
		{"a relative path goes home", "runs/1", "/"},
		{"an absolute URL goes home", "https://evil.example/", "/"},
		{"a scheme-relative URL goes home", "//evil.example", "/"},
		{"a backslash after the slash goes home", "/\\evil.example", "/"},
		{"a backslash later in the path goes home", "/runs\\..\\x", "/"},
		{"a TAB that browsers drop goes home", "/\t/evil.example", "/"},
		{"a newline that browsers drop goes home", "/\n/evil.example", "/"},
		{"a carriage return goes home", "/\r/evil.example", "/"},
		{"a NUL goes home", "/\x00/evil.example", "/"},
		{"DEL goes home", "/\x7f/evil.example", "/"},
		{"an encoded slash that decodes to // goes home", "/%2F/evil.example", "/"},
		{"an encoded backslash goes home", "/%5Cevil.example", "/"},
		{"a javascript URL goes home", "javascript:alert(1)", "/"},
		{"a bad escape goes home", "/%zz", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := safeNext(tt.next); got != tt.want {
				t.Fatalf("safeNext(%q) = %q, want %q", tt.next, got, tt.want)
			}
		})
	}
}
