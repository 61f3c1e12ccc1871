package log

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// benchDir is where benchmarks write: $SAMSA_BENCH_DIR (for example a tmpfs,
// to take disk writeback noise out of the comparison) or a temp dir.
func benchDir(b *testing.B) string {
	if d := os.Getenv("SAMSA_BENCH_DIR"); d != "" {
		dir, err := os.MkdirTemp(d, "bench")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return b.TempDir()
}

// benchBatch is a 16 KiB-ish batch of 1 KiB records.
func benchBatch() []byte { return makeBatch(16, 1000, 1_700_000_000_000) }

// BenchmarkAppend appends 16 KiB batches; reference_plain_write writes the
// same bytes with sequential write(2) calls to one file, the floor the log
// is measured against.
func BenchmarkAppend(b *testing.B) {
	batch := benchBatch()
	b.Run("log", func(b *testing.B) {
		cfg := DefaultConfig()
		cfg.SegmentBytes = 256 << 20
		l := openLog(b, vfs.Default, filepath.Join(benchDir(b), "t-0"), cfg, OpenOptions{})
		defer l.Close()
		work := append([]byte(nil), batch...)
		b.SetBytes(int64(len(batch)))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := l.Append(work, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reference_plain_write", func(b *testing.B) {
		f, err := os.Create(filepath.Join(benchDir(b), "plain"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		b.SetBytes(int64(len(batch)))
		b.ResetTimer()
		var written int64
		for i := 0; i < b.N; i++ {
			if written >= 256<<20 {
				// Same file-size ceiling as the log's segments.
				f.Close()
				if f, err = os.Create(filepath.Join(benchDir(b), "plain")); err != nil {
					b.Fatal(err)
				}
				written = 0
			}
			if _, err := f.Write(batch); err != nil {
				b.Fatal(err)
			}
			written += int64(len(batch))
		}
	})
}

// BenchmarkRead reads a log sequentially with the copying path, 1 MiB per
// read; reference_plain_read reads the same bytes from one file.
func BenchmarkRead(b *testing.B) {
	batch := benchBatch()
	const batches = 4096 // 64 MiB
	dir := filepath.Join(benchDir(b), "t-0")
	cfg := DefaultConfig()
	cfg.SegmentBytes = 16 << 20
	l := openLog(b, vfs.Default, dir, cfg, OpenOptions{})
	defer l.Close()
	plain, err := os.Create(filepath.Join(benchDir(b), "plain"))
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	for i := 0; i < batches; i++ {
		if _, err := l.Append(append([]byte(nil), batch...), 0); err != nil {
			b.Fatal(err)
		}
		plain.Write(batch)
	}
	total := int64(batches * len(batch))
	const chunk = 1 << 20
	b.Run("log", func(b *testing.B) {
		buf := make([]byte, 0, 2*chunk)
		b.SetBytes(chunk)
		b.ResetTimer()
		next := int64(0)
		for i := 0; i < b.N; i++ {
			if next >= l.LogEndOffset() {
				next = 0
			}
			r, err := l.Read(next, chunk, l.LogEndOffset(), true)
			if err != nil {
				b.Fatal(err)
			}
			if buf, err = r.AppendTo(buf[:0]); err != nil {
				b.Fatal(err)
			}
			next = r.FirstOffset + 16*int64(len(buf)/len(batch))
		}
	})
	b.Run("reference_plain_read", func(b *testing.B) {
		buf := make([]byte, chunk)
		b.SetBytes(chunk)
		b.ResetTimer()
		var pos int64
		for i := 0; i < b.N; i++ {
			if pos+chunk > total {
				pos = 0
			}
			if _, err := plain.ReadAt(buf, pos); err != nil {
				b.Fatal(err)
			}
			pos += chunk
		}
	})
}

// BenchmarkIndexLookup measures offset index lookups.
func BenchmarkIndexLookup(b *testing.B) {
	for _, n := range []int{1000, 1_000_000} {
		b.Run(map[int]string{1000: "1k", 1_000_000: "1M"}[n], func(b *testing.B) {
			x, err := openOffsetIndex(vfs.Default, filepath.Join(benchDir(b), "b.index"), 0, int32(8*n), true)
			if err != nil {
				b.Fatal(err)
			}
			defer x.close()
			for i := 0; i < n; i++ {
				if err := x.append(int64(i)*10+9, int64(i)*2000); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			var sink int64
			seed := uint64(1)
			for i := 0; i < b.N; i++ {
				seed = seed*6364136223846793005 + 1442695040888963407
				_, p := x.lookup(int64(seed>>33) % (int64(n) * 10))
				sink += p
			}
			_ = sink
		})
	}
}
