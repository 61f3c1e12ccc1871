package share

import (
	"slices"
	"sync"
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
// Lock order: Manager.mu is never held while taking an entry's mu.
type Manager struct {
	mu struct {
		sync.Mutex
		partitions map[Key]*entry
	}
}

type entry struct {
	mu struct {
		sync.Mutex
		// partition is nil until the first use initialized it.
		partition *Partition
	}
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
	m.mu.Lock()
	e := m.mu.partitions[key]
	if e == nil {
		e = &entry{}
		m.mu.partitions[key] = e
	}
	m.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mu.partition == nil {
		p, code := init()
		if code != 0 {
			m.forgetIfEmpty(key, e)
			return code
		}
		e.mu.partition = p
	}
	fn(e.mu.partition)
	return 0
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
	if e.mu.partition == nil {
		return false
	}
	fn(e.mu.partition)
	return true
}

func (m *Manager) forgetIfEmpty(key Key, e *entry) {
	m.mu.Lock()
	if m.mu.partitions[key] == e {
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
	for k := range m.mu.partitions {
		if match(k) {
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
