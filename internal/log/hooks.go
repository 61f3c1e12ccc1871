package log

import (
	"slices"
	"sync"
)

// extensions is the per-Log state of the hooks, the aborted-transaction
// index (txnindex.go) and the producer-state snapshot files (snapshot.go):
// what the partition layer needs from the log beyond appends and reads.
type extensions struct {
	mu struct {
		sync.Mutex
		// rollHooks run, in registration order, after each roll.
		rollHooks []rollHook
		// nextHookID names the next hook registered, for its removal.
		nextHookID uint64
		// txnIndexes caches each segment's aborted transactions once
		// read from its .txnindex (or appended since).
		// Invariant: a cached slice holds exactly the entries of the
		// segment's file, in file order.
		txnIndexes map[*segment][]AbortedTxn
	}
}

type rollHook struct {
	id uint64
	fn func(newBaseOffset int64)
}

// OnRoll registers fn to run after every roll, with the base offset of the
// new active segment. It runs on the goroutine that rolled, with the log's
// append lock held: it must not append to, roll or truncate this log, but it
// may read it and write other files (a producer-state snapshot). The
// returned function removes the hook (calling it again does nothing); a
// roll already under way may still run fn once.
func (l *Log) OnRoll(fn func(newBaseOffset int64)) (remove func()) {
	l.ext.mu.Lock()
	defer l.ext.mu.Unlock()
	id := l.ext.mu.nextHookID
	l.ext.mu.nextHookID++
	l.ext.mu.rollHooks = append(l.ext.mu.rollHooks, rollHook{id: id, fn: fn})
	return func() {
		l.ext.mu.Lock()
		defer l.ext.mu.Unlock()
		l.ext.mu.rollHooks = slices.DeleteFunc(l.ext.mu.rollHooks, func(h rollHook) bool { return h.id == id })
	}
}

// RollHooks is the number of roll hooks registered.
func (l *Log) RollHooks() int {
	l.ext.mu.Lock()
	defer l.ext.mu.Unlock()
	return len(l.ext.mu.rollHooks)
}

// afterRoll is called by rollLocked once old is closed and the segment at
// newOffset is active: it makes old's aborted-transaction index durable
// before anything (a snapshot) can depend on it, then runs the hooks.
func (e *extensions) afterRoll(l *Log, old *segment, newOffset int64) {
	if err := syncTxnIndex(old); err != nil {
		l.logger.Warn("syncing transaction index of rolled segment", "dir", l.dir, "base_offset", old.baseOffset, "err", err)
	}
	e.mu.Lock()
	hooks := slices.Clone(e.mu.rollHooks)
	e.mu.Unlock()
	for _, h := range hooks {
		h.fn(newOffset)
	}
}

// SegmentBaseOffsets returns the base offset of every segment, oldest first.
func (l *Log) SegmentBaseOffsets() []int64 {
	segs := l.segmentsSnapshot()
	out := make([]int64, len(segs))
	for i, s := range segs {
		out[i] = s.baseOffset
	}
	return out
}
