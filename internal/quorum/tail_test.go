package quorum

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

func tailEntryAt(offset int64, values ...string) *raftpb.Entry {
	var data []byte
	if len(values) > 0 {
		vs := make([][]byte, len(values))
		for i, v := range values {
			vs[i] = []byte(v)
		}
		data = encodeProposal(uint64(offset), vs)
	}
	return &raftpb.Entry{Index: new(uint64(offset + 1)), Term: new(uint64(2)), Type: new(raftpb.EntryNormal), Data: data}
}

// readTail reads the tail from offset and decodes what it returned.
func readTail(t *testing.T, tail *committedTail, offset int64, maxBytes int) (offsets []int64, values []string, end int64, err error) {
	t.Helper()
	q := &Quorum{tail: tail}
	c, err := q.ReadCommitted(offset, maxBytes)
	if err != nil {
		return nil, nil, c.End, err
	}
	if err := DecodeEntryBatches(c.Batches, func(offset int64, vs [][]byte) error {
		offsets = append(offsets, offset)
		for _, v := range vs {
			values = append(values, string(v))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return offsets, values, c.End, nil
}

func TestCommittedTail(t *testing.T) {
	tail := newCommittedTail(1 << 20)
	tail.reset(10) // restored a snapshot holding offsets 0..9
	if _, _, _, err := readTail(t, tail, 9, 1<<20); !errors.Is(err, ErrOffsetBeforeTail) {
		t.Fatalf("read before the tail: %v, want ErrOffsetBeforeTail", err)
	}
	q := &Quorum{tail: tail}
	empty, err := q.ReadCommitted(10, 1<<20)
	if err != nil || len(empty.Batches) != 0 || empty.End != 10 {
		t.Fatalf("empty tail: %d bytes, end %d, %v", len(empty.Batches), empty.End, err)
	}
	// A leader's empty entry moves the end without a batch.
	for _, e := range []*raftpb.Entry{tailEntryAt(10), tailEntryAt(11, "a", "b"), tailEntryAt(12, "c")} {
		if err := tail.add(e, 1); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-empty.Applied:
	default:
		t.Fatal("a waiter was not woken by new entries")
	}
	offsets, values, end, err := readTail(t, tail, 10, 1<<20)
	if err != nil || !slices.Equal(offsets, []int64{11, 12}) || !slices.Equal(values, []string{"a", "b", "c"}) || end != 13 {
		t.Fatalf("read from 10: offsets %v values %v end %d err %v", offsets, values, end, err)
	}
	offsets, _, _, _ = readTail(t, tail, 12, 1<<20)
	if !slices.Equal(offsets, []int64{12}) {
		t.Fatalf("read from 12: offsets %v", offsets)
	}
	// maxBytes limits the batches but always returns one whole entry.
	offsets, _, _, _ = readTail(t, tail, 11, 1)
	if !slices.Equal(offsets, []int64{11}) {
		t.Fatalf("read of 1 byte: offsets %v, want the first entry whole", offsets)
	}
}

func TestCommittedTailIsBounded(t *testing.T) {
	one, err := appendEntryBatch(nil, tailEntryAt(0, "value"), 1)
	if err != nil {
		t.Fatal(err)
	}
	tail := newCommittedTail(3 * len(one))
	for offset := range int64(10) {
		if err := tail.add(tailEntryAt(offset, "value"), 1); err != nil {
			t.Fatal(err)
		}
	}
	if tail.mu.bytes > 3*len(one) || len(tail.mu.entries) != 3 {
		t.Fatalf("tail holds %d entries in %d bytes, bound %d", len(tail.mu.entries), tail.mu.bytes, 3*len(one))
	}
	if _, _, _, err := readTail(t, tail, 6, 1<<20); !errors.Is(err, ErrOffsetBeforeTail) {
		t.Fatalf("read of a dropped offset: %v, want ErrOffsetBeforeTail", err)
	}
	offsets, _, _, err := readTail(t, tail, 7, 1<<20)
	if err != nil || !slices.Equal(offsets, []int64{7, 8, 9}) {
		t.Fatalf("read from 7: %v %v", offsets, err)
	}
	// Even a bound smaller than one entry keeps the newest.
	tiny := newCommittedTail(1)
	for offset := range int64(3) {
		tiny.add(tailEntryAt(offset, fmt.Sprint(offset)), 1)
	}
	if offsets, _, _, err := readTail(t, tiny, 2, 1<<20); err != nil || !slices.Equal(offsets, []int64{2}) {
		t.Fatalf("tiny tail: %v %v", offsets, err)
	}
}

func FuzzDecodeEntryBatches(f *testing.F) {
	var two []byte
	for _, e := range []*raftpb.Entry{tailEntryAt(3, "a"), tailEntryAt(4, "b", "c")} {
		two, _ = appendEntryBatch(two, e, 1)
	}
	f.Add(two)
	f.Add(two[:len(two)-1])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = DecodeEntryBatches(data, func(offset int64, values [][]byte) error {
			if offset < 0 || len(values) == 0 {
				t.Fatalf("decoded offset %d with %d values", offset, len(values))
			}
			return nil
		})
	})
}
