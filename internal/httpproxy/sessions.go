package httpproxy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// session holds the clients of one identity: a producer that also serves
// metadata, an admin client over it, and a schema registry client, so
// every Kafka request a REST call causes runs as the caller's principal
// and the broker's ACLs decide.
type session struct {
	identity Identity
	client   *kgo.Client
	admin    *kadm.Client
	// registry is nil when no schema registry is configured.
	registry *sr.Client
	schemas  *schemaCache
	config   Config

	// users and lastUsed are guarded by the pool's mutex.
	users    int
	lastUsed time.Time

	// metadata caches what every produce asks: the cluster id (it never
	// changes) and topics' partition counts for partitionCountTTL.
	metadata struct {
		sync.Mutex
		clusterID string
		// Invariant: len(partitions) <= maxCachedTopics.
		partitions map[string]cachedCount
	}
}

type cachedCount struct {
	count int32
	at    time.Time
}

// partitionCountTTL is how long a produce trusts a topic's partition
// count; a topic that grew is addressable by partition after that long.
const partitionCountTTL = time.Second

// maxCachedTopics bounds the partition counts a session caches.
const maxCachedTopics = 10000

func (s *session) cachedPartitions(topic string, now time.Time) (int32, bool) {
	s.metadata.Lock()
	defer s.metadata.Unlock()
	cached, ok := s.metadata.partitions[topic]
	return cached.count, ok && now.Sub(cached.at) < partitionCountTTL
}

func (s *session) cachePartitions(topic string, count int32, now time.Time) {
	s.metadata.Lock()
	defer s.metadata.Unlock()
	if s.metadata.partitions == nil || len(s.metadata.partitions) >= maxCachedTopics {
		s.metadata.partitions = map[string]cachedCount{}
	}
	s.metadata.partitions[topic] = cachedCount{count: count, at: now}
}

// kafkaOpts are the options every client of the session starts from.
func (s *session) kafkaOpts(extra ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.config.SeedBrokers...),
		kgo.ClientID("samsa-rest-proxy"),
		kgo.RequestTimeoutOverhead(10 * time.Second),
		kgo.RetryTimeout(time.Duration(s.config.RequestTimeoutMs) * time.Millisecond),
	}
	opts = append(opts, s.identity.KafkaOpts...)
	return append(opts, extra...)
}

var errSessionsBusy = errors.New("every REST proxy session is in use: http.proxy.max.sessions reached")

// sessionPool keeps at most config.MaxSessions sessions, closing the least
// recently used idle one to make room.
type sessionPool struct {
	config Config
	mu     struct {
		sync.Mutex
		// Invariant: len(sessions) <= config.MaxSessions.
		sessions map[string]*session
	}
}

func newSessionPool(config Config) *sessionPool {
	p := &sessionPool{config: config}
	p.mu.sessions = map[string]*session{}
	return p
}

func (p *sessionPool) acquire(identity Identity) (*session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.mu.sessions[identity.Key]; ok {
		s.users++
		s.lastUsed = p.config.Now()
		return s, nil
	}
	if len(p.mu.sessions) >= p.config.MaxSessions && !p.evictIdleLocked() {
		return nil, errSessionsBusy
	}
	s, err := p.open(identity)
	if err != nil {
		return nil, err
	}
	s.users = 1
	s.lastUsed = p.config.Now()
	p.mu.sessions[identity.Key] = s
	return s, nil
}

func (p *sessionPool) open(identity Identity) (*session, error) {
	s := &session{identity: identity, config: p.config}
	client, err := kgo.NewClient(s.kafkaOpts(
		kgo.RecordPartitioner(explicitPartitioner{inner: kgo.StickyKeyPartitioner(nil)}),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
		kgo.UnknownTopicRetries(2),
	)...)
	if err != nil {
		return nil, fmt.Errorf("opening a Kafka client: %w", err)
	}
	s.client = client
	s.admin = kadm.NewClient(client)
	s.admin.SetTimeoutMillis(int32(p.config.RequestTimeoutMs))
	if p.config.RegistryURL != "" {
		opts := []sr.ClientOpt{sr.URLs(p.config.RegistryURL), sr.UserAgent("samsa-rest-proxy")}
		if p.config.RegistryTLS != nil {
			opts = append(opts, sr.DialTLSConfig(p.config.RegistryTLS))
		}
		registry, err := sr.NewClient(append(opts, identity.RegistryOpts...)...)
		if err != nil {
			client.Close()
			return nil, fmt.Errorf("schema registry client: %w", err)
		}
		s.registry = registry
	}
	s.schemas = newSchemaCache(s.registry)
	return s, nil
}

func (p *sessionPool) release(s *session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.users--
	s.lastUsed = p.config.Now()
}

// evictIdleLocked closes the least recently used idle session.
func (p *sessionPool) evictIdleLocked() bool {
	var oldest *session
	for _, s := range p.mu.sessions {
		if s.users == 0 && (oldest == nil || s.lastUsed.Before(oldest.lastUsed)) {
			oldest = s
		}
	}
	if oldest == nil {
		return false
	}
	delete(p.mu.sessions, oldest.identity.Key)
	go oldest.client.Close()
	return true
}

// expire closes sessions idle for longer than idle.
func (p *sessionPool) expire(now time.Time, idle time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, s := range p.mu.sessions {
		if s.users == 0 && now.Sub(s.lastUsed) > idle {
			delete(p.mu.sessions, key)
			go s.client.Close()
		}
	}
}

func (p *sessionPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, s := range p.mu.sessions {
		delete(p.mu.sessions, key)
		s.client.Close()
	}
}

// explicitPartitioner sends a record to the partition the request named
// (recorded in its context) and otherwise partitions as Kafka's default
// partitioner does: murmur2 of the key, sticky for keyless records.
type explicitPartitioner struct{ inner kgo.Partitioner }

type explicitPartitionKey struct{}

// withPartition marks a record for partition p.
func withPartition(record *kgo.Record, p int32) {
	record.Context = context.WithValue(context.Background(), explicitPartitionKey{}, p)
}

func (e explicitPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return &explicitTopicPartitioner{inner: e.inner.ForTopic(topic)}
}

type explicitTopicPartitioner struct{ inner kgo.TopicPartitioner }

func explicitPartition(record *kgo.Record) (int32, bool) {
	if record.Context == nil {
		return 0, false
	}
	p, ok := record.Context.Value(explicitPartitionKey{}).(int32)
	return p, ok
}

func (e *explicitTopicPartitioner) RequiresConsistency(record *kgo.Record) bool {
	if _, ok := explicitPartition(record); ok {
		return true
	}
	return e.inner.RequiresConsistency(record)
}

func (e *explicitTopicPartitioner) Partition(record *kgo.Record, n int) int {
	if p, ok := explicitPartition(record); ok && int(p) < n {
		return int(p)
	}
	return e.inner.Partition(record, n)
}

func (e *explicitTopicPartitioner) OnNewBatch() {
	if sticky, ok := e.inner.(kgo.TopicPartitionerOnNewBatch); ok {
		sticky.OnNewBatch()
	}
}
