package group

import (
	"container/heap"
	"time"
)

// timerKind names what a shard timer does when it fires. Each mirrors one of
// the keys of Kafka's coordinator timer.
type timerKind uint8

const (
	// timerHeartbeat expires a member (or pending member) whose session
	// timeout passed without a heartbeat.
	timerHeartbeat timerKind = iota + 1
	// timerJoin ends the join phase of a rebalance; for an initial
	// rebalance it carries the delay and the time remaining.
	timerJoin
	// timerSync removes the members that did not send SyncGroup in time.
	timerSync
	// timerCleanup looks for expired offsets and empty groups.
	timerCleanup
)

// timerKey identifies a timer; scheduling a key that exists replaces it.
type timerKey struct {
	kind   timerKind
	group  string
	member string
}

type timer struct {
	key      timerKey
	deadline time.Time
	// seq orders timers with equal deadlines by scheduling order.
	seq   uint64
	index int

	// For timerJoin: initial marks the delayed first rebalance of an empty
	// group, with the delay just waited and the rebalance time left.
	initial            bool
	initialDelayMs     int32
	initialRemainingMs int32
	// For timerSync: the generation whose sync phase this timer ends.
	generation int32
}

// timerQueue is a min-heap of timers by deadline, indexed by key.
//
// Invariant: byKey[t.key] == t for every t in the heap, and nothing else is
// in byKey.
type timerQueue struct {
	byKey map[timerKey]*timer
	heap  timerHeap
	seq   uint64
}

func newTimerQueue() timerQueue {
	return timerQueue{byKey: make(map[timerKey]*timer)}
}

// schedule sets t to fire at t.deadline, replacing any timer with its key.
func (q *timerQueue) schedule(t *timer) {
	q.cancel(t.key)
	q.seq++
	t.seq = q.seq
	q.byKey[t.key] = t
	heap.Push(&q.heap, t)
}

func (q *timerQueue) cancel(key timerKey) {
	if t, ok := q.byKey[key]; ok {
		delete(q.byKey, key)
		heap.Remove(&q.heap, t.index)
	}
}

// next returns the earliest deadline.
func (q *timerQueue) next() (time.Time, bool) {
	if len(q.heap) == 0 {
		return time.Time{}, false
	}
	return q.heap[0].deadline, true
}

// popExpired removes and returns the earliest timer due at now, if any.
func (q *timerQueue) popExpired(now time.Time) *timer {
	if len(q.heap) == 0 || q.heap[0].deadline.After(now) {
		return nil
	}
	t := heap.Pop(&q.heap).(*timer)
	delete(q.byKey, t.key)
	return t
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].deadline.Equal(h[j].deadline) {
		return h[i].seq < h[j].seq
	}
	return h[i].deadline.Before(h[j].deadline)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
