package group

// Transactional offset commits (KIP-98, TxnOffsetCommit): a transactional
// producer commits its consumer group's offsets inside its transaction. They
// are written to __consumer_offsets as a transactional batch of the producer
// and kept pending, per producer id, until the transaction's marker reaches
// that partition: a COMMIT makes them the group's committed offsets, an
// ABORT drops them. Loading replays the same: pending offsets are held by
// producer until the partition's control batch for that producer, and those
// still pending at the end of the log stay pending.

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TxnStorage is implemented by a Storage that also writes transactional
// batches and reads back batch boundaries, which transactional offset
// commits need. Without it TxnOffsetCommit answers
// COORDINATOR_NOT_AVAILABLE and loading ignores transactions.
type TxnStorage interface {
	// AppendTxn appends records to partition p as one transactional batch
	// of producerID at epoch and returns the offset of the last one.
	// Kafka errors (INVALID_PRODUCER_EPOCH, ...) come back as *kerr.Error.
	AppendTxn(p int32, producerID int64, epoch int16, records []KV) (int64, error)
	// LoadBatches calls fn for every batch of partition p from the start,
	// in order, as Storage.Load does for records.
	LoadBatches(p int32, fn func(b LoadedBatch) error) error
}

// LoadedBatch is one batch of __consumer_offsets read back while loading.
type LoadedBatch struct {
	ProducerID    int64
	Transactional bool
	// Control is set for a transaction marker; Commit says which kind.
	Control bool
	Commit  bool
	// Records are a data batch's records.
	Records []KV
}

// pendingTxnOffsets are the transactional offset commits awaiting their
// marker, by producer id, then group and partition (Kafka's
// pendingTransactionalOffsetCommits). The zero value is empty.
type pendingTxnOffsets struct {
	byProducer map[int64]map[string]map[topicPartition]offsetValue
}

func (t *pendingTxnOffsets) add(producerID int64, groupID string, tp topicPartition, v offsetValue) {
	if t.byProducer == nil {
		t.byProducer = map[int64]map[string]map[topicPartition]offsetValue{}
	}
	groups := t.byProducer[producerID]
	if groups == nil {
		groups = map[string]map[topicPartition]offsetValue{}
		t.byProducer[producerID] = groups
	}
	if groups[groupID] == nil {
		groups[groupID] = map[topicPartition]offsetValue{}
	}
	groups[groupID][tp] = v
}

// pending reports whether any producer has an offset of tp pending for the
// group.
func (t *pendingTxnOffsets) pending(groupID string, tp topicPartition) bool {
	for _, groups := range t.byProducer {
		if _, ok := groups[groupID][tp]; ok {
			return true
		}
	}
	return false
}

// completeTxnOffsets applies a marker for producerID: on commit its pending
// offsets become committed (creating simple groups as a plain commit does),
// on abort they go.
func (s *shard) completeTxnOffsets(producerID int64, commit bool, nowMs int64) {
	defer s.checkInvariants()
	groups := s.txnOffsets.byProducer[producerID]
	delete(s.txnOffsets.byProducer, producerID)
	if !commit {
		return
	}
	for _, groupID := range slices.Sorted(maps.Keys(groups)) {
		s.ensureSimpleGroup(groupID, nowMs)
		for tp, v := range groups[groupID] {
			s.putOffset(groupID, tp, v)
		}
	}
}

// validateTxnOffsetCommit is Kafka's validateTransactionalOffsetCommit: a
// group that does not exist is created by a commit without generation
// (simple consumers); otherwise the group validates the commit as
// transactional, and a stale member epoch answers ILLEGAL_GENERATION.
func (s *shard) validateTxnOffsetCommit(req *kmsg.TxnOffsetCommitRequest) int16 {
	g := s.groups[req.Group]
	if g == nil {
		if req.Generation < 0 {
			return 0
		}
		return kerr.IllegalGeneration.Code
	}
	code := g.validateOffsetCommit(offsetCommitter{memberID: req.MemberID, instanceID: req.InstanceID,
		generation: req.Generation, transactional: true, version: req.Version})
	if code == kerr.StaleMemberEpoch.Code {
		return kerr.IllegalGeneration.Code
	}
	return code
}

// TxnOffsetCommit handles the group side of TxnOffsetCommit (API key 28,
// v0-v5): the offsets are written as a transactional batch of the producer
// and stay pending until the transaction's marker. The caller has checked
// (or, v5+, made) the __consumer_offsets partition part of the producer's
// transaction with the transaction coordinator.
func (c *Coordinator) TxnOffsetCommit(req *kmsg.TxnOffsetCommitRequest, respond func(*kmsg.TxnOffsetCommitResponse)) {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	failAll := func(code int16) {
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				if resp.Topics[i].Partitions[j].ErrorCode == 0 {
					resp.Topics[i].Partitions[j].ErrorCode = code
				}
			}
		}
	}
	if req.Group == "" {
		failAll(kerr.InvalidGroupID.Code)
		respond(resp)
		return
	}
	ts, ok := c.storage.(TxnStorage)
	if !ok {
		failAll(kerr.CoordinatorNotAvailable.Code)
		respond(resp)
		return
	}
	code := c.run(req.Group, func(s *shard, now time.Time) {
		defer s.reply(func() { respond(resp) })
		if code := s.validateTxnOffsetCommit(req); code != 0 {
			failAll(code)
			return
		}
		nowMs := now.UnixMilli()
		type commit struct {
			tp    topicPartition
			value offsetValue
		}
		var commits []commit
		var records []KV
		for i, t := range req.Topics {
			name, ok := s.topicName(req.Version, t.Topic, t.TopicID)
			for j, p := range t.Partitions {
				rp := &resp.Topics[i].Partitions[j]
				v, code := s.commitValue(ok, p.Metadata, p.Offset, p.LeaderEpoch, req.Version >= 2, nowMs, -1)
				if code != 0 {
					rp.ErrorCode = code
				} else {
					tp := topicPartition{topic: name, partition: p.Partition}
					commits = append(commits, commit{tp, v})
					records = append(records, offsetCommitKV(req.Group, name, p.Partition, &v))
				}
			}
		}
		if len(records) == 0 {
			return
		}
		if _, err := ts.AppendTxn(s.partition, req.ProducerID, req.ProducerEpoch, records); err != nil {
			failAll(txnCommitErrorCode(err))
			return
		}
		for _, cm := range commits {
			s.txnOffsets.add(req.ProducerID, req.Group, cm.tp, cm.value)
		}
	})
	if code != 0 {
		failAll(code)
		respond(resp)
	}
}

