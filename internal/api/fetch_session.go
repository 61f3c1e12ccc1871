package api

// Incremental fetch sessions (KIP-227).
//
// A consumer that sends session id 0 and epoch 0 asks for a new session: the
// response is full and carries the new session id. Later requests name the
// session and the next epoch and list only the partitions whose fetch
// position changed, plus forgotten ones; the response then holds only the
// partitions with news: records, an error, or a changed high watermark, last
// stable offset or log start offset. Epoch -1 closes a session (a full,
// sessionless fetch). An unknown session answers FETCH_SESSION_ID_NOT_FOUND
// and a wrong epoch INVALID_FETCH_SESSION_EPOCH, both top-level.
//
// The cache holds max.incremental.fetch.session.cache.slots sessions (Kafka's
// default 1000); when it is full the least recently used session is evicted,
// and its consumer falls back to a full fetch when it next uses it.

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// maxFetchSessions is max.incremental.fetch.session.cache.slots.
const maxFetchSessions = 1000

type sessionKey struct {
	topic     string
	partition int32
}

type sessionPartition struct {
	target fetchTarget
	// What the client last heard, for deciding what is news.
	sentHighWatermark, sentLastStable, sentLogStart int64
}

type fetchSession struct {
	id int32

	mu struct {
		sync.Mutex
		epoch      int32 // the next epoch the client must send
		order      []sessionKey
		partitions map[sessionKey]*sessionPartition
		lastUsed   uint64
		// incremental is whether the request being served is incremental.
		incremental bool
	}
}

type fetchSessionCache struct {
	nextID atomic.Int32
	clock  atomic.Uint64

	mu struct {
		sync.Mutex
		sessions map[int32]*fetchSession
	}
}

func (b *Broker) fetchSessions() *fetchSessionCache { return &b.sessions }

// resolve turns the request into the partitions to read, creating, updating
// or closing the session as the request asks.
func (fc *fetchSessionCache) resolve(b *Broker, version int16, req *kmsg.FetchRequest) ([]fetchTarget, *fetchSession, *kerr.Error) {
	requested := requestTargets(b, version, req)
	if version < 7 {
		return requested, nil, nil
	}
	switch {
	case req.SessionEpoch == -1:
		if req.SessionID != 0 {
			fc.remove(req.SessionID)
		}
		return requested, nil, nil
	case req.SessionEpoch == 0:
		if req.SessionID != 0 {
			fc.remove(req.SessionID)
		}
		s := fc.create(requested)
		return requested, s, nil
	}
	fc.mu.Lock()
	s := fc.mu.sessions[req.SessionID]
	fc.mu.Unlock()
	if s == nil {
		return nil, nil, kerr.FetchSessionIDNotFound
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.SessionEpoch != s.mu.epoch {
		return nil, nil, kerr.InvalidFetchSessionEpoch
	}
	s.mu.epoch = nextEpoch(s.mu.epoch)
	s.mu.lastUsed = fc.clock.Add(1)
	s.mu.incremental = true
	for _, t := range requested {
		if t.unknownTopicCode != 0 {
			continue
		}
		k := sessionKey{t.topic, t.partition}
		if sp := s.mu.partitions[k]; sp != nil {
			sp.target = t
			continue
		}
		s.mu.partitions[k] = &sessionPartition{target: t, sentHighWatermark: -1, sentLastStable: -1, sentLogStart: -1}
		s.mu.order = append(s.mu.order, k)
	}
	img := b.Image()
	for _, ft := range req.ForgottenTopics {
		name := ft.Topic
		if version >= 13 {
			if t := img.TopicByID(metadata.UUID(ft.TopicID)); t != nil {
				name = t.Name
			}
		}
		for _, p := range ft.Partitions {
			delete(s.mu.partitions, sessionKey{name, p})
		}
	}
	kept := s.mu.order[:0]
	targets := make([]fetchTarget, 0, len(s.mu.partitions))
	for _, k := range s.mu.order {
		if sp := s.mu.partitions[k]; sp != nil {
			kept = append(kept, k)
			targets = append(targets, sp.target)
		}
	}
	s.mu.order = kept
	// Unknown topics in this request are answered but not remembered.
	for _, t := range requested {
		if t.unknownTopicCode != 0 {
			targets = append(targets, t)
		}
	}
	return targets, s, nil
}

func nextEpoch(e int32) int32 {
	if e == math.MaxInt32 {
		return 1
	}
	return e + 1
}

func (fc *fetchSessionCache) create(targets []fetchTarget) *fetchSession {
	s := &fetchSession{}
	s.mu.epoch = 1
	s.mu.partitions = map[sessionKey]*sessionPartition{}
	for _, t := range targets {
		if t.unknownTopicCode != 0 {
			continue
		}
		k := sessionKey{t.topic, t.partition}
		if _, dup := s.mu.partitions[k]; !dup {
			s.mu.order = append(s.mu.order, k)
		}
		s.mu.partitions[k] = &sessionPartition{target: t, sentHighWatermark: -1, sentLastStable: -1, sentLogStart: -1}
	}
	s.mu.lastUsed = fc.clock.Add(1)
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.mu.sessions == nil {
		fc.mu.sessions = map[int32]*fetchSession{}
	}
	if len(fc.mu.sessions) >= maxFetchSessions {
		var oldest *fetchSession
		for _, other := range fc.mu.sessions {
			other.mu.Lock()
			if oldest == nil || other.mu.lastUsed < oldest.mu.lastUsed {
				oldest = other
			}
			other.mu.Unlock()
		}
		delete(fc.mu.sessions, oldest.id)
	}
	for {
		id := fc.nextID.Add(1)
		if id <= 0 {
			fc.nextID.Store(0)
			continue
		}
		if _, taken := fc.mu.sessions[id]; !taken {
			s.id = id
			break
		}
	}
	fc.mu.sessions[s.id] = s
	return s
}

func (fc *fetchSessionCache) remove(id int32) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	delete(fc.mu.sessions, id)
}

