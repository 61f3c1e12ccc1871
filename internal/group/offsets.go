package group

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commitOffsets handles OffsetCommit. Versions: v0 has no generation (a
// simple commit); v2-v4 may set a retention for the commit (stored as
// OffsetCommitValue v1 with an expire timestamp); v6+ carries the leader
// epoch; v7+ group.instance.id; v9+ answers GROUP_ID_NOT_FOUND rather than
// ILLEGAL_GENERATION for a member commit to a group that does not exist;
// v10+ names topics by ID.
//
// Behavior: a commit with generation -1 and no member id is accepted while
// the group is Empty, or creates a simple (protocol-less) group; a member
// commit must match the group's generation and is refused with
// REBALANCE_IN_PROGRESS while the leader's assignment is awaited. Offsets
// are visible to OffsetFetch only once their records are written.
func (s *shard) commitOffsets(now time.Time, req *kmsg.OffsetCommitRequest, respond func(*kmsg.OffsetCommitResponse)) {
	defer s.checkInvariants()
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	send := func() { s.reply(func() { respond(resp) }) }
	failAll := func(code int16) {
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				if resp.Topics[i].Partitions[j].ErrorCode == 0 {
					resp.Topics[i].Partitions[j].ErrorCode = code
				}
			}
		}
	}
	if code := s.validateCommit(req); code != 0 {
		failAll(code)
		send()
		return
	}
	if g := s.classic(req.Group); g != nil && (g.state == stateStable || g.state == statePreparingRebalance) {
		// A classic member's commits keep its session alive.
		if m := g.members[req.MemberID]; m != nil {
			s.scheduleHeartbeat(now, g, m.id, m.sessionTimeoutMs)
		}
	}

	nowMs := now.UnixMilli()
	expireMs := int64(-1)
	if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
		expireMs = nowMs + req.RetentionTimeMillis
	}
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
			v, code := s.commitValue(ok, p.Metadata, p.Offset, p.LeaderEpoch, req.Version >= 6, nowMs, expireMs)
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
		send()
		return
	}
	groupID := req.Group
	s.write(records, func(now time.Time, err error) {
		if err != nil {
			failAll(commitErrorCode(err))
			send()
			return
		}
		s.ensureSimpleGroup(groupID, now.UnixMilli())
		for _, c := range commits {
			s.putOffset(groupID, c.tp, c.value)
		}
		send()
	})
}

func (s *shard) validateCommit(req *kmsg.OffsetCommitRequest) int16 {
	if req.Group == "" {
		return kerr.InvalidGroupID.Code
	}
	g := s.groups[req.Group]
	if g == nil {
		switch {
		case req.Generation < 0:
			return 0 // the group is created with the offsets
		case req.Version >= 9:
			return kerr.GroupIDNotFound.Code
		default:
			return kerr.IllegalGeneration.Code
		}
	}
	return g.validateOffsetCommit(offsetCommitter{memberID: req.MemberID, instanceID: req.InstanceID,
		generation: req.Generation, version: req.Version})
}

// commitErrorCode maps a failed offsets append like appendErrorCode, except
// that an oversized batch is the commit's fault (INVALID_COMMIT_OFFSET_SIZE).
func commitErrorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) && (ke == kerr.MessageTooLarge || ke == kerr.RecordListTooLarge || ke == kerr.InvalidFetchSize) {
		return kerr.InvalidCommitOffsetSize.Code
	}
	return appendErrorCode(err)
}

// topicName returns the topic a v10+ request names by ID, or the name.
func (s *shard) topicName(version int16, name string, id [16]byte) (string, bool) {
	if version < 10 {
		return name, true
	}
	if s.config.Topics == nil {
		return "", false
	}
	return s.config.Topics.TopicName(id)
}

