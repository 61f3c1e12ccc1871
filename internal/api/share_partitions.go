package api

// The share-partition leader's side of share groups (KIP-932): the share
// sessions and share-partitions this node serves, reading records from a
// partition's log to acquire them, and applying acknowledgements. The state
// machines are internal/share's; this file feeds them the log and the
// clock.

import (
	"errors"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/share"
)

// shareState is the broker's share sessions and share-partitions, made on
// first use with the limits of the configuration then.
type shareState struct {
	once       sync.Once
	sessions   *share.Sessions
	partitions *share.Manager
}

func (b *Broker) shares() *shareState {
	s := &b.share
	s.once.Do(func() {
		cfg := b.Config().Share
		s.partitions = share.NewManager()
		s.sessions = share.NewSessions(int(cfg.MaxShareSessions), int64(cfg.SessionTimeoutMs), func(k share.SessionKey, evicted *share.Session) {
			// Called with the cache locked: release without touching it.
			for _, tp := range evicted.Partitions {
				s.partitions.Peek(share.Key{Group: k.Group, TopicID: tp.TopicID, Partition: tp.Partition}, func(sp *share.Partition) { sp.ReleaseMember(k.Member) })
			}
		})
	})
	return s
}

// sharesEnabled reports whether share groups are served: group.share.enable
// is on and the finalized share.version is at least 1.
func (b *Broker) sharesEnabled() bool {
	return b.Config().Share.Enable && b.Image().FeatureLevel(metadata.ShareVersionFeature) >= 1
}

// ReleaseShareMember releases every record member of group holds on this
// node (it left the group or its session expired).
func (b *Broker) ReleaseShareMember(group, member string) {
	b.shares().partitions.ReleaseMember(group, member)
	b.shares().sessions.Remove(share.SessionKey{Group: group, Member: member})
}

// ForgetShareGroup drops the share-partitions of a deleted group, and
// their durable state in the __share_group_state partitions this node
// leads (state on other nodes' partitions stays until
// DeleteShareGroupOffsets).
func (b *Broker) ForgetShareGroup(group string) {
	b.shares().partitions.Forget(func(k share.Key) bool { return k.Group == group })
	if b.ShareStates == nil {
		return
	}
	t := b.Image().Topic(controller.ShareGroupStateTopic)
	if t == nil {
		return
	}
	for _, p := range t.Partitions {
		if p.Leader != b.NodeID {
			continue
		}
		for _, key := range b.ShareStates.Keys(p.Partition, func(k share.Key) bool { return k.Group == group }) {
			b.ShareStates.Delete(p.Partition, key)
		}
	}
}

// shareGroupSettings are a share group's settings now: the broker's
// group.share.* keys with the group's configs (share.record.lock.duration.ms,
// share.auto.offset.reset, share.isolation.level) over them.
type shareGroupSettings struct {
	partition     share.Config
	earliest      bool
	readCommitted bool
}

func (b *Broker) shareSettings(group string) shareGroupSettings {
	cfg := b.Config()
	overrides := b.Image().Configs(metadata.ResourceGroup, group)
	lockMs, err := strconv.ParseInt(cfg.GroupValue(overrides, "share.record.lock.duration.ms"), 10, 32)
	if err != nil {
		lockMs = int64(cfg.Share.RecordLockDurationMs)
	}
	return shareGroupSettings{
		partition: share.Config{
			RecordLockDurationMs: lockMs,
			DeliveryCountLimit:   int16(cfg.Share.DeliveryCountLimit),
			MaxRecordLocks:       int64(cfg.Share.PartitionMaxRecordLocks),
		},
		earliest:      cfg.GroupValue(overrides, "share.auto.offset.reset") == "earliest",
		readCommitted: cfg.GroupValue(overrides, "share.isolation.level") == "read_committed",
	}
}

// sharePartitionTarget is a topic-partition a share request names,
// resolved against this node.
type sharePartitionTarget struct {
	topicID   [16]byte
	topic     string
	partition int32
	// p is the partition when this node leads it.
	p *partition.Partition
	// code is why it cannot be served here, or 0.
	code int16
}

func (b *Broker) resolveSharePartition(img *metadata.Image, topicID [16]byte, index int32) sharePartitionTarget {
	t := sharePartitionTarget{topicID: topicID, partition: index}
	topic := img.TopicByID(metadata.UUID(topicID))
	if topic == nil {
		t.code = kerr.UnknownTopicID.Code
		return t
	}
	t.topic = topic.Name
	if index < 0 || int(index) >= len(topic.Partitions) {
		t.code = kerr.UnknownTopicOrPartition.Code
		return t
	}
	t.p = b.Partitions.Get(topic.Name, index)
	if t.p == nil {
		t.code = kerr.NotLeaderForPartition.Code
	}
	return t
}

// currentLeader is the partition's leader and epoch from the image, for a
// NOT_LEADER_OR_FOLLOWER answer.
func currentLeader(img *metadata.Image, t sharePartitionTarget) (leader, epoch int32) {
	if topic := img.TopicByID(metadata.UUID(t.topicID)); topic != nil && int(t.partition) < len(topic.Partitions) && t.partition >= 0 {
		p := topic.Partitions[t.partition]
		return p.Leader, p.LeaderEpoch
	}
	return -1, -1
}

