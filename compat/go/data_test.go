package main

import (
	"strings"
	"testing"
)

func TestVerify(t *testing.T) {
	base := int64(1_700_000_000_000)
	good := func() []record {
		var rs []record
		next := map[int32]int64{}
		for i := 0; i < 300; i++ {
			p := int32(i % numKeys % 3) // equal keys, equal partition
			rs = append(rs, record{Partition: p, Offset: next[p], Key: keyFor(i), Value: valueFor(i),
				Headers: headersFor("c", i), Timestamp: base + int64(i)})
			next[p]++
		}
		return rs
	}
	exp := expectation{
		idx:          rangeIdx(0, 300),
		want:         func(i int) record { return record{Headers: headersFor("c", i), Timestamp: base + int64(i)} },
		checkHeaders: true,
	}
	if err := verify(good(), exp); err != nil {
		t.Fatalf("good records: %v", err)
	}
	for name, tc := range map[string]struct {
		mutate func([]record) []record
		want   string
	}{
		"duplicate": {func(rs []record) []record { return append(rs, rs[5]) }, "delivered twice"},
		"missing":   {func(rs []record) []record { return rs[1:] }, "missing"},
		"header":    {func(rs []record) []record { rs[3].Headers = nil; return rs }, "headers"},
		"timestamp": {func(rs []record) []record { rs[3].Timestamp++; return rs }, "timestamp"},
		"key":       {func(rs []record) []record { rs[3].Key = "x"; return rs }, "key"},
		"order": {func(rs []record) []record {
			rs[0], rs[3] = rs[3], rs[0] // both on partition 0
			return rs
		}, "partition 0"},
		"key partition": {func(rs []record) []record { rs[100].Partition = 2; rs[100].Offset = 1000; return rs }, "on partitions"},
	} {
		err := verify(tc.mutate(good()), exp)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error about %q", name, err, tc.want)
		}
	}
}

func TestCheckDense(t *testing.T) {
	if _, err := checkDense(map[int32][]int64{0: {2, 0, 1}, 1: {0}}); err != nil {
		t.Errorf("dense offsets: %v", err)
	}
	if _, err := checkDense(map[int32][]int64{0: {0, 2}}); err == nil {
		t.Error("a gap passed")
	}
}

// kcat consumes its input in 1024-byte reads; a line must be exactly 128
// bytes (see kcatInput).
func TestKcatLineLength(t *testing.T) {
	for _, i := range []int{0, 7, 999_999} {
		line := keyFor(i) + "\t" + valueFor(i) + "\n"
		if len(line) != 128 {
			t.Errorf("record %d: kcat input line is %d bytes, want 128", i, len(line))
		}
	}
	if txnRecords%8 != 0 {
		t.Errorf("txnRecords = %d, want a multiple of 8", txnRecords)
	}
}
