package tier

import (
	"reflect"
	"testing"
)

func upload(base, end int64, epoch int32, eventMs int64, epochs ...EpochEntry) Upload {
	return Upload{Dir: "d", Finished: true, Metadata: SegmentMetadata{
		BaseOffset: base, EndOffset: end, LeaderEpoch: epoch, EventTimestampMs: eventMs,
		SegmentSizeBytes: end - base + 1, MaxTimestampMs: end * 10, LeaderEpochs: epochs}}
}

func bases(segments []SegmentMetadata) []int64 {
	var out []int64
	for _, s := range segments {
		out = append(out, s.BaseOffset)
	}
	return out
}

// TestBuildViewFencesDeposedLeaders gives the view a deposed leader's upload
// (epoch 2 kept writing past the point where epoch 3 took over) and an
// overlapping upload of a higher epoch: neither the stale nor the
// overlapped upload is served.
func TestBuildViewFencesDeposedLeaders(t *testing.T) {
	cache := []EpochEntry{{1, 0}, {3, 150}}
	uploads := []Upload{
		upload(0, 99, 1, 10, EpochEntry{1, 0}),
		// Deposed leader of epoch 2, which the current lineage never had.
		upload(100, 199, 2, 20, EpochEntry{1, 0}, EpochEntry{2, 120}),
		// The current leader's upload of the same offsets.
		upload(100, 199, 3, 30, EpochEntry{1, 0}, EpochEntry{3, 150}),
		// Epoch 1 ended at 149: an epoch-1 segment past it is stale.
		upload(200, 299, 1, 40, EpochEntry{1, 0}),
		{Dir: "orphan", Metadata: SegmentMetadata{BaseOffset: 300, EndOffset: 300}},
		{Dir: "deleting", Finished: true, DeleteStarted: true, Metadata: SegmentMetadata{BaseOffset: 0, EndOffset: 99}},
	}
	view := BuildView(uploads, cache)
	if got := bases(view.Segments); !reflect.DeepEqual(got, []int64{0, 100}) || view.Segments[1].LeaderEpoch != 3 {
		t.Fatalf("served %v (epoch %d)", got, view.Segments[1].LeaderEpoch)
	}
	if len(view.Unreferenced) != 2 || len(view.Orphans) != 1 || len(view.Deleting) != 1 {
		t.Fatalf("unreferenced %d orphans %d deleting %d", len(view.Unreferenced), len(view.Orphans), len(view.Deleting))
	}
	// Without a cache (restore) the higher epoch still wins an overlap.
	view = BuildView(uploads[:3], nil)
	if len(view.Segments) != 2 || view.Segments[1].LeaderEpoch != 3 {
		t.Fatalf("restore view: %+v", view.Segments)
	}
}

// TestBuildViewKeepsWhatOnlyALosingUploadServes: the old leader (epoch 0)
// copied [0, 29]; the new leader's segments rolled elsewhere, so it
// copied [20, 79], which starts inside the old upload. The old upload
// still serves [0, 19], on the next listing and in the copying task's own
// view; only an upload whose first offset a winner covers is
// unreferenced.
func TestBuildViewKeepsWhatOnlyALosingUploadServes(t *testing.T) {
	cache := []EpochEntry{{0, 0}, {1, 60}}
	old := upload(0, 29, 0, 10, EpochEntry{0, 0})
	newer := upload(20, 79, 1, 20, EpochEntry{0, 20}, EpochEntry{1, 60})
	view := BuildView([]Upload{old, newer}, cache)
	type span struct{ base, end int64 }
	spans := func(segments []SegmentMetadata) []span {
		var out []span
		for _, s := range segments {
			out = append(out, span{s.BaseOffset, s.EndOffset})
		}
		return out
	}
	want := []span{{0, 19}, {20, 79}}
	if got := spans(view.Segments); !reflect.DeepEqual(got, want) || len(view.Unreferenced) != 0 {
		t.Fatalf("served %v, unreferenced %d; want %v and none", got, len(view.Unreferenced), want)
	}
	if m, ok := view.Find(10); !ok || m.EndOffset != 19 || m.LeaderEpoch != 0 {
		t.Fatalf("offset 10 from %+v, %v", m, ok)
	}
	if m, ok := view.Find(25); !ok || m.LeaderEpoch != 1 {
		t.Fatalf("offset 25 from %+v, %v", m, ok)
	}

	// The task that copied [20, 79] sees the same.
	task := BuildView([]Upload{old}, cache)
	task.appendCopied(newer.Metadata)
	if got := spans(task.Segments); !reflect.DeepEqual(got, want) {
		t.Fatalf("task view %v, want %v", got, want)
	}

	// An upload of the same first offset is covered whole.
	covering := upload(0, 79, 1, 30, EpochEntry{0, 0}, EpochEntry{1, 60})
	view = BuildView([]Upload{old, newer, covering}, cache)
	if got := spans(view.Segments); !reflect.DeepEqual(got, []span{{0, 79}}) || len(view.Unreferenced) != 2 {
		t.Fatalf("served %v, unreferenced %d; want [0, 79] and 2", got, len(view.Unreferenced))
	}
	task = BuildView([]Upload{old, newer}, cache)
	task.appendCopied(covering.Metadata)
	if got := spans(task.Segments); !reflect.DeepEqual(got, []span{{0, 79}}) {
		t.Fatalf("task view %v", got)
	}
}

