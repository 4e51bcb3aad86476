package web

import (
	"fmt"

	"evident/store"
)

// DefaultLiveCacheMiB is evident serve's --live-cache default, in MiB:
// store.DefaultLiveCache (64 MiB).
const DefaultLiveCacheMiB = store.DefaultLiveCache >> 20

// MaxLiveCacheMiB is the largest --live-cache, in MiB (1 TiB): anything
// larger is surely a typo, and its bytes would overflow an int64.
const MaxLiveCacheMiB = 1 << 20

// SetLiveCache applies evident serve's --live-cache: the cap, in MiB, of
// the live API's session state cache (store.DB.SetLiveCache: the decoded
// recall state of recently judged sessions kept in memory between requests,
// counted as its stored JSON). 0 keeps no state in memory: every request
// reads and decodes its sessions' stored state — the same records, more CPU
// a turn. A negative cap or one over MaxLiveCacheMiB is refused with an
// error naming the flag, and db is left as it was.
func SetLiveCache(db *store.DB, mib int64) error {
	switch {
	case mib < 0:
		return fmt.Errorf("--live-cache is %d: give the live state cache's size in MiB, 0 to keep no session state in memory (default %d)", mib, DefaultLiveCacheMiB)
	case mib > MaxLiveCacheMiB:
		return fmt.Errorf("--live-cache is %d MiB: at most %d (1 TiB)", mib, MaxLiveCacheMiB)
	}
	db.SetLiveCache(mib << 20)
	return nil
}
