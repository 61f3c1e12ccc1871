package share

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Key names one share-partition: a share group's view of one
// topic-partition.
type Key struct {
	Group     string
	TopicID   [16]byte
	Partition int32
}

// Manager holds the share-partitions this broker serves as the leader of
// their topic-partitions, each behind its own mutex, so share fetches for
// different partitions proceed in parallel.
//
// Lock order: Manager.mu is never held while taking an entry's locks; an
// entry's write is taken before its mu, never while holding it.
type Manager struct {
	mu struct {
		sync.Mutex
		partitions map[Key]*entry
	}
}

type entry struct {
	// write serializes the writes of the share-partition's durable state
	// (Persist); it is held across the write, mu only around reading and
	// marking the state, so fetches and acknowledgements of the
	// share-partition go on while a write is out.
	write sync.Mutex
	mu    struct {
		sync.Mutex
		// partition is nil until the first use initialized it.
		partition *Partition
	}
	// forgotten is set, under Manager.mu, when the entry leaves the map
	// (a failed init, or Forget). A caller that looked it up before then
	// must look again: initializing it would make a second share-partition
	// of its key beside the one a new entry holds, and the two would hand
	// out the same records.
	forgotten atomic.Bool
}

// NewManager returns a manager with no share-partitions.
func NewManager() *Manager {
	m := &Manager{}
	m.mu.partitions = make(map[Key]*entry)
	return m
}

// Do runs fn on the share-partition of key with its mutex held, creating it
// with init first when it does not exist yet. init returns the new
// partition or an error code; an error code is returned without running
// fn and nothing is kept.
func (m *Manager) Do(key Key, init func() (*Partition, int16), fn func(p *Partition)) int16 {
	for {
		if code, ok := m.doOn(key, m.entry(key), init, fn); ok {
			return code
		}
	}
}

// entry returns key's entry, adding an empty one when there is none.
func (m *Manager) entry(key Key) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.mu.partitions[key]
	if e == nil {
		e = &entry{}
		m.mu.partitions[key] = e
	}
	return e
}

// doOn is Do on e, key's entry when the caller looked it up. ok is false,
// and nothing ran, when e was forgotten since.
func (m *Manager) doOn(key Key, e *entry, init func() (*Partition, int16), fn func(p *Partition)) (code int16, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.forgotten.Load() {
		return 0, false
	}
	if e.mu.partition == nil {
		p, code := init()
		if code != 0 {
			m.forgetIfEmpty(key, e)
			return code, true
		}
		e.mu.partition = p
	}
	fn(e.mu.partition)
	return 0, true
}

// Peek runs fn on the share-partition of key if it exists, and reports
// whether it did.
func (m *Manager) Peek(key Key, fn func(p *Partition)) bool {
	m.mu.Lock()
	e := m.mu.partitions[key]
	m.mu.Unlock()
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mu.partition == nil || e.forgotten.Load() {
		return false
	}
	fn(e.mu.partition)
	return true
}

func (m *Manager) forgetIfEmpty(key Key, e *entry) {
	m.mu.Lock()
	if m.mu.partitions[key] == e {
		e.forgotten.Store(true)
		delete(m.mu.partitions, key)
	}
	m.mu.Unlock()
}

// Keys returns the share-partitions held, sorted, for those that match
// (nil: all).
func (m *Manager) Keys(match func(Key) bool) []Key {
	m.mu.Lock()
	out := make([]Key, 0, len(m.mu.partitions))
	for k := range m.mu.partitions {
		if match == nil || match(k) {
			out = append(out, k)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, compareKeys)
	return out
}

func compareKeys(a, b Key) int {
	switch {
	case a.Group != b.Group:
		if a.Group < b.Group {
			return -1
		}
		return 1
	case a.TopicID != b.TopicID:
		return slices.Compare(a.TopicID[:], b.TopicID[:])
	}
	return int(a.Partition) - int(b.Partition)
}

// Forget drops the share-partitions that match, for example every one of
// a deleted group, or of a topic-partition this broker stopped leading.
func (m *Manager) Forget(match func(Key) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, e := range m.mu.partitions {
		if match(k) {
			e.forgotten.Store(true)
			delete(m.mu.partitions, k)
		}
	}
}

// ReleaseMember releases what member of group holds in every
// share-partition of the group.
func (m *Manager) ReleaseMember(group, member string) {
	for _, k := range m.Keys(func(k Key) bool { return k.Group == group }) {
		m.Peek(k, func(p *Partition) { p.ReleaseMember(member) })
	}
}

// StateWrite is the state of a share-partition to persist
// (WriteShareGroupState).
type StateWrite struct {
	StartOffset int64
	StateEpoch  int32
	LeaderEpoch int32
	Batches     []StateBatch
}

// Persist makes the changes of key's share-partition durable with write
// (a persister call, maybe to a share coordinator on another node) and
// returns its answer, 0 when nothing was left to write. Writes of one
// share-partition go out one at a time, each with the state as it is when
// it starts, so a write covers every change made before it began and a
// caller whose change a concurrent write covered returns once that write
// succeeded. The share-partition's mutex is not held during write: a slow
// share coordinator stalls no fetch or acknowledgement of it, only the
// answers waiting for their changes to be durable. answered, when set,
// runs with the share-partition locked after write answered.
func (m *Manager) Persist(key Key, write func(StateWrite) int16, answered func(p *Partition, code int16)) int16 {
	m.mu.Lock()
	e := m.mu.partitions[key]
	m.mu.Unlock()
	if e == nil {
		return 0
	}
	e.write.Lock()
	defer e.write.Unlock()
	e.mu.Lock()
	p := e.mu.partition
	if p == nil {
		e.mu.Unlock()
		return 0
	}
	start, batches, changed := p.PendingWrite()
	w := StateWrite{StartOffset: start, StateEpoch: p.StateEpoch(), LeaderEpoch: p.LeaderEpoch(), Batches: batches}
	e.mu.Unlock()
	if !changed {
		return 0
	}
	code := write(w)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mu.partition == p {
		if code == 0 {
			p.MarkWritten(start, batches)
		}
		if answered != nil {
			answered(p, code)
		}
	}
	return code
}
