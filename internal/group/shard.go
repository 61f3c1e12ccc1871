package group

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxTimersPerTick bounds the timers one tick fires, so that a timer that
// keeps rescheduling itself at the same instant (a zero rebalance timeout)
// cannot hold the partition forever; the rest fire on the next tick.
const maxTimersPerTick = 10000

// shard is the deterministic core for one __consumer_offsets partition: the
// groups whose ids hash to it and their committed offsets. It does no I/O and
// reads no clock; every step takes now. What a step asks of the world leaves
// through three queues the driver drains after each step, in this order:
//
//  1. nextWrite/writeDone: records to append to the partition, one batch
//     at a time; the outcome is reported back and may enqueue more.
//  2. takeReplies: responses to deliver, each a closure calling a request's
//     respond callback. A response that depends on a write is only enqueued
//     once the write is done.
//  3. nextDeadline/tick: the earliest timer; tick fires the expired ones.
//
// A shard is not safe for concurrent use; the driver serializes access.
type shard struct {
	partition int32
	config    Config
	log       *slog.Logger

	groups map[string]group
	// offsets holds committed offsets by group id.
	// Invariant: every key of offsets is a key of groups, and no inner map
	// is empty.
	offsets map[string]map[topicPartition]offsetValue
	timers  timerQueue

	// writes are the appends the driver still has to make, oldest first.
	writes []*pendingWrite
	// replies are the responses ready to deliver, oldest first.
	replies []func()
	// txnOffsets are transactional offset commits awaiting their marker.
	txnOffsets pendingTxnOffsets
}

type topicPartition struct {
	topic     string
	partition int32
}

type pendingWrite struct {
	records []KV
	// done runs once the records are appended (err nil) or failed to be.
	done func(now time.Time, err error)
}

func newShard(partition int32, cfg Config) *shard {
	return &shard{
		partition: partition,
		config:    cfg,
		log:       cfg.logger().With("component", "group-coordinator", "partition", partition),
		groups:    make(map[string]group),
		offsets:   make(map[string]map[topicPartition]offsetValue),
		timers:    newTimerQueue(),
	}
}

// nextWrite returns the records of the oldest pending write, or nil.
func (s *shard) nextWrite() []KV {
	if len(s.writes) == 0 {
		return nil
	}
	return s.writes[0].records
}

// writeDone reports the outcome of appending the records nextWrite returned.
func (s *shard) writeDone(now time.Time, err error) {
	w := s.writes[0]
	s.writes = s.writes[1:]
	w.done(now, err)
	s.checkInvariants()
}

// takeReplies returns and forgets the responses ready to deliver.
func (s *shard) takeReplies() []func() {
	r := s.replies
	s.replies = nil
	return r
}

func (s *shard) nextDeadline() (time.Time, bool) { return s.timers.next() }

func (s *shard) write(records []KV, done func(now time.Time, err error)) {
	s.writes = append(s.writes, &pendingWrite{records: records, done: done})
}

func (s *shard) reply(f func()) { s.replies = append(s.replies, f) }

// joinResult is the content of a JoinGroup response.
type joinResult struct {
	errorCode      int16
	memberID       string
	generation     int32
	protocolType   *string
	protocolName   *string
	leaderID       string
	skipAssignment bool
	members        []kmsg.JoinGroupResponseMember
}

func joinError(memberID string, code int16) joinResult {
	return joinResult{errorCode: code, memberID: memberID, generation: -1}
}

func (s *shard) replyJoin(w *joinWaiter, r joinResult) {
	if w == nil {
		return
	}
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = w.version
	resp.ErrorCode = r.errorCode
	resp.MemberID = r.memberID
	resp.Generation = r.generation
	resp.ProtocolType = r.protocolType
	resp.Protocol = r.protocolName
	resp.LeaderID = r.leaderID
	resp.SkipAssignment = r.skipAssignment
	resp.Members = r.members
	if resp.Members == nil {
		resp.Members = []kmsg.JoinGroupResponseMember{}
	}
	s.reply(func() { w.respond(resp) })
}

// replySync answers a SyncGroup; protocol names go out only on success.
func (s *shard) replySync(w *syncWaiter, code int16, g *classicGroup, assignment []byte) {
	if w == nil {
		return
	}
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.Version = w.version
	resp.ErrorCode = code
	resp.MemberAssignment = nonNilBytes(assignment)
	if code == 0 && g != nil {
		resp.ProtocolType = optionalString(g.protocolType, g.hasProtocolType)
		resp.Protocol = optionalString(g.protocolName, g.hasProtocolName)
	}
	s.reply(func() { w.respond(resp) })
}

// classic returns the classic group with this id, or nil.
func (s *shard) classic(groupID string) *classicGroup {
	g, _ := s.groups[groupID].(*classicGroup)
	return g
}

