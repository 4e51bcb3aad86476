package web_test

import (
	"context"
	"strings"
	"testing"

	"evident/store"
	"evident/web"
)

// serve --api-token follows --token's length rule (web.MinTokenLength
// characters, counted as characters, not bytes): a shorter one is refused
// at start with an error naming the flag; empty (no API token) and one of
// exactly the minimum length start.
func TestTheAPITokenIsCheckedAgainstTheMinimumLengthLikeTheScreenToken(t *testing.T) {
	db, err := store.Open(context.Background(), store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		name, token string
		refused     bool
	}{
		{"no API token starts", "", false},
		{"a token one character short is refused", strings.Repeat("a", web.MinTokenLength-1), true},
		{"15 Hangul syllables (45 bytes) are still 15 characters, refused", strings.Repeat("가", web.MinTokenLength-1), true},
		{"a token of exactly the minimum length starts", strings.Repeat("a", web.MinTokenLength), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := web.New(db, web.Options{APIToken: tc.token})
			if tc.refused {
				if err == nil || !strings.Contains(err.Error(), "--api-token is 15 characters") {
					t.Fatalf("err = %v, want it to name --api-token and its 15 characters", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
