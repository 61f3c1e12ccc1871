package share

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// RecordState is an in-flight offset's state, with Kafka's numbering.
type RecordState int8

const (
	Available    RecordState = 0
	Acquired     RecordState = 1
	Acknowledged RecordState = 2
	Archived     RecordState = 4
)

func (s RecordState) String() string {
	switch s {
	case Available:
		return "AVAILABLE"
	case Acquired:
		return "ACQUIRED"
	case Acknowledged:
		return "ACKNOWLEDGED"
	case Archived:
		return "ARCHIVED"
	}
	return fmt.Sprintf("RecordState(%d)", int8(s))
}

// AckType is an acknowledgement type as ShareFetch and ShareAcknowledge
// carry it.
type AckType int8

const (
	AckGap     AckType = 0
	AckAccept  AckType = 1
	AckRelease AckType = 2
	AckReject  AckType = 3
	// AckRenew extends the acquisition lock (KIP-1222, ShareFetch and
	// ShareAcknowledge v2).
	AckRenew AckType = 4
)

// Config bounds one share-partition, with Kafka's config names.
type Config struct {
	// RecordLockDurationMs is group.share.record.lock.duration.ms
	// (30000), or the group's share.record.lock.duration.ms.
	RecordLockDurationMs int64
	// DeliveryCountLimit is group.share.delivery.count.limit (5): a
	// record delivered this many times is archived instead of being made
	// available again.
	DeliveryCountLimit int16
	// MaxRecordLocks is group.share.partition.max.record.locks (2000):
	// the widest the in-flight window may grow.
	MaxRecordLocks int64
}

// DefaultConfig is Kafka's defaults.
func DefaultConfig() Config {
	return Config{RecordLockDurationMs: 30000, DeliveryCountLimit: 5, MaxRecordLocks: 2000}
}

// Batch is the header of one record batch read from the log.
type Batch struct {
	BaseOffset    int64
	LastOffset    int64
	ProducerID    int64
	Transactional bool
	Control       bool
}

// AbortedTxn is one aborted transaction overlapping what was read (from
// the partition's .txnindex): its records from FirstOffset to LastOffset
// whose producer is ProducerID are not delivered under read_committed.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
}

// AcquiredRange is a run of consecutive acquired offsets with one delivery
// count, as ShareFetch's AcquiredRecords list them.
type AcquiredRange struct {
	FirstOffset   int64
	LastOffset    int64
	DeliveryCount int16
}

// AckBatch acknowledges FirstOffset..LastOffset: Types holds one type for
// every offset, or a single type for all of them.
type AckBatch struct {
	FirstOffset int64
	LastOffset  int64
	Types       []AckType
}

// inFlight is one offset of the window.
type inFlight struct {
	state         RecordState
	deliveryCount int16
	// member holds the acquiring member while Acquired.
	member string
	// lockDeadlineMs is when an Acquired offset's lock times out.
	lockDeadlineMs int64
}

// Partition is the state of one share-partition. It is not safe for
// concurrent use.
type Partition struct {
	config Config
	// startOffset is the SPSO.
	// Invariant: window is empty or window[0] is Available or Acquired.
	startOffset int64
	// window holds the offsets [startOffset, startOffset+len(window)); the
	// SPEO is startOffset + len(window).
	// Invariant: len(window) <= config.MaxRecordLocks, except after
	// Restore of a larger persisted window.
	window []inFlight
	// stateEpoch counts resets of the start offset by an admin
	// (AlterShareGroupOffsets), as Kafka's state epoch.
	stateEpoch int32
	// leaderEpoch is the topic-partition's leader epoch the state was
	// loaded under.
	leaderEpoch int32
	// written is the state last persisted, nil before the first write.
	written *writtenState
}

// NewPartition returns a share-partition starting at startOffset with
// nothing in flight.
func NewPartition(cfg Config, startOffset int64) *Partition {
	return &Partition{config: cfg, startOffset: startOffset}
}

// SetConfig changes the limits; records in flight keep their locks.
func (p *Partition) SetConfig(cfg Config) { p.config = cfg }

// StartOffset is the SPSO.
func (p *Partition) StartOffset() int64 { return p.startOffset }

