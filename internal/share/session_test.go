package share

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestSessions: epochs, the final epoch, and the session limit with idle
// eviction.
func TestSessions(t *testing.T) {
	var evicted []SessionKey
	c := NewSessions(2, 1000, func(k SessionKey, _ *Session) { evicted = append(evicted, k) })
	a, b, d := SessionKey{"g", "a"}, SessionKey{"g", "b"}, SessionKey{"g", "d"}
	use := func(k SessionKey, epoch int32, nowMs int64) int16 {
		return c.Use(k, epoch, nowMs, func(*Session) {})
	}
	if code := use(a, 1, 0); code != kerr.ShareSessionNotFound.Code {
		t.Fatalf("no session: %d", code)
	}
	if use(a, 0, 0) != 0 || use(a, 1, 10) != 0 || use(a, 2, 20) != 0 {
		t.Fatal("epochs 0, 1, 2")
	}
	if code := use(a, 2, 30); code != kerr.InvalidShareSessionEpoch.Code {
		t.Fatalf("repeated epoch: %d", code)
	}
	if use(b, 0, 500) != 0 {
		t.Fatal("second session")
	}
	if code := use(d, 0, 900); code != kerr.ShareSessionLimitReached.Code {
		t.Fatalf("limit: %d", code)
	}
	// a is idle for more than a second at 1100: evicted to make room.
	if use(d, 0, 1100) != 0 || len(evicted) != 1 || evicted[0] != a {
		t.Fatalf("eviction: %v", evicted)
	}
	if use(b, -1, 1200) != 0 || c.Len() != 1 {
		t.Fatal("final epoch closes")
	}
	if code := use(b, -1, 1300); code != kerr.ShareSessionNotFound.Code {
		t.Fatalf("closed twice: %d", code)
	}
}
