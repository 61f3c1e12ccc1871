package share

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Share session epochs, as ShareFetch and ShareAcknowledge send them.
const (
	// InitialEpoch opens a session (replacing any the member had).
	InitialEpoch int32 = 0
	// FinalEpoch closes the session after the request's acknowledgements.
	FinalEpoch int32 = -1
)

// SessionKey names a share session: one member of one group on this broker.
type SessionKey struct {
	Group  string
	Member string
}

// TopicPartition is a partition of a session, by topic id.
type TopicPartition struct {
	TopicID   [16]byte
	Partition int32
}

// Session is one member's share session on this broker: the partitions
// it fetches and the epoch its next request must carry.
type Session struct {
	// Epoch is the epoch the next request must carry; it starts at 1
	// and wraps from MaxInt32 to 1.
	Epoch int32
	// Partitions are the partitions the session fetches, in the order
	// they were added.
	Partitions []TopicPartition
	// lastUsedMs is when a request last used the session.
	lastUsedMs int64
}

// Has reports whether the session fetches tp.
func (s *Session) Has(tp TopicPartition) bool {
	for _, p := range s.Partitions {
		if p == tp {
			return true
		}
	}
	return false
}

// Add adds partitions not yet in the session.
func (s *Session) Add(tps ...TopicPartition) {
	for _, tp := range tps {
		if !s.Has(tp) {
			s.Partitions = append(s.Partitions, tp)
		}
	}
}

// Remove drops partitions from the session.
func (s *Session) Remove(tps ...TopicPartition) {
	for _, tp := range tps {
		for i, p := range s.Partitions {
			if p == tp {
				s.Partitions = append(s.Partitions[:i], s.Partitions[i+1:]...)
				break
			}
		}
	}
}

// Sessions is the share session cache of one broker, bounded by
// group.share.max.share.sessions (2000). When it is full, opening a session
// first evicts the sessions idle for longer than idleMs (their members
// are gone; Kafka ties sessions to connections), handing each to onEvict.
type Sessions struct {
	maxSessions int
	idleMs      int64
	onEvict     func(SessionKey, *Session)
	mu          struct {
		sync.Mutex
		// sessions by member.
		// Invariant: len(sessions) <= maxSessions.
		sessions map[SessionKey]*Session
	}
}

// NewSessions returns an empty cache holding at most maxSessions.
func NewSessions(maxSessions int, idleMs int64, onEvict func(SessionKey, *Session)) *Sessions {
	s := &Sessions{maxSessions: max(maxSessions, 1), idleMs: idleMs, onEvict: onEvict}
	s.mu.sessions = make(map[SessionKey]*Session)
	return s
}

// Use validates a request's epoch against key's session and runs fn on the
// session with the cache locked: epoch 0 opens a session, replacing one
// the member had (as Kafka's cache removes it: what the member acquired
// through it stays acquired by the member, which may acknowledge it in
// the new session, until its locks time out), -1 names the session to
// close once fn returns, any other epoch must be the session's next one,
// after which the next one is expected. The result is an error code:
// SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH or
// SHARE_SESSION_LIMIT_REACHED, and fn does not run.
func (c *Sessions) Use(key SessionKey, epoch int32, nowMs int64, fn func(s *Session)) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	existing := c.mu.sessions[key]
	switch {
	case epoch == InitialEpoch:
		if existing == nil && len(c.mu.sessions) >= c.maxSessions {
			c.evictIdleLocked(nowMs)
		}
		if existing == nil && len(c.mu.sessions) >= c.maxSessions {
			return kerr.ShareSessionLimitReached.Code
		}
		s := &Session{Epoch: 1, lastUsedMs: nowMs}
		c.mu.sessions[key] = s
		fn(s)
		return 0
	case existing == nil:
		return kerr.ShareSessionNotFound.Code
	case epoch == FinalEpoch:
		delete(c.mu.sessions, key)
		fn(existing)
		return 0
	case epoch != existing.Epoch:
		return kerr.InvalidShareSessionEpoch.Code
	}
	existing.Epoch++
	if existing.Epoch <= 0 {
		existing.Epoch = 1
	}
	existing.lastUsedMs = nowMs
	fn(existing)
	return 0
}

// Remove drops key's session, returning it (nil if there was none).
func (c *Sessions) Remove(key SessionKey) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.mu.sessions[key]
	delete(c.mu.sessions, key)
	return s
}

// Len is the number of sessions.
func (c *Sessions) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.sessions)
}

func (c *Sessions) evictIdleLocked(nowMs int64) {
	for k, s := range c.mu.sessions {
		if s.lastUsedMs < nowMs-c.idleMs {
			delete(c.mu.sessions, k)
			if c.onEvict != nil {
				c.onEvict(k, s)
			}
		}
	}
}