func (s *shard) scheduleHeartbeat(now time.Time, g *classicGroup, memberID string, timeoutMs int32) {
	s.timers.schedule(&timer{
		key:      timerKey{kind: timerHeartbeat, group: g.id, member: memberID},
		deadline: now.Add(time.Duration(timeoutMs) * time.Millisecond),
	})
}

func (s *shard) cancelHeartbeat(g *classicGroup, memberID string) {
	s.timers.cancel(timerKey{kind: timerHeartbeat, group: g.id, member: memberID})
}

// tick fires the timers due at now.
func (s *shard) tick(now time.Time) {
	for range maxTimersPerTick {
		t := s.timers.popExpired(now)
		if t == nil {
			break
		}
		s.fire(now, t)
	}
	s.checkInvariants()
}

func (s *shard) fire(now time.Time, t *timer) {
	if s.fireConsumerTimer(now, t) || s.fireStreamsTimer(now, t) || s.fireShareTimer(now, t) {
		return
	}
	if t.key.kind == timerCleanup {
		s.cleanup(now)
		return
	}
	g := s.classic(t.key.group)
	if g == nil {
		return
	}
	switch t.key.kind {
	case timerHeartbeat:
		s.expireHeartbeat(now, g, t.key.member)
	case timerJoin:
		if t.initial {
			s.tryCompleteInitialRebalance(now, g, t.initialDelayMs, t.initialRemainingMs)
		} else {
			s.completeJoin(now, g)
		}
	case timerSync:
		s.expirePendingSync(now, g, t.generation)
	}
}

