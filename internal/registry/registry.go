package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Topic is the storage topic, Confluent's default kafkastore.topic.
const Topic = "_schemas"

// Config configures a Registry.
type Config struct {
	// SeedBrokers are the addresses of the node's listener the registry's
	// own client uses (the inter-broker listener).
	SeedBrokers []string
	// KafkaOpts secure that client as the listener needs (TLS, SASL with
	// the inter-broker credentials); nil for a PLAINTEXT listener.
	KafkaOpts []kgo.Opt
	// Authorizer, when set, decides every request by the ACLs on the
	// registry's resources (authorize.go); nil lets every request through.
	Authorizer Authorizer
	// ReplicationFactor of _schemas when the registry creates it; Confluent's
	// kafkastore.topic.replication.factor is 3, capped here by the brokers
	// the cluster has.
	ReplicationFactor int16
	// TimeoutMs bounds each store operation (kafkastore.timeout.ms, 500 in
	// Confluent; Samsa default 10000 to cover a first topic creation).
	TimeoutMs int64
	// ForwardTLS is the TLS of writes forwarded to an https writer; nil
	// uses the system's roots.
	ForwardTLS *tls.Config
	Logger     *slog.Logger
}

// Registry serves the registry's state, read from _schemas, and writes it.
type Registry struct {
	config     Config
	client     *kgo.Client
	admin      *kadm.Client
	logger     *slog.Logger
	cancel     context.CancelFunc
	done       chan struct{}
	ready      chan struct{}
	runContext context.Context
	// election is nil until JoinElection; without one the registry writes
	// itself.
	election      *election
	electionDone  chan struct{}
	forwardClient *http.Client

	// writeMu serializes this node's writes: each computes its records from
	// the state caught up to the end of _schemas and waits until they are
	// applied before the next starts.
	writeMu sync.Mutex
	// topicExists is set once _schemas is known to exist.
	topicExists atomic.Bool

	mu struct {
		sync.Mutex
		state *state
		// appliedOffset is the offset after the last applied record.
		appliedOffset int64
		// appliedChanged is closed and replaced whenever appliedOffset
		// moves, waking waiters.
		appliedChanged chan struct{}
	}
}

// New starts a Registry: it replays _schemas in the background (creating
// it at the first write if absent); requests wait (bounded by TimeoutMs)
// until replay has reached the end of the topic as it was at start.
func New(config Config) (*Registry, error) {
	if config.Logger == nil {
		config.Logger = slog.Default()
	}
	if config.TimeoutMs <= 0 {
		config.TimeoutMs = 10000
	}
	if config.ReplicationFactor <= 0 {
		config.ReplicationFactor = 3
	}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(config.SeedBrokers...),
		kgo.ClientID("samsa-schema-registry"),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{Topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.FetchMaxWait(500 * time.Millisecond),
	}, config.KafkaOpts...)
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Registry{
		config: config, client: client, admin: kadm.NewClient(client), logger: config.Logger,
		cancel: cancel, done: make(chan struct{}), ready: make(chan struct{}),
	}
	r.mu.state = newState()
	r.mu.appliedChanged = make(chan struct{})
	go r.run(ctx)
	r.runContext = ctx
	r.electionDone = make(chan struct{})
	return r, nil
}

// JoinElection enters the writer election (Confluent's schema-registry
// group) as scheme://host:port with a static membership instanceID unique
// to the node, after which writes received while another
// member is the writer are forwarded to it. Call it once, before serving.
func (r *Registry) JoinElection(scheme, host string, port int, instanceID string) {
	r.election = &election{client: r.client, instanceID: instanceID, self: identity{Version: 1, Host: host, Port: port, Scheme: scheme, MasterEligibility: true}, logger: r.logger}
	r.forwardClient = &http.Client{Timeout: time.Duration(r.config.TimeoutMs) * time.Millisecond}
	if r.config.ForwardTLS != nil {
		r.forwardClient.Transport = &http.Transport{TLSClientConfig: r.config.ForwardTLS}
	}
	go func() {
		defer close(r.electionDone)
		r.election.run(r.runContext)
	}()
}

// Close stops replay and closes the client.
func (r *Registry) Close() {
	r.cancel()
	<-r.done
	if r.election != nil {
		<-r.electionDone
	}
	r.client.Close()
}

func (r *Registry) run(ctx context.Context) {
	defer close(r.done)
	go func() {
		for ctx.Err() == nil {
			waitCtx, cancel := context.WithTimeout(ctx, time.Duration(r.config.TimeoutMs)*time.Millisecond)
			err := r.catchUp(waitCtx)
			cancel()
			if err == nil {
				close(r.ready)
				return
			}
			r.logger.Debug("replaying the schema registry topic", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	for ctx.Err() == nil {
		fetches := r.client.PollFetches(ctx)
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.Canceled) && (r.topicExists.Load() || !errors.Is(err, kerr.UnknownTopicOrPartition)) {
				r.logger.Warn("reading the schema registry topic", "err", err)
			}
		})
		var last int64 = -1
		r.mu.Lock()
		fetches.EachRecord(func(record *kgo.Record) {
			decoded, err := decodeRecord(record.Key, record.Value)
			if err != nil {
				r.mu.state.badRecords++
				r.logger.Warn("skipping a schema registry record", "offset", record.Offset, "err", err)
			} else {
				r.mu.state.apply(decoded)
			}
			last = record.Offset
		})
		if last >= 0 {
			r.mu.appliedOffset = last + 1
			close(r.mu.appliedChanged)
			r.mu.appliedChanged = make(chan struct{})
		}
		r.mu.Unlock()
	}
}

