package log

import (
	"path/filepath"
	"slices"
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

// FuzzRecordForTimestamp damages the bytes of a segment of a log opened
// without recovery (as after a clean shutdown) and looks records up by
// timestamp: the batch decoding of a lookup must answer a record or an
// error, never panic or loop.
func FuzzRecordForTimestamp(f *testing.F) {
	template := vfs.NewMem()
	const dir = "/data/t-0"
	cfg := smallConfig()
	cfg.SegmentBytes = 2 << 10
	writeTestLogFS(f, template, dir, cfg, 40)
	files := readFiles(f, template, dir)
	var logs []string
	for name := range files {
		if filepath.Ext(name) == logFileSuffix {
			logs = append(logs, name)
		}
	}
	slices.Sort(logs)
	f.Add(uint8(0), uint32(61), []byte{0xff, 0xff}, int64(0))
	f.Add(uint8(1), uint32(70), []byte{0x7f, 0xff, 0xff, 0xff}, int64(1<<62))
	f.Add(uint8(2), uint32(57), []byte{0x80, 0, 0, 0}, int64(-1))
	f.Add(uint8(0), uint32(21), []byte{0x07}, int64(5))
	f.Fuzz(func(t *testing.T, segment uint8, pos uint32, patch []byte, ts int64) {
		fsys := vfs.NewMem()
		fsys.MkdirAll(dir, 0o755)
		victim := logs[int(segment)%len(logs)]
		for name, b := range files {
			data := append([]byte(nil), b...)
			if name == victim {
				p := int(pos % uint32(len(data)+1))
				for i, c := range patch {
					if p+i < len(data) {
						data[p+i] = c
					}
				}
			}
			w, _ := fsys.Create(dir + "/" + name)
			w.Write(data)
			w.Close()
		}
		l, err := Open(fsys, dir, cfg, OpenOptions{Logger: quietLogger, HadCleanShutdown: true})
		if err != nil {
			return
		}
		defer l.Close()
		if ts < 0 {
			ts = -ts
		}
		if rec, found, err := l.RecordForTimestamp(ts); err == nil && found && rec.Timestamp < ts {
			t.Fatalf("RecordForTimestamp(%d) answered an earlier record %+v", ts, rec)
		}
		_ = l.MaxTimestampRecord()
	})
}
