package quorum

import (
	"fmt"
	"sync"

	"go.etcd.io/raft/v3/raftpb"
)

// Observers (brokers that are not voters) follow the metadata log by
// fetching the entries this voter has applied. The voter keeps the latest
// applied entries in memory, encoded as the entry batches of the log (see the
// package doc), so a fetch is a copy out of that tail; a fetch for an offset
// older than the tail needs a snapshot of the state machine first.

// committedTail is the latest applied entries, for observers. It is written
// by the run goroutine and read by fetch handlers.
type committedTail struct {
	// maxBytes bounds the batches kept (metadata.log.max.record.bytes.between.snapshots).
	maxBytes int

	mu struct {
		sync.Mutex
		// from is the first offset the tail answers for: every applied
		// entry at or after it is in entries.
		from int64
		// end is the offset after the last applied entry.
		// Invariant: from <= end.
		end     int64
		entries []tailEntry
		bytes   int
		// applied is closed and replaced whenever end moves.
		applied chan struct{}
	}
}

type tailEntry struct {
	offset int64
	batch  []byte
}

func newCommittedTail(maxBytes int) *committedTail {
	t := &committedTail{maxBytes: maxBytes}
	t.mu.applied = make(chan struct{})
	return t
}

// reset empties the tail: the state now holds every entry before end (a
// snapshot was restored), and only entries from end on are kept.
func (t *committedTail) reset(end int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.from, t.mu.end = end, end
	t.mu.entries, t.mu.bytes = nil, 0
	close(t.mu.applied)
	t.mu.applied = make(chan struct{})
}

// add records that e was applied; empty and configuration entries only move
// the end.
func (t *committedTail) add(e *raftpb.Entry, nowMs int64) error {
	offset := int64(e.GetIndex()) - 1
	var batch []byte
	if e.GetType() == raftpb.EntryNormal && len(e.GetData()) > 0 {
		var err error
		if batch, err = appendEntryBatch(nil, e, nowMs); err != nil {
			return err
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if batch != nil {
		t.mu.entries = append(t.mu.entries, tailEntry{offset: offset, batch: batch})
		t.mu.bytes += len(batch)
		// Keep at least the newest entry, so the tail always answers at its end.
		for t.mu.bytes > t.maxBytes && len(t.mu.entries) > 1 {
			t.mu.bytes -= len(t.mu.entries[0].batch)
			t.mu.from = t.mu.entries[0].offset + 1
			t.mu.entries[0] = tailEntry{}
			t.mu.entries = t.mu.entries[1:]
		}
	}
	t.mu.end = offset + 1
	close(t.mu.applied)
	t.mu.applied = make(chan struct{})
	return nil
}

// ErrOffsetBeforeTail answers a read for an offset the tail no longer holds:
// the reader needs a snapshot of the state first.
var ErrOffsetBeforeTail = fmt.Errorf("quorum: offset is older than the entries kept for observers")

// Committed is what ReadCommitted found.
type Committed struct {
	// Batches are the entry batches from the offset read on, back to back,
	// in the log's format (DecodeEntryBatches reads them).
	Batches []byte
	// End is the offset after the last entry this voter has applied: the
	// observer's high watermark.
	End int64
	// Applied is closed when an entry after End is applied; a reader with
	// nothing new waits on it.
	Applied <-chan struct{}
}

// ReadCommitted returns the entries this voter has applied at offsets from
// offset on, at most maxBytes of them but always at least one whole entry
// when there is one. An offset before the tail gives ErrOffsetBeforeTail.
func (q *Quorum) ReadCommitted(offset int64, maxBytes int) (Committed, error) {
	t := q.tail
	t.mu.Lock()
	defer t.mu.Unlock()
	c := Committed{End: t.mu.end, Applied: t.mu.applied}
	if offset < t.mu.from {
		return c, fmt.Errorf("%w: %d, the tail starts at %d", ErrOffsetBeforeTail, offset, t.mu.from)
	}
	for _, e := range t.mu.entries {
		if e.offset < offset {
			continue
		}
		if len(c.Batches) > 0 && len(c.Batches)+len(e.batch) > maxBytes {
			break
		}
		c.Batches = append(c.Batches, e.batch...)
	}
	return c, nil
}

// DecodeEntryBatches reads entry batches as ReadCommitted returns them and
// calls fn with each entry's offset and the values its Propose gave, in
// order. Entries with no values (a leader's no-op) are skipped.
func DecodeEntryBatches(batches []byte, fn func(offset int64, values [][]byte) error) error {
	for len(batches) > 0 {
		size, err := parseBatchSize(batches)
		if err != nil {
			return err
		}
		e, err := decodeEntryBatch(batches[:size])
		if err != nil {
			return err
		}
		batches = batches[size:]
		if e.GetType() != raftpb.EntryNormal || len(e.GetData()) == 0 {
			continue
		}
		_, values, err := decodeProposal(e.GetData())
		if err != nil {
			return err
		}
		if err := fn(int64(e.GetIndex())-1, values); err != nil {
			return err
		}
	}
	return nil
}
