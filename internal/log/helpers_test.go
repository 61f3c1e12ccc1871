package log

import (
	"encoding/binary"
	"hash/crc32"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

// makeBatch builds an uncompressed RecordBatch v2 of n records with values of
// valueBytes bytes, timestamps ts, ts+1, ..., and base offset 0.
func makeBatch(n, valueBytes int, ts int64) []byte {
	b := make([]byte, record.HeaderSize, record.HeaderSize+n*(valueBytes+16))
	value := make([]byte, valueBytes)
	for i := range value {
		value[i] = byte(i)
	}
	var rec []byte
	for i := 0; i < n; i++ {
		rec = rec[:0]
		rec = append(rec, 0)                     // attributes
		rec = binary.AppendVarint(rec, int64(i)) // timestamp delta
		rec = binary.AppendVarint(rec, int64(i)) // offset delta
		rec = binary.AppendVarint(rec, -1)       // key length
		rec = binary.AppendVarint(rec, int64(len(value)))
		rec = append(rec, value...)
		rec = binary.AppendVarint(rec, 0) // headers
		b = binary.AppendVarint(b, int64(len(rec)))
		b = append(b, rec...)
	}
	binary.BigEndian.PutUint64(b[0:], 0)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-record.LogOverhead))
	binary.BigEndian.PutUint32(b[12:], 0)
	b[16] = 2
	binary.BigEndian.PutUint16(b[21:], 0)
	binary.BigEndian.PutUint32(b[23:], uint32(n-1))
	binary.BigEndian.PutUint64(b[27:], uint64(ts))
	binary.BigEndian.PutUint64(b[35:], uint64(ts+int64(n-1)))
	binary.BigEndian.PutUint64(b[43:], ^uint64(0)) // producer id -1
	binary.BigEndian.PutUint16(b[51:], 0xffff)
	binary.BigEndian.PutUint32(b[53:], 0xffffffff)
	binary.BigEndian.PutUint32(b[57:], uint32(n))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoliTable))
	return b
}

// withBaseOffset returns a copy of batch with its base offset set (for
// follower appends).
func withBaseOffset(batch []byte, base int64, epoch int32) []byte {
	b := append([]byte(nil), batch...)
	record.SetBaseOffset(b, base)
	record.SetPartitionLeaderEpoch(b, epoch)
	return b
}

// testClock is a manual clock, safe for the log's background goroutines.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock { return &testClock{now: time.UnixMilli(1_700_000_000_000)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func smallConfig() Config {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 16 << 10
	cfg.SegmentIndexBytes = 4 << 10
	cfg.IndexIntervalBytes = 256
	cfg.FileDeleteDelayMs = 0
	return cfg
}

// quietLogger drops log output; tests that care check results instead.
var quietLogger = slog.New(slog.DiscardHandler)

func openLog(t testing.TB, fsys vfs.FS, dir string, cfg Config, opts OpenOptions) *Log {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger
	}
	l, err := Open(fsys, dir, cfg, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

func mustAppend(t testing.TB, l *Log, batch []byte, epoch int32) AppendResult {
	t.Helper()
	r, err := l.Append(append([]byte(nil), batch...), epoch)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return r
}

// readAll reads every batch from offset to the log end and returns headers.
func readAll(t testing.TB, l *Log, from int64) []record.Header {
	t.Helper()
	var out []record.Header
	next := from
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
				t.Fatalf("batch read at %d fails Verify: %v", next, err)
			}
			out = append(out, h)
			next = h.LastOffset() + 1
			b = b[h.Size():]
		}
	}
	return out
}

func readHeader(b []byte) (record.Header, error) { return record.ParseHeader(b) }
