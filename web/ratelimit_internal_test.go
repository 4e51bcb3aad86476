package web

import (
	"fmt"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

func TestClientKeys(t *testing.T) {
	for _, tc := range []struct {
		name, remote, want string
	}{
		{"an IPv4 client is its address", "203.0.113.5:40001", "203.0.113.5"},
		{"an IPv6 client is its /64", "[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:443", "2001:db8:1:2::"},
		{"a zoned link-local client is its /64 without the zone", "[fe80::1%eth0]:80", "fe80::"},
		{"an IPv4-mapped IPv6 client is its IPv4 address", "[::ffff:192.0.2.1]:80", "192.0.2.1"},
		{"an address without a port is read as it is", "192.0.2.7", "192.0.2.7"},
		{"an address that does not parse is the one shared key", "pipe", "invalid IP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			if got := clientKey(r).String(); got != tc.want {
				t.Fatalf("clientKey(%q) = %s, want %s", tc.remote, got, tc.want)
			}
		})
	}
}

// A flood of addresses costs a fixed table: 10,000 addresses failing once
// each leave MaxAuthClients entries, the newest; the oldest is forgotten
// (its next wrong token starts a fresh count) and nothing is trusted.
func TestTheWrongTokenTableIsBoundedWhateverTheAddresses(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	l := newAuthLimiter(func() time.Time { return now }, 0, 1_000_000) // a ceiling the flood does not reach
	addr := func(i int) netip.Addr {
		return netip.MustParseAddr(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	for i := range 10_000 {
		if ok, refused := l.try(addr(i), func() bool { return false }); ok || refused != nil {
			t.Fatalf("address %d: ok %v, refused %+v", i, ok, refused)
		}
	}
	if n := l.clients.len(); n != MaxAuthClients {
		t.Fatalf("%d addresses kept, want %d", n, MaxAuthClients)
	}
	if n := l.trusted.len(); n != 0 {
		t.Fatalf("%d trusted addresses after wrong tokens only", n)
	}
	if _, ok := l.clients.get(addr(0)); ok {
		t.Error("the oldest address is still kept")
	}
	if _, ok := l.clients.get(addr(9_999)); !ok {
		t.Error("the newest address is not kept")
	}
	for i := range 2 * MaxTrustedClients {
		l.try(addr(20_000+i), func() bool { return true })
	}
	if n := l.trusted.len(); n != MaxTrustedClients {
		t.Fatalf("%d trusted addresses kept, want %d", n, MaxTrustedClients)
	}
}