// filter keeps, for an incremental request, only the partitions with news,
// and remembers what the client has now been told.
func (s *fetchSession) filter(results []fetchPartitionResult, version int16) []fetchPartitionResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := results[:0]
	for _, r := range results {
		sp := s.mu.partitions[sessionKey{r.topic, r.partition}]
		news := sp == nil || r.errorCode != 0 || r.bytes > 0 || r.divergingEpoch != nil ||
			r.highWatermark != sp.sentHighWatermark || r.lastStable != sp.sentLastStable || r.logStartOffset != sp.sentLogStart
		// A preferred read replica is always news (Kafka's mustRespond).
		news = news || r.hasPreferredReadReplica
		if sp != nil {
			sp.sentHighWatermark, sp.sentLastStable, sp.sentLogStart = r.highWatermark, r.lastStable, r.logStartOffset
		}
		if news || !s.mu.incremental {
			out = append(out, r)
		}
	}
	s.mu.incremental = false
	return out
}

// requestTargets resolves the partitions named in the request.
func requestTargets(b *Broker, version int16, req *kmsg.FetchRequest) []fetchTarget {
	img := b.Image()
	var targets []fetchTarget
	for _, rt := range req.Topics {
		name := rt.Topic
		var id metadata.UUID
		unknown := int16(0)
		if version >= 13 {
			id = metadata.UUID(rt.TopicID)
			if t := img.TopicByID(id); t != nil {
				name = t.Name
			} else {
				unknown = kerr.UnknownTopicID.Code
			}
		} else if t := img.Topic(name); t != nil {
			id = t.ID
		}
		for _, rp := range rt.Partitions {
			leaderEpoch, lastFetchedEpoch := int32(-1), int32(-1)
			if version >= 9 {
				leaderEpoch = rp.CurrentLeaderEpoch
			}
			if version >= 12 {
				lastFetchedEpoch = rp.LastFetchedEpoch
			}
			targets = append(targets, fetchTarget{
				topic: name, topicID: id, partition: rp.Partition, offset: rp.FetchOffset,
				leaderEpoch: leaderEpoch, lastFetchedEpoch: lastFetchedEpoch, maxBytes: rp.PartitionMaxBytes, unknownTopicCode: unknown,
				logStartOffset: rp.LogStartOffset,
			})
		}
	}
	return targets
}
