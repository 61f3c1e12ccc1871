package log

import (
	"context"
	"fmt"
	"testing"

	"github.com/samsa-streaming/samsa/internal/record"
)

// kv is a record to produce: a nil value is a tombstone.
type kv struct {
	key   string
	value []byte
}

func val(s string) []byte { return []byte(s) }

// keyedBatch builds a batch without producer id of kvs, record i stamped
// ts+i.
func keyedBatch(t testing.TB, ts int64, kvs ...kv) []byte {
	t.Helper()
	return keyedBatchOpts(t, record.DefaultBuildOptions(), ts, kvs...)
}

func keyedBatchOpts(t testing.TB, opts record.BuildOptions, ts int64, kvs ...kv) []byte {
	t.Helper()
	recs := make([]record.Record, len(kvs))
	for i, e := range kvs {
		recs[i] = record.Record{Key: []byte(e.key), Value: e.value, TimestampDelta: int64(i)}
	}
	opts.BaseTimestamp = ts
	b, err := record.Build(opts, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loggedRecord is one record read back from a log.
type loggedRecord struct {
	offset    int64
	key       string
	value     []byte
	timestamp int64
}

// model tracks what was appended: every record by offset.
type model struct {
	records map[int64]loggedRecord
}

func newModel() *model { return &model{records: map[int64]loggedRecord{}} }

// appendKV appends kvs as one batch and records them.
func (m *model) appendKV(t testing.TB, l *Log, ts int64, kvs ...kv) AppendResult {
	t.Helper()
	r := mustAppend(t, l, keyedBatch(t, ts, kvs...), 0)
	for i, e := range kvs {
		off := r.BaseOffset + int64(i)
		m.records[off] = loggedRecord{offset: off, key: e.key, value: e.value, timestamp: ts + int64(i)}
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	return r
}

// latest returns each key's latest record below end.
func (m *model) latest(end int64) map[string]loggedRecord {
	out := map[string]loggedRecord{}
	for off, r := range m.records {
		if off < end {
			if cur, ok := out[r.key]; !ok || cur.offset < off {
				out[r.key] = r
			}
		}
	}
	return out
}

// readRecords reads every record of the log, checking that batches are
// whole and offsets increase.
func readRecords(t testing.TB, l *Log) ([]loggedRecord, []record.Header) {
	t.Helper()
	var out []loggedRecord
	var headers []record.Header
	next := l.LogStartOffset()
	for next < l.LogEndOffset() {
		b, _, err := l.ReadBytes(next, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("ReadBytes(%d): %v", next, err)
		}
		if len(b) == 0 {
			t.Fatalf("ReadBytes(%d) returned nothing below LEO %d", next, l.LogEndOffset())
		}
		for len(b) > 0 {
			h, err := record.Verify(b)
			if err != nil {
				t.Fatalf("batch at %d: %v", next, err)
			}
			if h.BaseOffset < next && len(headers) > 0 {
				t.Fatalf("batch %d..%d after offset %d", h.BaseOffset, h.LastOffset(), next)
			}
			headers = append(headers, h)
			if !h.IsControl() {
				err = record.Records(b[:h.Size()], 0, func(r record.Record) error {
					off := h.BaseOffset + int64(r.OffsetDelta)
					if len(out) > 0 && off <= out[len(out)-1].offset {
						return fmt.Errorf("offset %d after %d", off, out[len(out)-1].offset)
					}
					var v []byte
					if r.Value != nil {
						v = append([]byte{}, r.Value...)
					}
					out = append(out, loggedRecord{offset: off, key: string(r.Key), value: v, timestamp: h.RecordTimestamp(r.TimestampDelta)})
					return nil
				})
				if err != nil {
					t.Fatalf("records of batch at %d: %v", h.BaseOffset, err)
				}
			}
			next = h.LastOffset() + 1
			b = b[h.Size():]
		}
	}
	return out, headers
}

// checkWhole checks a log some of whose records may have been cleaned away:
// every record read is one that was appended, unchanged, at its offset, and
// every key's latest record is there.
func checkWhole(t testing.TB, l *Log, m *model) {
	t.Helper()
	checkCompacted(t, l, m, -1, false)
}

// checkCompacted checks the log against the model after cleaning up to
// endOffset: every record read is one that was appended, unchanged, at its
// offset; below endOffset each key appears at most once, and each key's
// latest record there is present unless tombstonesGone says its tombstone
// may have expired; every record at or above endOffset is still there.
func checkCompacted(t testing.TB, l *Log, m *model, endOffset int64, tombstonesGone bool) []loggedRecord {
	t.Helper()
	got, _ := readRecords(t, l)
	seen := map[string]bool{}
	present := map[int64]bool{}
	for _, r := range got {
		want, ok := m.records[r.offset]
		if !ok || want.key != r.key || string(want.value) != string(r.value) || (want.value == nil) != (r.value == nil) || want.timestamp != r.timestamp {
			t.Fatalf("record at %d is %q=%q@%d, appended %q=%q@%d", r.offset, r.key, r.value, r.timestamp, want.key, want.value, want.timestamp)
		}
		present[r.offset] = true
		if endOffset >= 0 && r.offset < endOffset {
			if seen[r.key] {
				t.Fatalf("key %q appears twice below the cleaned end %d", r.key, endOffset)
			}
			seen[r.key] = true
		}
	}
	for key, r := range m.latest(l.LogEndOffset()) {
		if !present[r.offset] && !(tombstonesGone && r.value == nil) {
			t.Fatalf("latest record of %q at %d is gone", key, r.offset)
		}
	}
	for off := range m.records {
		if endOffset >= 0 && off >= endOffset && !present[off] {
			t.Fatalf("record at %d, above the cleaned end %d, is gone", off, endOffset)
		}
	}
	return got
}

// testCleaner returns a cleaner thread with small buffers.
func testCleaner(clock *testClock) *cleanerThread {
	opts := CleanerOptions{IOBufferSize: 8 << 10, DedupeBufferSize: 1 << 20}.withDefaults()
	return newCleanerThread(0, opts, nil, clock.Now, quietLogger)
}

// cleanOnce runs one pass over l from firstDirty, as the manager would.
func cleanOnce(t testing.TB, c *cleanerThread, l *Log, clock *testClock, firstDirty int64) cleanStats {
	t.Helper()
	ltc, err := newLogToClean(l, firstDirty, clock.Now().UnixMilli(), -1)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := c.clean(context.Background(), ltc.target)
	if err != nil {
		t.Fatalf("clean: %v", err)
	}
	return stats
}

// compactConfig is a small-segment compacted log config.
func compactConfig() Config {
	cfg := smallConfig()
	cfg.SegmentBytes = 2048
	cfg.RetentionDelete = false
	cfg.Compaction = DefaultCompactionConfig()
	cfg.Compaction.Enabled = true
	return cfg
}
