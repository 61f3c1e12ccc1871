package log

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// cleanerBenchLog writes a 32 MiB compacted log of 16-record batches of
// 1 KiB values over 4096 keys (each key updated 8 times) in 4 MiB segments,
// closes it and returns its dir, config and size.
func cleanerBenchLog(b *testing.B) (string, Config, int64) {
	b.Helper()
	dir := filepath.Join(benchDir(b), "template-0")
	cfg := compactConfig()
	cfg.SegmentBytes = 4 << 20
	cfg.SegmentIndexBytes = 1 << 20
	cfg.IndexIntervalBytes = DefaultIndexIntervalBytes
	l := openLog(b, vfs.Default, dir, cfg, OpenOptions{})
	value := make([]byte, 1000)
	recs := make([]record.Record, 16)
	for i := 0; l.Size() < 32<<20; i++ {
		for j := range recs {
			n := i*len(recs) + j
			recs[j] = record.Record{Key: fmt.Appendf(nil, "key-%d", n%4096), Value: value, OffsetDelta: int32(j), TimestampDelta: int64(j)}
		}
		opts := record.DefaultBuildOptions()
		opts.BaseTimestamp = 1_700_000_000_000
		batch, err := record.Build(opts, recs)
		if err != nil {
			b.Fatal(err)
		}
		mustAppend(b, l, batch, 0)
	}
	if err := l.Roll(); err != nil {
		b.Fatal(err)
	}
	size := l.Size()
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	return dir, cfg, size
}

// BenchmarkCleaner measures one cleaning pass over a dirty log, in MB/s of
// log processed (the bytes of the segments cleaned), against
// reference_sequential_read: reading the same segment files front to back
// with the cleaner's buffer size. The pass reads the dirty section twice
// (offset map, then rewrite) and writes and fsyncs what it keeps.
func BenchmarkCleaner(b *testing.B) {
	template, cfg, size := cleanerBenchLog(b)
	b.Run("clean", func(b *testing.B) {
		clock := newTestClock()
		opts := CleanerOptions{Enable: true, Threads: 1}.withDefaults()
		cleaner := newCleanerThread(0, opts, nil, clock.Now, quietLogger)
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dir := filepath.Join(benchDir(b), fmt.Sprintf("t-%d", i))
			copyDir(b, template, dir)
			l := openLog(b, vfs.Default, dir, cfg, OpenOptions{Clock: clock.Now, HadCleanShutdown: true})
			l.UpdateHighWatermark(l.LogEndOffset())
			ltc, err := newLogToClean(l, 0, clock.Now().UnixMilli(), -1)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			stats, err := cleaner.clean(context.Background(), ltc.target)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if i == 0 {
				b.ReportMetric(float64(stats.bytesWritten)/float64(stats.bytesRead), "kept/read")
			}
			l.Close()
			os.RemoveAll(dir)
			b.StartTimer()
		}
	})
	b.Run("reference_sequential_read", func(b *testing.B) {
		files, err := filepath.Glob(filepath.Join(template, "*"+logFileSuffix))
		if err != nil {
			b.Fatal(err)
		}
		_, bufBytes := CleanerOptions{Threads: 1}.withDefaults().perThread()
		buf := make([]byte, bufBytes)
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			var read int64
			for _, name := range files {
				f, err := os.Open(name)
				if err != nil {
					b.Fatal(err)
				}
				for {
					n, err := f.ReadAt(buf, read)
					read += int64(n)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				f.Close()
				read = 0
			}
		}
	})
}