// EndOffset is the SPEO: the offset past the last one in flight.
func (p *Partition) EndOffset() int64 { return p.startOffset + int64(len(p.window)) }

// StateEpoch is the admin reset count.
func (p *Partition) StateEpoch() int32 { return p.stateEpoch }

// State returns the state and delivery count of offset, which must be in
// the window; offsets below the SPSO are reported Acknowledged.
func (p *Partition) State(offset int64) (RecordState, int16) {
	if offset < p.startOffset {
		return Acknowledged, 0
	}
	i := offset - p.startOffset
	if i >= int64(len(p.window)) {
		return Available, 0
	}
	return p.window[i].state, p.window[i].deliveryCount
}

// FetchOffset is where a read for new acquisitions should start: the first
// Available offset of the window, or the SPEO.
func (p *Partition) FetchOffset() int64 {
	for i := range p.window {
		if p.window[i].state == Available {
			return p.startOffset + int64(i)
		}
	}
	return p.EndOffset()
}

// CanAcquire reports whether anything could be acquired from a read: an
// offset of the window is Available, or the window has room to grow.
func (p *Partition) CanAcquire() bool {
	return p.FetchOffset() < p.EndOffset() || int64(len(p.window)) < p.config.MaxRecordLocks
}

// Acquire locks for member the acquirable offsets of the batches (read from
// the log in offset order, starting at or below FetchOffset), at most
// maxRecords of them (<= 0: no limit), and returns them as ranges. Offsets
// the window passes that hold no deliverable record (control batches,
// aborted transactions under readCommitted, gaps between batches) are
// archived.
func (p *Partition) Acquire(member string, batches []Batch, aborted []AbortedTxn, readCommitted bool, maxRecords int, nowMs int64) []AcquiredRange {
	var out []AcquiredRange
	acquired := 0
	deadline := nowMs + p.config.RecordLockDurationMs
	for _, b := range batches {
		skip := b.Control || (readCommitted && b.Transactional && isAborted(aborted, b))
		for offset := max(b.BaseOffset, p.startOffset); offset <= b.LastOffset; offset++ {
			if maxRecords > 0 && acquired >= maxRecords {
				return p.finishAcquire(out)
			}
			i := offset - p.startOffset
			if i >= int64(len(p.window)) {
				// A new offset: grow the window up to it, archiving any gap.
				if offset-p.startOffset >= p.config.MaxRecordLocks {
					return p.finishAcquire(out)
				}
				for int64(len(p.window)) < i {
					p.window = append(p.window, inFlight{state: Archived})
				}
				p.window = append(p.window, inFlight{state: Available})
			}
			r := &p.window[i]
			if r.state != Available {
				continue
			}
			if skip {
				r.state = Archived
				continue
			}
			r.state, r.member, r.lockDeadlineMs = Acquired, member, deadline
			r.deliveryCount++
			acquired++
			out = appendAcquired(out, offset, r.deliveryCount)
		}
	}
	return p.finishAcquire(out)
}

func (p *Partition) finishAcquire(out []AcquiredRange) []AcquiredRange {
	p.advanceStart()
	return out
}

func appendAcquired(out []AcquiredRange, offset int64, deliveryCount int16) []AcquiredRange {
	if n := len(out); n > 0 && out[n-1].LastOffset == offset-1 && out[n-1].DeliveryCount == deliveryCount {
		out[n-1].LastOffset = offset
		return out
	}
	return append(out, AcquiredRange{FirstOffset: offset, LastOffset: offset, DeliveryCount: deliveryCount})
}

// isAborted reports whether the transactional batch b belongs to one of
// the aborted transactions.
func isAborted(aborted []AbortedTxn, b Batch) bool {
	for _, a := range aborted {
		if a.ProducerID == b.ProducerID && b.BaseOffset >= a.FirstOffset && b.BaseOffset <= a.LastOffset {
			return true
		}
	}
	return false
}

