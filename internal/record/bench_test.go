package record

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// benchRecords returns n records of valueBytes bytes of JSON-like text, which
// compresses about as well as real payloads (2-4x), unlike repeated bytes.
func benchRecords(n, valueBytes int) []Record {
	rng := rand.New(rand.NewPCG(7, 11))
	fields := []string{"user", "event", "page", "session", "amount", "currency", "ts"}
	records := make([]Record, n)
	for i := range records {
		var value []byte
		for len(value) < valueBytes {
			value = fmt.Appendf(value, `{"%s":"%08x","%s":%d},`,
				fields[rng.IntN(len(fields))], rng.Uint32(), fields[rng.IntN(len(fields))], rng.IntN(100000))
		}
		records[i] = Record{
			TimestampDelta: int64(i),
			Key:            fmt.Appendf(nil, "user-%d", rng.IntN(1000)),
			Value:          value[:valueBytes],
		}
	}
	return records
}

// BenchmarkValidate validates a 16 KiB batch of 1 KiB records as the produce
// path does, beside raw CRC-32C over the same bytes: for an uncompressed
// batch, the checksum is the floor Validate cannot go below.
func BenchmarkValidate(b *testing.B) {
	records := benchRecords(16, 1000)
	table := crc32.MakeTable(crc32.Castagnoli)
	for _, c := range []struct {
		name  string
		codec int8
	}{{"none", CodecNone}, {"lz4", CodecLz4}, {"zstd", CodecZstd}} {
		batch := mustBuild(b, producerOptions(c.codec), records)
		opts := DefaultValidateOptions(testNowMs)
		b.Run(c.name+"/validate", func(b *testing.B) {
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Validate(batch, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/reference_crc32c", func(b *testing.B) {
			b.SetBytes(int64(len(batch)))
			for b.Loop() {
				crc32.Checksum(batch, table)
			}
		})
	}
}

// BenchmarkValidateSmallRecords validates an uncompressed batch of 1000
// records of 100 bytes (workload c of the bench tool), where walking the
// records, not the checksum, is most of the work, beside CRC-32C over the
// same bytes and a walk that only reads each record's length. cpu-ns/record
// is the CPU time of the benchmark's thread per record, which a busy
// machine does not inflate as it does ns/op.
func BenchmarkValidateSmallRecords(b *testing.B) {
	records := benchRecords(1000, 100)
	batch := mustBuild(b, producerOptions(CodecNone), records)
	opts := DefaultValidateOptions(testNowMs)
	table := crc32.MakeTable(crc32.Castagnoli)
	perRecord := func(b *testing.B, fn func()) {
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		cpu := threadCPUTime(b, func() {
			for b.Loop() {
				fn()
			}
		})
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(records)), "cpu-ns/record")
	}
	b.Run("validate", func(b *testing.B) {
		perRecord(b, func() {
			if _, err := Validate(batch, opts); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("validate_crc_matched", func(b *testing.B) {
		matched := opts
		matched.CRCMatched = true
		perRecord(b, func() {
			if _, err := Validate(batch, matched); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("reference_crc32c", func(b *testing.B) {
		perRecord(b, func() { crc32.Checksum(batch, table) })
	})
	b.Run("reference_length_walk", func(b *testing.B) {
		perRecord(b, func() {
			rest := batch[HeaderSize:]
			for len(rest) > 0 {
				length, n := readVarint(rest)
				if n <= 0 {
					b.Fatal("bad length")
				}
				rest = rest[n+int(length):]
			}
		})
	})
}
