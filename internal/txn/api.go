package txn

import (
	"github.com/twmb/franz-go/pkg/kerr"
)

// The request methods below serve the transaction APIs. Kafka errors are
// returned as *kerr.Error values (nil: success), never as Go errors.

// InitProducerID handles InitProducerId with a transactional id. respond is
// called exactly once, before InitProducerID returns; when an ongoing
// transaction had to be aborted first, the answer is
// CONCURRENT_TRANSACTIONS and the abort's markers are written after it.
func (c *Coordinator) InitProducerID(transactionalID string, timeoutMs int32, expected *ProducerIDAndEpoch, respond func(producerID int64, epoch int16, code *kerr.Error)) {
	var job *MarkerJob
	var h *handle
	var s *Shard
	code := c.withShard(transactionalID, func(hh *handle, ss *Shard) {
		h, s = hh, ss
		res := s.InitProducerID(transactionalID, timeoutMs, expected, c.nowMs(), c.cfg.NewProducerID)
		if res.Code != nil {
			respond(NoProducerID, NoProducerEpoch, res.Code)
			return
		}
		var code *kerr.Error
		job, code = c.appendLocked(h, s, res.Write)
		switch {
		case code != nil:
			respond(NoProducerID, NoProducerEpoch, code)
		case res.Fenced:
			respond(NoProducerID, NoProducerEpoch, kerr.ConcurrentTransactions)
		default:
			respond(res.Write.Transit.ProducerID, res.Write.Transit.ProducerEpoch, nil)
		}
	})
	if code != nil {
		respond(NoProducerID, NoProducerEpoch, code)
		return
	}
	if job != nil {
		c.runJob(h, s, job)
	}
}

// AddPartitions adds partitions to a producer's transaction
// (AddPartitionsToTxn, AddOffsetsToTxn, and the implicit adds of Produce
// v12+ and TxnOffsetCommit v5+); tv is the client's transaction version.
func (c *Coordinator) AddPartitions(transactionalID string, producerID int64, epoch int16, parts []TopicPartition, tv int8) *kerr.Error {
	var result *kerr.Error
	code := c.withShard(transactionalID, func(h *handle, s *Shard) {
		w, code := s.AddPartitions(transactionalID, producerID, epoch, parts, tv, c.nowMs())
		if code != nil || w == nil {
			result = code
			return
		}
		_, result = c.appendLocked(h, s, w)
	})
	return cmpCode(code, result)
}

// VerifyPartitions answers whether partitions are in a producer's ongoing
// transaction (KIP-890 part 1); see Shard.VerifyPartitions.
func (c *Coordinator) VerifyPartitions(transactionalID string, producerID int64, epoch int16, parts []TopicPartition) (map[TopicPartition]*kerr.Error, *kerr.Error) {
	var out map[TopicPartition]*kerr.Error
	var result *kerr.Error
	code := c.withShard(transactionalID, func(_ *handle, s *Shard) {
		out, result = s.VerifyPartitions(transactionalID, producerID, epoch, parts)
	})
	return out, cmpCode(code, result)
}

// EndTxn commits or aborts a transaction. respond is called once the
// Prepare record is written (or with the error), before EndTxn returns; the
// markers are then written before EndTxn returns, as Kafka answers the
// client before its markers go out. ProducerID and epoch are what EndTxn
// v5+ answers: the producer's next epoch under transactions v2.
func (c *Coordinator) EndTxn(transactionalID string, producerID int64, epoch int16, commit bool, tv int8, respond func(producerID int64, epoch int16, code *kerr.Error)) {
	var job *MarkerJob
	var h *handle
	var s *Shard
	code := c.withShard(transactionalID, func(hh *handle, ss *Shard) {
		h, s = hh, ss
		res := s.EndTxn(transactionalID, producerID, epoch, commit, tv, c.nowMs(), c.cfg.NewProducerID)
		switch {
		case res.Code != nil:
			respond(NoProducerID, NoProducerEpoch, res.Code)
		case res.Write == nil:
			respond(res.ProducerID, res.ProducerEpoch, nil)
		default:
			var code *kerr.Error
			job, code = c.appendLocked(h, s, res.Write)
			if code != nil {
				respond(NoProducerID, NoProducerEpoch, code)
				return
			}
			m := s.txns[transactionalID]
			respond(m.ProducerID, m.ProducerEpoch, nil)
		}
	})
	if code != nil {
		respond(NoProducerID, NoProducerEpoch, code)
		return
	}
	if job != nil {
		c.runJob(h, s, job)
	}
}