// txnCommitErrorCode maps a failed transactional append: producer errors
// reach the client as they are, storage errors as for plain commits.
func txnCommitErrorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke {
		case kerr.InvalidProducerEpoch, kerr.ProducerFenced, kerr.InvalidTxnState, kerr.InvalidProducerIDMapping:
			return ke.Code
		}
	}
	return commitErrorCode(err)
}

// CompleteTransaction applies a transaction marker just written to
// __consumer_offsets partition p for producerID: its pending offsets are
// committed or dropped. While p is loading the completion waits for the
// load to finish, so a marker written during the load is not lost.
func (c *Coordinator) CompleteTransaction(p int32, producerID int64, commit bool) {
	c.mu.Lock()
	part := c.mu.partitions[p]
	c.mu.Unlock()
	if part == nil {
		return // not led here: whoever loads the partition replays the marker
	}
	part.mu.Lock()
	if part.mu.status == partitionLoading {
		part.mu.txnDone = append(part.mu.txnDone, txnCompletion{producerID: producerID, commit: commit})
		part.mu.Unlock()
		return
	}
	part.mu.Unlock()
	c.runOn(part, func(s *shard, now time.Time) { s.completeTxnOffsets(producerID, commit, now.UnixMilli()) })
}

// txnCompletion is a marker that arrived while its partition loaded.
type txnCompletion struct {
	producerID int64
	commit     bool
}

// applyLoadedCompletionsLocked applies the markers that arrived during the
// load; one the load already replayed finds nothing pending. Called with
// p.mu held, once the shard is active.
func (c *Coordinator) applyLoadedCompletionsLocked(p *partition, s *shard, now time.Time) {
	for _, d := range p.mu.txnDone {
		s.completeTxnOffsets(d.producerID, d.commit, now.UnixMilli())
	}
	p.mu.txnDone = nil
}

// loadRecords replays partition p into s: batch by batch when the storage
// can tell transactions apart, else record by record.
func (c *Coordinator) loadRecords(p *partition, s *shard, records *int) error {
	ts, ok := c.storage.(TxnStorage)
	if !ok {
		return c.storage.Load(p.id, func(_ int64, key, value []byte) error {
			if p.abandoned.Load() {
				return errLoadAbandoned
			}
			*records++
			return s.replay(key, value)
		})
	}
	return ts.LoadBatches(p.id, func(b LoadedBatch) error {
		if p.abandoned.Load() {
			return errLoadAbandoned
		}
		if b.Control {
			// Marker times are not in the batch we are given; a
			// committed offset keeps its commit timestamp.
			s.completeTxnOffsets(b.ProducerID, b.Commit, -1)
			return nil
		}
		for _, kv := range b.Records {
			*records++
			if b.Transactional {
				if err := s.replayTxn(b.ProducerID, kv.Key, kv.Value); err != nil {
					return err
				}
				continue
			}
			if err := s.replay(kv.Key, kv.Value); err != nil {
				return err
			}
		}
		return nil
	})
}

// replayTxn applies a transactional record read back while loading: an
// offset commit goes pending under its producer.
func (s *shard) replayTxn(producerID int64, key, value []byte) error {
	r, err := DecodeRecord(key, value)
	if errors.Is(err, ErrUnknownRecordType) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.OffsetCommitKey == nil || r.OffsetCommitValue == nil {
		return s.replay(key, value)
	}
	k := r.OffsetCommitKey
	s.txnOffsets.add(producerID, k.Group, topicPartition{topic: k.Topic, partition: k.Partition}, offsetValueFromRecord(r.OffsetCommitValue))
	return nil
}

// markUnstableOffsets answers UNSTABLE_OFFSET_COMMIT for the partitions of
// an OffsetFetch with require_stable (KIP-447) that have transactional
// offsets pending, so a consumer taking over the partitions waits for the
// transaction rather than reading an offset about to change.
func (s *shard) markUnstableOffsets(out *kmsg.OffsetFetchResponseGroup, requireStable bool) {
	if !requireStable || out.ErrorCode != 0 || len(s.txnOffsets.byProducer) == 0 {
		return
	}
	for i := range out.Topics {
		t := &out.Topics[i]
		name := t.Topic
		if name == "" {
			if n, ok := s.topicName(10, "", t.TopicID); ok {
				name = n
			}
		}
		for j := range t.Partitions {
			if s.txnOffsets.pending(out.Group, topicPartition{topic: name, partition: t.Partitions[j].Partition}) {
				t.Partitions[j].ErrorCode = kerr.UnstableOffsetCommit.Code
			}
		}
	}
}
