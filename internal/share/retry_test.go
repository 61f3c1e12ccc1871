package share

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestPersisterRetry: retriable answers are retried with Kafka's
// exponential backoff until one is not retriable, at most five attempts;
// other answers and a stopped wait end it at once.
func TestPersisterRetry(t *testing.T) {
	r := DefaultPersisterRetry()
	middle := func() float64 { return 0.5 } // no jitter
	script := func(codes ...int16) (int16, int, []time.Duration) {
		calls := 0
		var waits []time.Duration
		code := r.Do(func() int16 {
			c := codes[min(calls, len(codes)-1)]
			calls++
			return c
		}, func(d time.Duration) bool { waits = append(waits, d); return true }, middle)
		return code, calls, waits
	}
	loading, notCoordinator := kerr.CoordinatorLoadInProgress.Code, kerr.NotCoordinator.Code

	code, calls, waits := script(loading, kerr.CoordinatorNotAvailable.Code, 0)
	if code != 0 || calls != 3 || !slices.Equal(waits, []time.Duration{2 * time.Second, 4 * time.Second}) {
		t.Fatalf("loading, then answered: code %d after %d calls, waits %v", code, calls, waits)
	}
	code, calls, waits = script(notCoordinator)
	if code != notCoordinator || calls != 5 || len(waits) != 4 || waits[3] != 16*time.Second {
		t.Fatalf("never answered: code %d after %d calls, waits %v", code, calls, waits)
	}
	code, calls, _ = script(kerr.FencedStateEpoch.Code)
	if code != kerr.FencedStateEpoch.Code || calls != 1 {
		t.Fatalf("not retriable: code %d after %d calls", code, calls)
	}
	calls = 0
	code = r.Do(func() int16 { calls++; return loading }, func(time.Duration) bool { return false }, middle)
	if code != loading || calls != 1 {
		t.Fatalf("stopped wait: code %d after %d calls", code, calls)
	}

	// Jitter spreads a backoff by ±20%, and the cap holds.
	if lo, hi := r.Backoff(1, 0), r.Backoff(1, 0.999999); lo != 1600*time.Millisecond || hi < 2399*time.Millisecond || hi > 2400*time.Millisecond {
		t.Fatalf("jitter: %v .. %v", lo, hi)
	}
	if d := r.Backoff(10, 0.5); d != 30*time.Second {
		t.Fatalf("cap: %v", d)
	}
}
