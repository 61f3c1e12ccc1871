package partition

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/record"
)

// producerBatchCacheSize is how many recent batches per producer are kept to
// recognise retries; it matches max.in.flight.requests.per.connection's upper
// bound for idempotent producers (5), as in Kafka.
const producerBatchCacheSize = 5

// producerState is what the partition remembers of one producer id.
type producerState struct {
	epoch   int16
	batches [producerBatchCacheSize]cachedBatch
	count   int // number of valid entries, newest at (next-1)
	next    int
}

type cachedBatch struct {
	firstSeq, lastSeq       int32
	firstOffset, lastOffset int64
}

func (s *producerState) last() *cachedBatch {
	if s.count == 0 {
		return nil
	}
	return &s.batches[(s.next+producerBatchCacheSize-1)%producerBatchCacheSize]
}

func (s *producerState) record(h record.Header, baseOffset int64) {
	if h.ProducerEpoch != s.epoch {
		s.epoch = h.ProducerEpoch
		s.count, s.next = 0, 0
	}
	s.batches[s.next] = cachedBatch{
		firstSeq: h.BaseSequence, lastSeq: lastSequence(h),
		firstOffset: baseOffset, lastOffset: baseOffset + int64(h.LastOffsetDelta),
	}
	s.next = (s.next + 1) % producerBatchCacheSize
	if s.count < producerBatchCacheSize {
		s.count++
	}
}

// lastSequence is the sequence of the batch's last record; sequences wrap
// from MaxInt32 to 0.
func lastSequence(h record.Header) int32 {
	last := int64(h.BaseSequence) + int64(h.LastOffsetDelta)
	if last > math.MaxInt32 {
		last -= math.MaxInt32 + 1
	}
	return int32(last)
}

func nextSequence(seq int32) int32 {
	if seq == math.MaxInt32 {
		return 0
	}
	return seq + 1
}

// checkProducerLocked applies Kafka's idempotence rules to a batch. It
// returns the state to update after the append, a cached batch if this batch
// is a retry of one already written, or the error to answer.
func (p *Partition) checkProducerLocked(h record.Header) (*producerState, *cachedBatch, *kerr.Error) {
	s := p.mu.producers[h.ProducerID]
	if s == nil {
		// An unknown producer (new, or its state expired or was not
		// rebuilt) may start at any sequence, as in Kafka.
		s = &producerState{epoch: h.ProducerEpoch}
		p.mu.producers[h.ProducerID] = s
		return s, nil, nil
	}
	switch {
	case h.ProducerEpoch < s.epoch:
		return nil, nil, kerr.InvalidProducerEpoch
	case h.ProducerEpoch > s.epoch:
		if h.BaseSequence != 0 {
			return nil, nil, kerr.OutOfOrderSequenceNumber
		}
		return s, nil, nil
	}
	last := lastSequence(h)
	for i := 0; i < s.count; i++ {
		b := &s.batches[i]
		if b.firstSeq == h.BaseSequence && b.lastSeq == last {
			return nil, b, nil
		}
	}
	if prev := s.last(); prev != nil && h.BaseSequence != nextSequence(prev.lastSeq) {
		return nil, nil, kerr.OutOfOrderSequenceNumber
	}
	return s, nil, nil
}