// Acknowledge applies member's acknowledgements. Every offset must be in
// the window and acquired by member; otherwise nothing is applied and the
// answer is INVALID_RECORD_STATE. A malformed batch (first > last, a
// type list of the wrong length, an unknown type) answers INVALID_REQUEST.
// isRenew is ShareAcknowledge's and ShareFetch's IsRenewAck: RENEW is only
// valid with it set (KIP-1222).
func (p *Partition) Acknowledge(member string, batches []AckBatch, isRenew bool, nowMs int64) int16 {
	for _, b := range batches {
		if code := p.validateAck(member, b, isRenew); code != 0 {
			return code
		}
	}
	for _, b := range batches {
		for offset := b.FirstOffset; offset <= b.LastOffset; offset++ {
			t := b.Types[0]
			if len(b.Types) > 1 {
				t = b.Types[offset-b.FirstOffset]
			}
			p.applyAck(&p.window[offset-p.startOffset], t, nowMs)
		}
	}
	p.advanceStart()
	return 0
}

func (p *Partition) validateAck(member string, b AckBatch, isRenew bool) int16 {
	if b.FirstOffset > b.LastOffset || len(b.Types) == 0 {
		return kerr.InvalidRequest.Code
	}
	if len(b.Types) > 1 && int64(len(b.Types)) != b.LastOffset-b.FirstOffset+1 {
		return kerr.InvalidRequest.Code
	}
	for _, t := range b.Types {
		if t < AckGap || t > AckRenew || (t == AckRenew && !isRenew) {
			return kerr.InvalidRequest.Code
		}
	}
	if b.FirstOffset < p.startOffset || b.LastOffset >= p.EndOffset() {
		return kerr.InvalidRecordState.Code
	}
	for offset := b.FirstOffset; offset <= b.LastOffset; offset++ {
		r := p.window[offset-p.startOffset]
		if r.state != Acquired || r.member != member {
			return kerr.InvalidRecordState.Code
		}
	}
	return 0
}

func (p *Partition) applyAck(r *inFlight, t AckType, nowMs int64) {
	switch t {
	case AckAccept:
		r.state, r.member = Acknowledged, ""
	case AckReject, AckGap:
		r.state, r.member = Archived, ""
	case AckRelease:
		p.release(r)
	case AckRenew:
		r.lockDeadlineMs = nowMs + p.config.RecordLockDurationMs
	}
}

// release makes an acquired offset available again, or archives it once
// its delivery count reached the limit.
func (p *Partition) release(r *inFlight) {
	r.member, r.lockDeadlineMs = "", 0
	if r.deliveryCount >= p.config.DeliveryCountLimit {
		r.state = Archived
		return
	}
	r.state = Available
}

// ReleaseMember releases every offset member holds (it left the group or
// closed its share session) and reports how many.
func (p *Partition) ReleaseMember(member string) int {
	n := 0
	for i := range p.window {
		if r := &p.window[i]; r.state == Acquired && r.member == member {
			p.release(r)
			n++
		}
	}
	p.advanceStart()
	return n
}

// Tick releases the offsets whose locks timed out at nowMs and reports how
// many.
func (p *Partition) Tick(nowMs int64) int {
	n := 0
	for i := range p.window {
		if r := &p.window[i]; r.state == Acquired && r.lockDeadlineMs <= nowMs {
			p.release(r)
			n++
		}
	}
	if n > 0 {
		p.advanceStart()
	}
	return n
}

// NextDeadline is the earliest lock timeout, if any offset is acquired.
func (p *Partition) NextDeadline() (int64, bool) {
	var next int64
	found := false
	for i := range p.window {
		if r := p.window[i]; r.state == Acquired && (!found || r.lockDeadlineMs < next) {
			next, found = r.lockDeadlineMs, true
		}
	}
	return next, found
}

// AdvanceTo moves the SPSO up to offset (the log start passed it, or an
// admin moved it): offsets below it are dropped from the window whatever
// their state.
func (p *Partition) AdvanceTo(offset int64) {
	if offset <= p.startOffset {
		return
	}
	drop := offset - p.startOffset
	if drop >= int64(len(p.window)) {
		p.window = p.window[:0]
	} else {
		p.window = slices.Delete(p.window, 0, int(drop))
	}
	p.startOffset = offset
	p.advanceStart()
}

