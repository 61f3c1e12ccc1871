package partition

import (
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// BenchmarkAppend compares appending batches without a producer id (the
// reference) with idempotent and transactional ones, which go through the
// producer-state checks (10 records of 100 bytes per batch).
func BenchmarkAppend(b *testing.B) {
	build := func(pid int64, seq int32, txn bool) ([]byte, record.Header) {
		opts := record.DefaultBuildOptions()
		if pid >= 0 {
			opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence, opts.Transactional = pid, 0, seq, txn
		}
		opts.BaseTimestamp = time.Now().UnixMilli()
		recs := make([]record.Record, 10)
		for i := range recs {
			recs[i] = record.Record{Value: make([]byte, 100), TimestampDelta: int64(i)}
		}
		batch, _ := record.Build(opts, recs)
		h, _ := record.ParseHeader(batch)
		return batch, h
	}
	for _, c := range []struct {
		name string
		pid  int64
		txn  bool
	}{{"plain", -1, false}, {"idempotent", 1, false}, {"transactional", 1, true}} {
		b.Run(c.name, func(b *testing.B) {
			l, err := log.Open(vfs.Default, b.TempDir(), log.DefaultConfig(), log.OpenOptions{HadCleanShutdown: true, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			p, err := New("t", 0, [16]byte{1}, l, 0, Options{Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			batches := make([][]byte, b.N)
			headers := make([]record.Header, b.N)
			for i := range batches {
				batches[i], headers[i] = build(c.pid, int32(i*10), c.txn)
			}
			b.SetBytes(int64(len(batches[0])))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, code, err := p.AppendWith(batches[i], headers[i], AppendOptions{LogAppendTime: -1, Origin: OriginClient}); code != nil || err != nil {
					b.Fatal(code, err)
				}
			}
		})
	}
}