// utf16Len is the length Java's String.length() reports, which is what
// offset.metadata.max.bytes is compared against.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// fetchOffsets answers one group of an OffsetFetch (the v8+ shape; the
// driver converts for older versions). A nil topic list asks for every
// offset of the group. A group that does not exist answers offset -1 for
// each partition asked, without error, as Kafka does.
func (s *shard) fetchOffsets(version int16, req *kmsg.OffsetFetchRequestGroup) kmsg.OffsetFetchResponseGroup {
	out := kmsg.NewOffsetFetchResponseGroup()
	out.Group = req.Group
	if req.Group == "" {
		out.ErrorCode = kerr.InvalidGroupID.Code
		return out
	}
	if code := s.validateOffsetFetchMember(req); code != 0 {
		out.ErrorCode = code
		return out
	}
	var offsets map[topicPartition]offsetValue
	if g := s.groups[req.Group]; g != nil && g.stateName() != stateDead.String() {
		offsets = s.offsets[req.Group]
	}
	if req.Topics == nil {
		var current *kmsg.OffsetFetchResponseGroupTopic
		for _, tp := range sortedTopicPartitions(offsets) {
			if current == nil || current.Topic != tp.topic {
				t := kmsg.NewOffsetFetchResponseGroupTopic()
				t.Topic = tp.topic
				if version >= 10 {
					id, ok := s.topicID(tp.topic)
					if !ok {
						continue // a topic without ID cannot be named in v10+
					}
					t.TopicID = id
				}
				out.Topics = append(out.Topics, t)
				current = &out.Topics[len(out.Topics)-1]
			}
			current.Partitions = append(current.Partitions, fetchedPartition(tp.partition, offsets[tp], true))
		}
		return out
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetFetchResponseGroupTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		name, ok := s.topicName(version, t.Topic, t.TopicID)
		for _, p := range t.Partitions {
			v, found := offsets[topicPartition{topic: name, partition: p}]
			rp := fetchedPartition(p, v, found)
			if !ok {
				rp.ErrorCode = kerr.UnknownTopicID.Code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		out.Topics = append(out.Topics, rt)
	}
	return out
}

func (s *shard) topicID(name string) ([16]byte, bool) {
	if s.config.Topics == nil {
		return [16]byte{}, false
	}
	return s.config.Topics.TopicID(name)
}

func fetchedPartition(partition int32, v offsetValue, found bool) kmsg.OffsetFetchResponseGroupTopicPartition {
	p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
	p.Partition = partition
	if !found {
		p.Offset, p.LeaderEpoch, p.Metadata = -1, -1, stringPtr("")
		return p
	}
	p.Offset, p.LeaderEpoch, p.Metadata = v.offset, v.leaderEpoch, stringPtr(v.metadata)
	return p
}

func sortedTopicPartitions(m map[topicPartition]offsetValue) []topicPartition {
	out := make([]topicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	slices.SortFunc(out, func(a, b topicPartition) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	return out
}

// deleteOffsets handles OffsetDelete (v0): the offsets named are deleted
// unless the group is non-empty (NON_EMPTY_GROUP, but a consumer-protocol
// group may lose offsets of topics it does not consume) or consumes the topic
// (GROUP_SUBSCRIBED_TO_TOPIC).
func (s *shard) deleteOffsets(now time.Time, req *kmsg.OffsetDeleteRequest, respond func(*kmsg.OffsetDeleteResponse)) {
	defer s.checkInvariants()
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	send := func() { s.reply(func() { respond(resp) }) }
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		send()
		return
	}
	g := s.groups[req.Group]
	if g == nil {
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		send()
		return
	}
	if code := g.validateOffsetDelete(); code != 0 {
		resp.ErrorCode = code
		send()
		return
	}
	offsets := s.offsets[req.Group]
	var deleted []topicPartition
	var records []KV
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		subscribed := g.isSubscribedToTopic(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			tp := topicPartition{topic: t.Topic, partition: p.Partition}
			if subscribed {
				rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			} else if _, ok := offsets[tp]; ok && !slices.Contains(deleted, tp) {
				deleted = append(deleted, tp)
				records = append(records, offsetCommitKV(req.Group, tp.topic, tp.partition, nil))
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(records) == 0 {
		send()
		return
	}
	groupID := req.Group
	s.write(records, func(_ time.Time, err error) {
		if err != nil {
			resp.ErrorCode, resp.Topics = appendErrorCode(err), nil
			send()
			return
		}
		for _, tp := range deleted {
			s.removeOffset(groupID, tp)
		}
		send()
	})
}

func (s *shard) scheduleCleanup(now time.Time) {
	s.timers.schedule(&timer{
		key:      timerKey{kind: timerCleanup},
		deadline: now.Add(time.Duration(s.config.OffsetsRetentionCheckIntervalMs) * time.Millisecond),
	})
}

// cleanup expires offsets past offsets.retention.minutes and deletes the
// empty groups left without offsets (Kafka's cleanupGroupMetadata).
func (s *shard) cleanup(now time.Time) {
	s.scheduleCleanup(now)
	nowMs := now.UnixMilli()
	retentionMs := s.config.offsetsRetentionMs()
	type expiry struct {
		group string
		tp    topicPartition
	}
	var expired []expiry
	var deadGroups []string
	var records []KV
	for _, id := range s.sortedGroupIDs() {
		g := s.groups[id]
		allExpired := true
		if offsets := s.offsets[id]; len(offsets) > 0 {
			base, ok := g.offsetExpiryBase()
			if !ok {
				continue
			}
			for _, tp := range sortedTopicPartitions(offsets) {
				if g.isSubscribedToTopic(tp.topic) {
					allExpired = false
					continue
				}
				v := offsets[tp]
				isExpired := nowMs-base(v) >= retentionMs
				if v.expireTimestampMs >= 0 {
					isExpired = nowMs >= v.expireTimestampMs
				}
				if !isExpired {
					allExpired = false
					continue
				}
				expired = append(expired, expiry{id, tp})
				records = append(records, offsetCommitKV(id, tp.topic, tp.partition, nil))
			}
		}
		if allExpired && g.deletable() {
			deadGroups = append(deadGroups, id)
			records = append(records, s.groupTombstoneKVs(id)...)
		}
	}
	if len(records) == 0 {
		return
	}
	s.write(records, func(_ time.Time, err error) {
		if err != nil {
			s.log.Warn("failed to write expired offsets; retrying at the next check", "err", err)
			return
		}
		for _, e := range expired {
			s.removeOffset(e.group, e.tp)
		}
		for _, id := range deadGroups {
			if g := s.groups[id]; g != nil && g.deletable() {
				s.removeGroup(id)
			}
		}
		s.log.Info("removed expired offsets and groups", "offsets", len(expired), "groups", len(deadGroups))
	})
}

// deleteTopics drops every offset of the deleted topics.
func (s *shard) deleteTopics(topics []string) {
	defer s.checkInvariants()
	if len(topics) == 0 {
		return
	}
	type deletion struct {
		group string
		tp    topicPartition
	}
	var deleted []deletion
	var records []KV
	for _, id := range s.sortedGroupIDs() {
		for _, tp := range sortedTopicPartitions(s.offsets[id]) {
			if slices.Contains(topics, tp.topic) {
				deleted = append(deleted, deletion{id, tp})
				records = append(records, offsetCommitKV(id, tp.topic, tp.partition, nil))
			}
		}
	}
	if len(records) == 0 {
		return
	}
	s.write(records, func(_ time.Time, err error) {
		if err != nil {
			s.log.Warn("failed to delete offsets of deleted topics", "topics", topics, "err", err)
			return
		}
		for _, d := range deleted {
			s.removeOffset(d.group, d.tp)
		}
	})
}

// commitValue checks one partition of an offset commit (OffsetCommit or
// TxnOffsetCommit) and builds the value to store. It returns the
// partition's Kafka error code, 0 when the commit is valid. Versions without
// a leader epoch field store -1.
func (s *shard) commitValue(topicKnown bool, metadata *string, offset int64, leaderEpoch int32, hasLeaderEpoch bool, nowMs, expireMs int64) (offsetValue, int16) {
	switch {
	case !topicKnown:
		return offsetValue{}, kerr.UnknownTopicID.Code
	case metadata != nil && utf16Len(*metadata) > int(s.config.OffsetMetadataMaxBytes):
		return offsetValue{}, kerr.OffsetMetadataTooLarge.Code
	}
	v := offsetValue{offset: offset, leaderEpoch: leaderEpoch, commitTimestampMs: nowMs, expireTimestampMs: expireMs}
	if !hasLeaderEpoch {
		v.leaderEpoch = -1
	}
	if metadata != nil {
		v.metadata = *metadata
	}
	return v, 0
}