// Describe returns the state of a transactional id (DescribeTransactions):
// TRANSACTIONAL_ID_NOT_FOUND when unknown.
func (c *Coordinator) Describe(transactionalID string) (Metadata, *kerr.Error) {
	if transactionalID == "" {
		return Metadata{}, kerr.InvalidRequest
	}
	var m Metadata
	var found bool
	if code := c.withShard(transactionalID, func(_ *handle, s *Shard) { m, found = s.Describe(transactionalID) }); code != nil {
		return Metadata{}, code
	}
	if !found {
		return Metadata{}, kerr.TransactionalIDNotFound
	}
	return m, nil
}

// List returns the transactions of every partition this broker leads
// (ListTransactions); COORDINATOR_LOAD_IN_PROGRESS while one is loading.
func (c *Coordinator) List(f ListFilter) ([]Listed, *kerr.Error) {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil, kerr.CoordinatorNotAvailable
	}
	handles := make([]*handle, 0, len(c.mu.shards))
	for _, h := range c.mu.shards {
		handles = append(handles, h)
	}
	c.mu.Unlock()
	var out []Listed
	now := c.nowMs()
	for _, h := range handles {
		s, code := h.lockShard()
		if code == kerr.CoordinatorLoadInProgress {
			return nil, code
		}
		if code != nil {
			continue
		}
		out = append(out, s.List(f, now)...)
		h.mu.Unlock()
	}
	return out, nil
}

// activeHandles returns the loaded partitions.
func (c *Coordinator) activeHandles() []*handle {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*handle, 0, len(c.mu.shards))
	for _, h := range c.mu.shards {
		out = append(out, h)
	}
	return out
}

// AbortTimedOut aborts, in every partition led, the ongoing transactions
// older than their timeout, fencing their producers. Start runs it every
// AbortTimedOutIntervalMs; tests may call it directly.
func (c *Coordinator) AbortTimedOut() {
	for _, h := range c.activeHandles() {
		s, code := h.lockShard()
		if code != nil {
			continue
		}
		var jobs []*MarkerJob
		for _, w := range s.TimedOut(c.nowMs(), c.cfg.NewProducerID) {
			c.log.Info("aborting timed-out transaction", "transactional_id", w.TransactionalID, "producer_id", w.Transit.ProducerID)
			job, code := c.appendLocked(h, s, w)
			if h.mu.shard != s {
				break
			}
			if code == nil && job != nil {
				jobs = append(jobs, job)
			}
		}
		h.mu.Unlock()
		for _, job := range jobs {
			c.runJob(h, s, job)
		}
	}
}

// ExpireTransactionalIDs removes the transactional ids idle for
// transactional.id.expiration.ms, writing their tombstones.
func (c *Coordinator) ExpireTransactionalIDs() {
	for _, h := range c.activeHandles() {
		s, code := h.lockShard()
		if code != nil {
			continue
		}
		for _, w := range s.Expire(c.nowMs()) {
			err := c.appendUnlocked(h, w.Key, nil)
			if h.mu.shard != s {
				break
			}
			if err != nil {
				s.Failed(w)
				continue
			}
			s.Applied(w, c.nowMs())
		}
		h.mu.Unlock()
	}
}
