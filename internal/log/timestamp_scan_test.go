package log

import (
	"path/filepath"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// TestRecordForTimestampCarriesTheBatchLeaderEpoch: a record found by
// timestamp, or as the one with the largest timestamp, is answered with the
// partition leader epoch of its batch, which ListOffsets returns as Kafka
// does, not the epoch the log is at now.
func TestRecordForTimestampCarriesTheBatchLeaderEpoch(t *testing.T) {
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), smallConfig(), OpenOptions{})
	defer l.Close()
	mustAppend(t, l, makeBatch(3, 10, 1000), 2) // offsets 0-2, timestamps 1000-1002
	mustAppend(t, l, makeBatch(3, 10, 5000), 4) // offsets 3-5, timestamps 5000-5002
	mustAppend(t, l, makeBatch(3, 10, 2000), 7) // offsets 6-8, timestamps 2000-2002
	for _, tc := range []struct {
		ts     int64
		offset int64
		epoch  int32
	}{{1001, 1, 2}, {1003, 3, 4}, {5002, 5, 4}} {
		rec, found, err := l.RecordForTimestamp(tc.ts)
		if err != nil || !found || rec.Offset != tc.offset || rec.LeaderEpoch != tc.epoch {
			t.Errorf("RecordForTimestamp(%d) = %+v %v %v, want offset %d epoch %d", tc.ts, rec, found, err, tc.offset, tc.epoch)
		}
	}
	if rec := l.MaxTimestampRecord(); rec.Offset != 5 || rec.Timestamp != 5002 || rec.LeaderEpoch != 4 {
		t.Errorf("MaxTimestampRecord = %+v, want offset 5 at 5002, epoch 4", rec)
	}
	if _, found, err := l.RecordForTimestamp(6000); found || err != nil {
		t.Errorf("past the newest timestamp: found=%v err=%v", found, err)
	}
}