func TestSegmentsToCopyStopsAtTheLastStableOffset(t *testing.T) {
	local := []LocalSegmentInfo{{0, 99, 100, 0}, {100, 199, 100, 0}, {200, 299, 100, 0}}
	if got := SegmentsToCopy(local, 250, -1); len(got) != 2 {
		t.Fatalf("LSO 250: %v", got)
	}
	if got := SegmentsToCopy(local, 250, 99); len(got) != 1 || got[0].BaseOffset != 100 {
		t.Fatalf("after remote end 99: %v", got)
	}
	// An open transaction at 150 holds back the segment holding it.
	if got := SegmentsToCopy(local, 150, -1); len(got) != 1 {
		t.Fatalf("LSO 150: %v", got)
	}
	if got := SegmentsToCopy(local, 1000, 299); len(got) != 0 {
		t.Fatalf("all copied: %v", got)
	}
}

func TestLocalRetentionNeverDeletesWhatIsNotCopied(t *testing.T) {
	local := []LocalSegmentInfo{{0, 99, 100, 1000}, {100, 199, 100, 2000}, {200, 299, 100, 3000}}
	// Everything is over both limits, but only two segments are copied.
	if n := LocalRetention(local, 199, 400, 0, 0, 1_000_000); n != 2 {
		t.Fatalf("deleted %d, want 2", n)
	}
	// The store was down: nothing copied, nothing deleted.
	if n := LocalRetention(local, -1, 400, 0, 0, 1_000_000); n != 0 {
		t.Fatalf("deleted %d uncopied segments", n)
	}
	// By size: 400 bytes with a 250-byte limit deletes the first only...
	if n := LocalRetention(local, 299, 400, -1, 250, 0); n != 1 {
		t.Fatalf("by size: %d", n)
	}
	// ...by time: older than 1500 ms at now=3600 are the first two.
	if n := LocalRetention(local, 299, 400, 1500, -1, 3600); n != 2 {
		t.Fatalf("by time: %d", n)
	}
}

func TestRemoteRetention(t *testing.T) {
	view := BuildView([]Upload{upload(0, 99, 0, 0, EpochEntry{0, 0}), upload(100, 199, 0, 0, EpochEntry{0, 0}), upload(200, 299, 0, 0, EpochEntry{0, 0})}, nil)
	// By time: max timestamps are 990, 1990, 2990.
	if got := RemoteRetention(&view, 0, 1000, -1, 0, 3000); !reflect.DeepEqual(bases(got), []int64{0, 100}) {
		t.Fatalf("by time: %v", bases(got))
	}
	// By size: 300 remote + 50 local-only against 150 drops two (a drop that would go below the limit is kept, as Kafka).
	if got := RemoteRetention(&view, 50, -1, 150, 0, 0); !reflect.DeepEqual(bases(got), []int64{0, 100}) {
		t.Fatalf("by size: %v", bases(got))
	}
	// Below a DeleteRecords log start offset of 150: only the first is wholly below.
	if got := RemoteRetention(&view, 0, -1, -1, 150, 0); !reflect.DeepEqual(bases(got), []int64{0}) {
		t.Fatalf("by log start: %v", bases(got))
	}
	if got := RemoteRetention(&view, 0, -1, -1, 0, 1<<40); len(got) != 0 {
		t.Fatalf("unlimited: %v", bases(got))
	}
}
