package quota

import (
	"math"
	"testing"
)

func TestReplicationQuotaHoldsTheBoundOverTime(t *testing.T) {
	q := NewReplicationQuota(DefaultWindows)
	const bound = 5 << 20
	// A follower that fetches 64 KiB whenever the quota allows, every 10 ms
	// for a minute, moves bound bytes a second once the first windows are
	// full: the young stat counts as 10 windows long, so the start may run
	// ahead by at most that span's worth.
	var sent int64
	sentAt := map[int64]int64{}
	for nowMs := int64(0); nowMs <= 60_000; nowMs += 10 {
		if !q.Exceeded(bound, nowMs) {
			q.Record(64<<10, nowMs)
			sent += 64 << 10
		}
		if nowMs%1000 == 0 {
			sentAt[nowMs/1000] = sent
		}
	}
	steady := float64(sentAt[60]-sentAt[20]) / 40
	if steady < 0.95*bound || steady > 1.05*bound {
		t.Fatalf("steady rate %.0f B/s, want %d ± 5%%", steady, bound)
	}
	if burst := sentAt[1]; burst > 11*bound {
		t.Fatalf("first second sent %d bytes, more than the windows' span at the bound", burst)
	}
}

func TestReplicationQuotaUnbounded(t *testing.T) {
	q := NewReplicationQuota(DefaultWindows)
	q.Record(1<<40, 0)
	for _, bound := range []int64{math.MaxInt64, 0, -1} {
		if q.Exceeded(bound, 1) {
			t.Fatalf("bound %d throttled", bound)
		}
	}
	if !q.Exceeded(1<<20, 1) {
		t.Fatal("a terabyte in a millisecond is within 1 MiB/s")
	}
}
