package log

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// TestConcurrentReadersDuringAppends: readers racing one appender (with
// rolls and retention) only ever see whole, valid batches below the end
// offset they observed.
func TestConcurrentReadersDuringAppends(t *testing.T) {
	cfg := smallConfig()
	cfg.SegmentBytes = 16_000
	cfg.RetentionBytes = 100_000
	cfg.RetentionMs = -1
	cfg.FileDeleteDelayMs = 60_000
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{})
	defer l.Close()
	const appends = 1500
	var done atomic.Bool
	var wg sync.WaitGroup
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := int64(0)
			for !done.Load() {
				leo := l.LogEndOffset()
				if next < l.LogStartOffset() {
					next = l.LogStartOffset()
				}
				b, res, err := l.ReadBytes(next, 3000, leo, true)
				if err != nil {
					// Retention may pass us between the two loads.
					if next < l.LogStartOffset() {
						continue
					}
					t.Errorf("read at %d: %v", next, err)
					return
				}
				for len(b) > 0 {
					h, err := record.Verify(b)
					if err != nil {
						t.Errorf("read at %d returned a bad batch: %v", next, err)
						return
					}
					if h.LastOffset() >= leo {
						t.Errorf("batch %d..%d past the end offset %d", h.BaseOffset, h.LastOffset(), leo)
						return
					}
					next = h.LastOffset() + 1
					b = b[h.Size():]
				}
				_ = res
			}
		}()
	}
	for i := 0; i < appends; i++ {
		mustAppend(t, l, makeBatch(1+i%3, 50+i%100, int64(i)), 0)
		l.UpdateHighWatermark(l.LogEndOffset())
		if i%100 == 0 {
			if _, err := l.EnforceRetention(l.clock()); err != nil {
				t.Error(err)
			}
		}
	}
	done.Store(true)
	wg.Wait()
}
