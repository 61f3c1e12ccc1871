package share

import (
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// PersisterRetry is how a persister call to the share coordinator is
// retried while the coordinator cannot answer yet, as Kafka's
// PersisterStateManager does (its constants; Kafka has no config keys for
// them): after the n-th failed attempt it waits
// InitialBackoffMs * Multiplier^n, jittered by ±Jitter and capped at
// MaxBackoffMs, and gives up after MaxAttempts attempts.
type PersisterRetry struct {
	InitialBackoffMs int64
	Multiplier       float64
	MaxBackoffMs     int64
	// Jitter is the relative spread of a backoff, 0.2 for ±20%.
	Jitter float64
	// MaxAttempts bounds the attempts, the first included.
	MaxAttempts int
}

// DefaultPersisterRetry is Kafka's: REQUEST_BACKOFF_MS 1000,
// REQUEST_BACKOFF_MAX_MS 30000, the client retry backoff's base 2 and
// jitter 0.2, and 5 attempts (MAX_FIND_COORD_ATTEMPTS).
func DefaultPersisterRetry() PersisterRetry {
	return PersisterRetry{InitialBackoffMs: 1000, Multiplier: 2, MaxBackoffMs: 30000, Jitter: 0.2, MaxAttempts: 5}
}

// RetriableStateError reports whether a persister answer means "ask
// again later": the share coordinator is moving or still loading its
// __share_group_state partition.
func RetriableStateError(code int16) bool {
	switch code {
	case kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code, kerr.NotCoordinator.Code:
		return true
	}
	return false
}

// Backoff is the wait after failedAttempts failed attempts (>= 1); random
// is uniform in [0, 1) and places the jitter.
func (r PersisterRetry) Backoff(failedAttempts int, random float64) time.Duration {
	term := float64(r.InitialBackoffMs) * math.Pow(r.Multiplier, float64(failedAttempts))
	ms := term * (1 - r.Jitter + 2*r.Jitter*random)
	if ms > float64(r.MaxBackoffMs) {
		ms = float64(r.MaxBackoffMs)
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// Do calls attempt until it answers an error that is not retriable (or
// none), at most MaxAttempts times, calling wait with each backoff in
// between; wait returns false to stop early (the broker is shutting
// down), and the last answer is returned. random supplies the jitter.
func (r PersisterRetry) Do(attempt func() int16, wait func(time.Duration) bool, random func() float64) int16 {
	for failed := 1; ; failed++ {
		code := attempt()
		if !RetriableStateError(code) || failed >= r.MaxAttempts {
			return code
		}
		if !wait(r.Backoff(failed, random())) {
			return code
		}
	}
}