// Reset starts the share-partition over at offset with nothing in flight
// and a new state epoch (AlterShareGroupOffsets, DeleteShareGroupOffsets).
func (p *Partition) Reset(offset int64) {
	p.window = p.window[:0]
	p.startOffset = offset
	p.stateEpoch++
}

// advanceStart drops leading finished offsets.
func (p *Partition) advanceStart() {
	n := 0
	for n < len(p.window) && (p.window[n].state == Acknowledged || p.window[n].state == Archived) {
		n++
	}
	if n == 0 {
		return
	}
	p.window = slices.Delete(p.window, 0, n)
	p.startOffset += int64(n)
	p.checkInvariants()
}

// InFlightCount is the number of offsets acquired now.
func (p *Partition) InFlightCount() int {
	n := 0
	for _, r := range p.window {
		if r.state == Acquired {
			n++
		}
	}
	return n
}

// StateBatch is a run of offsets with one state and delivery count, as
// the share coordinator stores them (WriteShareGroupState's StateBatches).
type StateBatch struct {
	FirstOffset   int64
	LastOffset    int64
	State         RecordState
	DeliveryCount int16
}

// Snapshot returns the window as batches, with Acquired offsets reported
// Available: a lock does not survive the leader (Kafka persists acquired
// records as available).
func (p *Partition) Snapshot() []StateBatch {
	var out []StateBatch
	for i, r := range p.window {
		state := r.state
		if state == Acquired {
			state = Available
		}
		offset := p.startOffset + int64(i)
		if n := len(out); n > 0 && out[n-1].State == state && out[n-1].DeliveryCount == r.deliveryCount && out[n-1].LastOffset == offset-1 {
			out[n-1].LastOffset = offset
			continue
		}
		out = append(out, StateBatch{FirstOffset: offset, LastOffset: offset, State: state, DeliveryCount: r.deliveryCount})
	}
	return out
}

// Restore replaces the state with a persisted one: the SPSO, the state
// epoch and the batches of the window (offsets between batches are
// Available with delivery count 0).
func (p *Partition) Restore(startOffset int64, stateEpoch int32, batches []StateBatch) {
	p.startOffset, p.stateEpoch = startOffset, stateEpoch
	p.window = p.window[:0]
	for _, b := range batches {
		for offset := max(b.FirstOffset, startOffset); offset <= b.LastOffset; offset++ {
			for p.EndOffset() < offset {
				p.window = append(p.window, inFlight{state: Available})
			}
			if offset < p.EndOffset() {
				continue // overlapping batches: the first wins
			}
			state := b.State
			if state == Acquired {
				state = Available
			}
			p.window = append(p.window, inFlight{state: state, deliveryCount: b.DeliveryCount})
		}
	}
	p.advanceStart()
}

func (p *Partition) checkInvariants() {
	if !invariantsEnabled {
		return
	}
	if len(p.window) > 0 && p.window[0].state != Available && p.window[0].state != Acquired {
		panic(fmt.Sprintf("share: window starts at %d in state %s", p.startOffset, p.window[0].state))
	}
	for i, r := range p.window {
		if (r.state == Acquired) != (r.member != "") {
			panic(fmt.Sprintf("share: offset %d in state %s with member %q", p.startOffset+int64(i), r.state, r.member))
		}
	}
}

// LeaderEpoch is the leader epoch of the topic-partition when this state
// was loaded; SetLeaderEpoch records it.
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch }

// SetLeaderEpoch records the leader epoch the state belongs to.
func (p *Partition) SetLeaderEpoch(epoch int32) { p.leaderEpoch = epoch }

// PendingWrite returns the state to persist when it differs from what was
// last marked written.
func (p *Partition) PendingWrite() (startOffset int64, batches []StateBatch, changed bool) {
	batches = p.Snapshot()
	if p.written != nil && p.written.startOffset == p.startOffset && slices.Equal(p.written.batches, batches) {
		return p.startOffset, batches, false
	}
	return p.startOffset, batches, true
}

// MarkWritten records the state as persisted.
func (p *Partition) MarkWritten(startOffset int64, batches []StateBatch) {
	p.written = &writtenState{startOffset: startOffset, batches: batches}
}

// writtenState is the state last persisted.
type writtenState struct {
	startOffset int64
	batches     []StateBatch
}
