package log

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// BenchmarkFirstAppendOfNewEpoch measures the append that opens a leader
// epoch, as the first produce to each new partition does: "deferred" is
// Append as it is (the checkpoint waits for the next flush or Close);
// "checkpoint_in_append" adds the epoch checkpoint write and fsync that the
// append used to do itself, for comparison. Each iteration uses a fresh log,
// opened and closed outside the timer.
func BenchmarkFirstAppendOfNewEpoch(b *testing.B) {
	batch := makeBatch(1, 1000, 1_700_000_000_000)
	for _, mode := range []string{"deferred", "checkpoint_in_append"} {
		b.Run(mode, func(b *testing.B) {
			dir := benchDir(b)
			i := 0
			for b.Loop() {
				b.StopTimer()
				l := openLog(b, vfs.Default, filepath.Join(dir, fmt.Sprintf("t-%d", i)), smallConfig(), OpenOptions{})
				i++
				work := append([]byte(nil), batch...)
				b.StartTimer()
				if _, err := l.Append(work, 1); err != nil {
					b.Fatal(err)
				}
				if mode == "checkpoint_in_append" {
					if err := l.EpochCache().Flush(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				l.Close()
				b.StartTimer()
			}
		})
	}
}