// replay applies one record read back from the partition while loading.
// Unknown record types are skipped, as Kafka's loader skips them.
func (s *shard) replay(key, value []byte) error {
	if handled, err := s.replayConsumerRecord(key, value); handled {
		return err
	}
	if handled, err := s.replayStreamsRecord(key, value); handled {
		return err
	}
	if handled, err := s.replayShareRecord(key, value); handled {
		return err
	}
	r, err := DecodeRecord(key, value)
	if errors.Is(err, ErrUnknownRecordType) {
		s.log.Debug("skipping unknown record type while loading", "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case r.OffsetCommitKey != nil:
		k := r.OffsetCommitKey
		tp := topicPartition{topic: k.Topic, partition: k.Partition}
		if r.OffsetCommitValue == nil {
			s.removeOffset(k.Group, tp)
			return nil
		}
		s.ensureSimpleGroup(k.Group, -1)
		s.putOffset(k.Group, tp, offsetValueFromRecord(r.OffsetCommitValue))
	case r.GroupMetadataKey != nil:
		id := r.GroupMetadataKey.Group
		if r.GroupMetadataValue == nil {
			s.forgetGroup(id)
			return nil
		}
		s.groups[id] = classicGroupFromRecord(id, r.GroupMetadataValue)
	}
	return nil
}

// onLoaded starts the clocks of a freshly loaded partition: every member's
// session, groups over the size limit rebalance, and the periodic cleanup.
func (s *shard) onLoaded(now time.Time) {
	for _, id := range s.sortedGroupIDs() {
		g := s.classic(id)
		if g == nil {
			continue
		}
		for _, memberID := range g.memberOrder {
			s.scheduleHeartbeat(now, g, memberID, g.members[memberID].sessionTimeoutMs)
		}
		if len(g.members) > int(s.config.GroupMaxSize) {
			s.log.Info("freshly loaded group is over capacity, rebalancing", "group", id, "members", len(g.members))
			s.prepareRebalance(now, g)
		}
	}
	s.onConsumerGroupsLoaded(now)
	s.onStreamsGroupsLoaded(now)
	s.scheduleCleanup(now)
	s.checkInvariants()
}

// unload answers every parked request with NOT_COORDINATOR and marks the
// groups Dead; the shard is unusable afterwards.
func (s *shard) unload(now time.Time) {
	nowMs := now.UnixMilli()
	for _, id := range s.sortedGroupIDs() {
		g := s.classic(id)
		if g == nil {
			continue
		}
		g.transition(stateDead, nowMs)
		for _, memberID := range g.memberOrder {
			m := g.members[memberID]
			s.replyJoin(m.joinWaiter, joinError(m.id, kerr.NotCoordinator.Code))
			s.replySync(m.syncWaiter, kerr.NotCoordinator.Code, nil, nil)
			m.joinWaiter, m.syncWaiter = nil, nil
		}
		g.numAwaitingJoin = 0
	}
	s.timers = newTimerQueue()
}

func (s *shard) sortedGroupIDs() []string {
	ids := make([]string, 0, len(s.groups))
	for id := range s.groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// ensureSimpleGroup creates the group of a consumer that commits offsets
// without group membership: an empty classic group without protocol type.
func (s *shard) ensureSimpleGroup(id string, nowMs int64) {
	if _, ok := s.groups[id]; !ok {
		s.groups[id] = newClassicGroup(id, stateEmpty, nowMs)
	}
}

// removeGroup forgets a group and any offsets left under it.
func (s *shard) removeGroup(id string) {
	if g := s.classic(id); g != nil {
		for _, memberID := range g.memberOrder {
			s.cancelHeartbeat(g, memberID)
		}
		for memberID := range g.pendingJoin {
			s.cancelHeartbeat(g, memberID)
		}
		s.timers.cancel(timerKey{kind: timerJoin, group: id})
		s.timers.cancel(timerKey{kind: timerSync, group: id})
	}
	delete(s.groups, id)
	delete(s.offsets, id)
}

func (s *shard) putOffset(groupID string, tp topicPartition, v offsetValue) {
	byPartition := s.offsets[groupID]
	if byPartition == nil {
		byPartition = make(map[topicPartition]offsetValue)
		s.offsets[groupID] = byPartition
	}
	byPartition[tp] = v
}

func (s *shard) removeOffset(groupID string, tp topicPartition) {
	byPartition := s.offsets[groupID]
	delete(byPartition, tp)
	if len(byPartition) == 0 {
		delete(s.offsets, groupID)
	}
}

// newMemberID is Kafka's member id: the group instance id (static members)
// or client id, a dash, and a random UUID.
func (s *shard) newMemberID(clientID string, instanceID *string) string {
	prefix := clientID
	if instanceID != nil {
		prefix = *instanceID
	}
	return prefix + "-" + s.config.uuid()
}

// appendErrorCode turns a failed append into the error Kafka returns for a
// failed coordinator write (GroupMetadataManager's
// appendGroupMetadataErrorToResponseError, GroupCoordinatorService's
// handleOperationException). Appends are acks=-1, so an ISR below
// min.insync.replicas (NOT_ENOUGH_REPLICAS before the write,
// NOT_ENOUGH_REPLICAS_AFTER_APPEND after it) or replicas too slow to
// confirm it (REQUEST_TIMED_OUT) answer COORDINATOR_NOT_AVAILABLE, which
// clients retry. A Go error that is not a Kafka error is a storage
// failure: COORDINATOR_NOT_AVAILABLE too.
func appendErrorCode(err error) int16 {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.CoordinatorNotAvailable.Code
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return kerr.NotCoordinator.Code
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return kerr.UnknownServerError.Code
	}
	return ke.Code
}

// checkInvariants verifies the invariants written on the shard's and the
// groups' fields, in builds with the invariants tag.
func (s *shard) checkInvariants() {
	if !invariantsEnabled {
		return
	}
	for id, byPartition := range s.offsets {
		if _, ok := s.groups[id]; !ok || len(byPartition) == 0 {
			panic(fmt.Sprintf("group: offsets of %q without group or empty", id))
		}
	}
	for _, gr := range s.groups {
		if g, ok := gr.(*classicGroup); ok {
			g.checkInvariants()
		}
	}
	s.checkConsumerInvariants()
	s.checkStreamsInvariants()
	s.checkShareInvariants()
}

func (g *classicGroup) checkInvariants() {
	fail := func(what string) { panic(fmt.Sprintf("group %q: %s", g.id, what)) }
	if len(g.memberOrder) != len(g.members) {
		fail("memberOrder and members differ")
	}
	awaiting := 0
	protocols := make(map[string]int)
	for _, id := range g.memberOrder {
		m := g.members[id]
		if m == nil || m.id != id {
			fail("memberOrder names a missing member")
		}
		if m.joinWaiter != nil {
			awaiting++
		}
		if m.instanceID != nil && g.staticMembers[*m.instanceID] != id {
			fail("static member not mapped")
		}
		for _, p := range m.protocols {
			protocols[p.name]++
		}
	}
	if awaiting != g.numAwaitingJoin {
		fail(fmt.Sprintf("numAwaitingJoin %d, counted %d", g.numAwaitingJoin, awaiting))
	}
	for name, n := range protocols {
		if g.supportedProtocols[name] != n {
			fail("supportedProtocols miscounted for " + name)
		}
	}
	if len(protocols) != len(g.supportedProtocols) {
		fail("supportedProtocols has stale protocols")
	}
	for instanceID, id := range g.staticMembers {
		if m := g.members[id]; m == nil || m.instanceID == nil || *m.instanceID != instanceID {
			fail("staticMembers names a missing member")
		}
	}
	if g.leaderID != "" && g.members[g.leaderID] == nil {
		fail("leader is not a member")
	}
	if g.leaderID == "" && len(g.members) > 0 {
		fail("members without a leader")
	}
	for id := range g.pendingSync {
		if g.members[id] == nil {
			fail("pending sync member is not a member")
		}
	}
}