// withSharePartition runs fn on the share-partition of group on t. A
// share-partition is made from its durable state, or, never initialized,
// at the log end (share.auto.offset.reset=latest, Kafka's default;
// earliest: the log start) and initialized so; one loaded under an older
// leader epoch is reloaded, as another leader may have moved it meanwhile.
// What fn changes is persisted before withSharePartition returns, after
// the share-partition's lock is released (persistSharePartition).
func (b *Broker) withSharePartition(group string, t sharePartitionTarget, nowMs int64, fn func(sp *share.Partition)) int16 {
	key := share.Key{Group: group, TopicID: t.topicID, Partition: t.partition}
	settings := b.shareSettings(group)
	cfg := settings.partition
	leaderEpoch := t.p.LeaderEpoch()
	var reloadCode int16
	code := b.shares().partitions.Do(key, func() (*share.Partition, int16) {
		return b.loadSharePartition(key, settings, t, leaderEpoch)
	}, func(sp *share.Partition) {
		if sp.LeaderEpoch() != leaderEpoch {
			fresh, code := b.loadSharePartition(key, settings, t, leaderEpoch)
			if code != 0 {
				reloadCode = code
				return
			}
			*sp = *fresh
		}
		sp.SetConfig(cfg)
		sp.Tick(nowMs)
		if start := t.p.Log.LogStartOffset(); start > sp.StartOffset() {
			sp.AdvanceTo(start)
		}
		fn(sp)
	})
	if code != 0 {
		return code
	}
	if reloadCode != 0 {
		return reloadCode
	}
	return b.persistSharePartition(key)
}

// loadSharePartition makes key's share-partition from its durable state.
func (b *Broker) loadSharePartition(key share.Key, settings shareGroupSettings, t sharePartitionTarget, leaderEpoch int32) (*share.Partition, int16) {
	state, found, code := b.readShareState(key, leaderEpoch)
	if code != 0 {
		return nil, code
	}
	start := t.p.HighWatermark()
	if settings.earliest {
		start = t.p.Log.LogStartOffset()
	}
	sp := share.NewPartition(settings.partition, start)
	sp.SetLeaderEpoch(leaderEpoch)
	if found && state.StartOffset >= 0 {
		sp.Restore(state.StartOffset, state.StateEpoch, state.Batches)
		start, batches, _ := sp.PendingWrite()
		sp.MarkWritten(start, batches)
		return sp, 0
	}
	return sp, 0 // the first write initializes the durable state
}

// shareAcquired is what one partition acquired for a member.
type shareAcquired struct {
	records  []byte
	acquired []share.AcquiredRange
	code     int16
}

// acquireShareRecords reads t's log from where its share-partition can
// acquire and acquires up to maxRecords records within maxBytes for member.
func (b *Broker) acquireShareRecords(group, member string, t sharePartitionTarget, maxBytes int32, maxRecords int, nowMs int64) shareAcquired {
	var out shareAcquired
	readCommitted := b.shareSettings(group).readCommitted
	code := b.withSharePartition(group, t, nowMs, func(sp *share.Partition) {
		if !sp.CanAcquire() {
			return
		}
		from := sp.FetchOffset()
		upper := t.p.HighWatermark()
		if readCommitted {
			upper = t.p.LastStableOffset()
		}
		if from >= upper {
			return
		}
		rr, err := t.p.Log.Read(from, max(maxBytes, 1), upper, true)
		if errors.Is(err, log.ErrOffsetOutOfRange) {
			sp.AdvanceTo(t.p.Log.LogStartOffset())
			return
		}
		if err != nil {
			out.code = storageCode(err)
			return
		}
		data, err := rr.AppendTo(nil)
		if err != nil {
			out.code = storageCode(err)
			return
		}
		batches, spans, err := shareBatches(data)
		if err != nil {
			out.code = kerr.CorruptMessage.Code
			return
		}
		var aborted []share.AbortedTxn
		if readCommitted {
			end, err := rr.NextOffset()
			if err == nil {
				var txns []log.AbortedTxn
				if txns, err = t.p.CollectAbortedTxns(from, end); err == nil {
					for _, a := range txns {
						aborted = append(aborted, share.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset, LastOffset: a.LastOffset})
					}
				}
			}
			if err != nil {
				out.code = storageCode(err)
				return
			}
		}
		out.acquired = sp.Acquire(member, batches, aborted, readCommitted, maxRecords, nowMs)
		out.records = batchesCovering(data, batches, spans, out.acquired)
	})
	if code != 0 {
		out.code = code
	}
	return out
}

func storageCode(err error) int16 {
	if errors.Is(err, log.ErrStorage) {
		return kerr.KafkaStorageError.Code
	}
	return kerr.UnknownServerError.Code
}