// ensureTopic creates _schemas, one partition, compacted, as Confluent
// does, with the replication factor capped at the number of brokers. It
// runs before the first write rather than at start, so a cluster starting
// up has its brokers registered by then and the topic gets its full
// replication factor.
func (r *Registry) ensureTopic(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(r.config.TimeoutMs)*time.Millisecond)
	defer cancel()
	// The controller knows best how many brokers can take a replica: ask
	// for the configured factor first, and cap it only when refused.
	err := r.createTopic(ctx, r.config.ReplicationFactor)
	if !errors.Is(err, kerr.InvalidReplicationFactor) {
		return err
	}
	brokers, err := r.admin.ListBrokers(ctx)
	if err != nil {
		return err
	}
	replicas := min(int(r.config.ReplicationFactor), len(brokers))
	if replicas < 1 {
		return errors.New("no brokers registered yet")
	}
	// Confluent's registry does the same, with the same warning.
	r.logger.Warn("creating the schema registry topic with fewer replicas than configured: too few live brokers",
		"topic", Topic, "replicas", replicas, "schema.registry.topic.replication.factor", r.config.ReplicationFactor)
	return r.createTopic(ctx, int16(replicas))
}

func (r *Registry) createTopic(ctx context.Context, replicas int16) error {
	cleanup := "compact"
	responses, err := r.admin.CreateTopics(ctx, 1, replicas, map[string]*string{"cleanup.policy": &cleanup}, Topic)
	if err != nil {
		return err
	}
	for _, response := range responses {
		if response.Err != nil && !errors.Is(response.Err, kerr.TopicAlreadyExists) {
			return response.Err
		}
	}
	return nil
}

// catchUp waits until every record written to _schemas before the call is
// applied.
func (r *Registry) catchUp(ctx context.Context) error {
	ends, err := r.admin.ListEndOffsets(ctx, Topic)
	if err != nil {
		return err
	}
	end, ok := ends.Lookup(Topic, 0)
	if !ok || errors.Is(end.Err, kerr.UnknownTopicOrPartition) {
		return nil // not created yet: nothing to replay
	}
	if end.Err != nil {
		return end.Err
	}
	r.topicExists.Store(true)
	return r.waitApplied(ctx, end.Offset)
}

func (r *Registry) waitApplied(ctx context.Context, offset int64) error {
	for {
		r.mu.Lock()
		applied, changed := r.mu.appliedOffset, r.mu.appliedChanged
		r.mu.Unlock()
		if applied >= offset {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// waitReady waits for the first replay to finish.
func (r *Registry) waitReady(ctx context.Context) error {
	select {
	case <-r.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// storeRecord is one record a write appends: a key and a value, nil for a
// tombstone.
type storeRecord struct {
	key, value []byte
}

// write runs plan against the caught-up state and appends the records it
// returns, answering once they are applied. plan runs with the state lock
// held and must not block; its result is returned.
func (r *Registry) write(ctx context.Context, plan func(s *state) ([]storeRecord, any, error)) (any, error) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	if err := r.catchUp(ctx); err != nil {
		return nil, fmt.Errorf("%w: %v", errStore, err)
	}
	records, result, err := r.planLocked(plan)
	if err == nil && len(records) > 0 && !r.topicExists.Load() {
		if err := r.ensureTopic(ctx); err != nil {
			return nil, fmt.Errorf("%w: creating %s: %v", errStore, Topic, err)
		}
		r.topicExists.Store(true)
		r.client.ForceMetadataRefresh()
	}
	if err != nil || len(records) == 0 {
		return result, err
	}
	batch := make([]*kgo.Record, len(records))
	for i, record := range records {
		batch[i] = &kgo.Record{Topic: Topic, Partition: 0, Key: record.key, Value: record.value}
	}
	produced, err := r.client.ProduceSync(ctx, batch...).First()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errStore, err)
	}
	last := produced.Offset + int64(len(batch)) - 1
	for _, record := range batch {
		last = max(last, record.Offset)
	}
	if err := r.waitApplied(ctx, last+1); err != nil {
		return nil, fmt.Errorf("%w: %v", errStore, err)
	}
	return result, nil
}

// planLocked runs plan with the state lock held, releasing it even if plan
// panics (the HTTP layer recovers the panic into a 500).
func (r *Registry) planLocked(plan func(s *state) ([]storeRecord, any, error)) ([]storeRecord, any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return plan(r.mu.state)
}

// read runs query against the state.
func (r *Registry) read(query func(s *state) (any, error)) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return query(r.mu.state)
}

var errStore = errors.New("registry: store")
