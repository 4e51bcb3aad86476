package main

import (
	"context"
	"strings"
	"testing"
)

// evident serve refuses, before it opens a store, a weak token off
// loopback (saying what is wanted, never the token) and an upload pace it
// cannot keep.
func TestServeRefusesWeakTokensOffLoopbackAndBadUploadPaces(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"a token of one repeated character off loopback is refused",
			[]string{"--addr", "0.0.0.0:0", "--token", "aaaaaaaaaaaaaaaaaaaa"},
			"--token: want at least 16 characters, at least 8 distinct, no whitespace or control characters to serve off loopback; got 20 characters, 1 distinct"},
		{"a weak API token off loopback is refused, the screen's token being strong",
			[]string{"--addr", "0.0.0.0:0", "--token", "Zq8-vL2x_Rt5nW0p", "--api-token", "api token with spaces"},
			"--api-token: want at least 16 characters, at least 8 distinct, no whitespace or control characters to serve off loopback; got 21 characters, 13 distinct, whitespace or control characters"},
		{"an upload grace under a second is refused",
			[]string{"--addr", "127.0.0.1:0", "--upload-grace", "500ms"}, "--upload-grace is 500ms; it must be at least 1s"},
		{"an upload rate of 0 is refused",
			[]string{"--addr", "127.0.0.1:0", "--upload-min-rate", "0"}, "--upload-min-rate must be positive (KiB/s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := webCLI(ctx, t, append([]string{"serve", "--demo"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v\nwant %q", err, tc.says)
			}
			for i, a := range tc.args {
				if i > 0 && strings.HasSuffix(tc.args[i-1], "token") && strings.Contains(err.Error(), a) {
					t.Errorf("the error prints the token %q", a)
				}
			}
		})
	}
}