// shareBatches parses the batch headers of a record set read from the log,
// with each batch's byte span.
func shareBatches(data []byte) ([]share.Batch, [][2]int, error) {
	var batches []share.Batch
	var spans [][2]int
	for pos := 0; pos < len(data); {
		h, err := record.ParseHeader(data[pos:])
		if err != nil {
			return nil, nil, err
		}
		size := h.Size()
		if size <= 0 || pos+size > len(data) {
			return nil, nil, errors.New("api: truncated record batch")
		}
		batches = append(batches, share.Batch{BaseOffset: h.BaseOffset, LastOffset: h.LastOffset(), ProducerID: h.ProducerID, Transactional: h.IsTransactional(), Control: h.IsControl()})
		spans = append(spans, [2]int{pos, pos + size})
		pos += size
	}
	return batches, spans, nil
}

// batchesCovering returns the bytes of the batches holding any acquired
// offset: the client keeps the acquired records of each and drops the
// rest.
func batchesCovering(data []byte, batches []share.Batch, spans [][2]int, acquired []share.AcquiredRange) []byte {
	if len(acquired) == 0 {
		return nil
	}
	first, last := -1, -1
	for i, b := range batches {
		for _, a := range acquired {
			if a.FirstOffset <= b.LastOffset && a.LastOffset >= b.BaseOffset {
				if first < 0 {
					first = i
				}
				last = i
				break
			}
		}
	}
	if first < 0 {
		return nil
	}
	return data[spans[first][0]:spans[last][1]]
}

// shareAckBatch converts one wire acknowledgement batch.
func shareAckBatch(first, last int64, types []int8) share.AckBatch {
	out := share.AckBatch{FirstOffset: first, LastOffset: last, Types: make([]share.AckType, len(types))}
	for i, t := range types {
		out.Types[i] = share.AckType(t)
	}
	return out
}

// acknowledgeShare applies member's acknowledgements to t's share-partition.
func (b *Broker) acknowledgeShare(group, member string, t sharePartitionTarget, batches []share.AckBatch, isRenew bool, nowMs int64) int16 {
	if t.code != 0 {
		return t.code
	}
	code := int16(0)
	key := share.Key{Group: group, TopicID: t.topicID, Partition: t.partition}
	found := b.shares().partitions.Peek(key, func(sp *share.Partition) {
		sp.Tick(nowMs)
		code = sp.Acknowledge(member, batches, isRenew, nowMs)
	})
	switch {
	case !found:
		return kerr.InvalidRecordState.Code
	case code != 0:
		return code
	}
	return b.persistSharePartition(key)
}

// releaseShareSession releases what member holds on the partitions of a
// closed share session.
func (b *Broker) releaseShareSession(group, member string, s *share.Session) {
	if s == nil {
		return
	}
	for _, tp := range s.Partitions {
		b.shares().partitions.Peek(share.Key{Group: group, TopicID: tp.TopicID, Partition: tp.Partition}, func(sp *share.Partition) { sp.ReleaseMember(member) })
	}
}

// shareLockDeadline is the earliest lock timeout among the share-partitions
// of group on the session's partitions, if any.
func (b *Broker) shareLockDeadline(group string, tps []share.TopicPartition) (int64, bool) {
	var next int64
	found := false
	for _, tp := range tps {
		b.shares().partitions.Peek(share.Key{Group: group, TopicID: tp.TopicID, Partition: tp.Partition}, func(sp *share.Partition) {
			if d, ok := sp.NextDeadline(); ok && (!found || d < next) {
				next, found = d, true
			}
		})
	}
	return next, found
}

// shareNodeEndpoints lists the leaders named by NOT_LEADER_OR_FOLLOWER
// answers, as ShareFetch and ShareAcknowledge carry them, on the listener
// the request came in on.
func shareNodeEndpoints(c *call, img *metadata.Image, leaders map[int32]bool) []kmsg.ShareFetchResponseNodeEndpoint {
	var out []kmsg.ShareFetchResponseNodeEndpoint
	for _, br := range brokerList(img, c.req.Conn.Listener) {
		if leaders[br.NodeID] {
			e := kmsg.NewShareFetchResponseNodeEndpoint()
			e.NodeID, e.Host, e.Port, e.Rack = br.NodeID, br.Host, br.Port, br.Rack
			out = append(out, e)
		}
	}
	return out
}

// SharePartitionStartOffset is the share-partition start offset of group on
// a topic-partition, if this node has the share-partition.
func (b *Broker) SharePartitionStartOffset(group string, topicID [16]byte, partition int32) (int64, bool) {
	var start int64
	ok := b.shares().partitions.Peek(share.Key{Group: group, TopicID: topicID, Partition: partition}, func(sp *share.Partition) { start = sp.StartOffset() })
	return start, ok
}

// ShareAcquiredCount is the number of records of group acquired now on a
// topic-partition of this node.
func (b *Broker) ShareAcquiredCount(group string, topicID [16]byte, partition int32) int {
	n := 0
	b.shares().partitions.Peek(share.Key{Group: group, TopicID: topicID, Partition: partition}, func(sp *share.Partition) { n = sp.InFlightCount() })
	return n
}
