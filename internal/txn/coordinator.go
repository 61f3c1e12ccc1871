package txn

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Storage is the broker's __transaction_state log.
type Storage interface {
	// Append durably appends one record (a nil value is a tombstone) to
	// partition p of __transaction_state: it returns once the in-sync
	// replicas have it, as Kafka's coordinator appends with acks=-1.
	Append(p int32, key, value []byte) error
	// Load calls fn for every record of partition p from the start, in
	// order. An error from fn stops the load and is returned.
	Load(p int32, fn func(key, value []byte) error) error
}

// MarkerSender delivers WriteTxnMarkers requests to partition leaders. On
// one node the leader is this broker and the call is direct; across brokers
// it is a request over the network.
type MarkerSender interface {
	// Leader returns the broker leading tp; ok is false when the partition
	// no longer exists (its topic was deleted), so no marker is due.
	Leader(tp TopicPartition) (broker int32, ok bool)
	// Send delivers req to broker and calls done exactly once, possibly
	// from another goroutine, with the response or a transport error.
	Send(broker int32, req *kmsg.WriteTxnMarkersRequest, done func(*kmsg.WriteTxnMarkersResponse, error))
}

// Config configures a Coordinator with Kafka's broker configs.
type Config struct {
	// NumPartitions is the partition count of __transaction_state
	// (transaction.state.log.num.partitions until the topic exists).
	NumPartitions func() int32
	// PartitionFor places a transactional id: Kafka's
	// Utils.abs(id.hashCode()) % numPartitions, which the broker takes from
	// the group coordinator (group.PartitionFor) so the two agree.
	PartitionFor func(key string, numPartitions int32) int32
	// MaxTimeoutMs is transaction.max.timeout.ms (900000).
	MaxTimeoutMs int32
	// TransactionVersion returns the finalized transaction.version (2 by
	// default), read at each decision.
	TransactionVersion func() int8
	// TransactionalIDExpirationMs is transactional.id.expiration.ms (604800000).
	TransactionalIDExpirationMs int64
	// AbortTimedOutIntervalMs is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms (10000).
	AbortTimedOutIntervalMs int64
	// RemoveExpiredIntervalMs is
	// transaction.remove.expired.transaction.cleanup.interval.ms (3600000).
	RemoveExpiredIntervalMs int64
	// MarkerRetryBackoffMs is how long a marker refused with a retriable
	// error waits before it is sent again (100).
	MarkerRetryBackoffMs int64
	// NewProducerID hands out unused producer ids.
	NewProducerID func() (int64, error)
	Logger        *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.MaxTimeoutMs <= 0 {
		c.MaxTimeoutMs = 900000
	}
	if c.TransactionalIDExpirationMs <= 0 {
		c.TransactionalIDExpirationMs = 604800000
	}
	if c.AbortTimedOutIntervalMs <= 0 {
		c.AbortTimedOutIntervalMs = 10000
	}
	if c.RemoveExpiredIntervalMs <= 0 {
		c.RemoveExpiredIntervalMs = 3600000
	}
	if c.MarkerRetryBackoffMs <= 0 {
		c.MarkerRetryBackoffMs = 100
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NumPartitions == nil {
		c.NumPartitions = func() int32 { return 50 }
	}
	if c.PartitionFor == nil {
		c.PartitionFor = func(string, int32) int32 { return 0 }
	}
	if c.TransactionVersion == nil {
		c.TransactionVersion = func() int8 { return TV2 }
	}
	return c
}

// Coordinator is the transaction coordinator of one broker: the driver
// around one deterministic Shard per __transaction_state partition this
// broker leads. Each shard has its own mutex, held while a request runs on
// it but not while the record it produced is appended and replicates (the
// transactional id's transition is pending meanwhile, see appendLocked);
// markers are written with no lock held. Two background loops abort timed-out transactions and
// expire idle transactional ids.
//
// Lock order: Coordinator.mu, then a handle's mu; never the reverse.
type Coordinator struct {
	cfg     Config
	storage Storage
	markers MarkerSender
	log     *slog.Logger

	mu struct {
		sync.Mutex
		shards map[int32]*handle
		closed bool
	}
	stop    chan struct{}
	workers sync.WaitGroup
}

type handleStatus uint8

const (
	statusLoading handleStatus = iota
	statusActive
	statusUnloaded
)

// handle is one led __transaction_state partition.
type handle struct {
	id    int32
	epoch int32
	mu    struct {
		sync.Mutex
		status handleStatus
		// shard is set once loaded.
		shard *Shard
	}
}

// NewCoordinator returns a coordinator leading no partition yet; call
// OnElected for each __transaction_state partition this broker leads, and
// Start to run the timers.
func NewCoordinator(cfg Config, storage Storage, markers MarkerSender) *Coordinator {
	cfg = cfg.withDefaults()
	c := &Coordinator{cfg: cfg, storage: storage, markers: markers, log: cfg.Logger.With("component", "txn-coordinator"), stop: make(chan struct{})}
	c.mu.shards = map[int32]*handle{}
	return c
}

func (c *Coordinator) shardConfig() shardConfig {
	return shardConfig{maxTimeoutMs: c.cfg.MaxTimeoutMs, clusterTV: c.cfg.TransactionVersion, idExpirationMs: c.cfg.TransactionalIDExpirationMs}
}

// TransactionVersion is the finalized transaction.version this coordinator
// runs (advertised in ApiVersions).
func (c *Coordinator) TransactionVersion() int8 { return c.cfg.TransactionVersion() }

// PartitionFor is the __transaction_state partition of a transactional id:
// abs(javaHashCode(id)) % partitions, as Kafka computes it.
func (c *Coordinator) PartitionFor(transactionalID string) int32 {
	return c.cfg.PartitionFor(transactionalID, c.cfg.NumPartitions())
}

func (c *Coordinator) nowMs() int64 { return c.cfg.Now().UnixMilli() }

// OnElected makes this broker the coordinator of partition p at
// coordinatorEpoch (the partition's leader epoch): its records are loaded
// in the background, during which its transactional ids answer
// COORDINATOR_LOAD_IN_PROGRESS; prepared transactions then complete.
func (c *Coordinator) OnElected(p, coordinatorEpoch int32) {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return
	}
	if h := c.mu.shards[p]; h != nil && h.epoch == coordinatorEpoch {
		c.mu.Unlock()
		return
	}
	h := &handle{id: p, epoch: coordinatorEpoch}
	h.mu.status = statusLoading
	old := c.mu.shards[p]
	c.mu.shards[p] = h
	c.workers.Add(1)
	c.mu.Unlock()
	if old != nil {
		c.unload(old)
	}
	go c.load(h)
}

func (c *Coordinator) load(h *handle) {
	defer c.workers.Done()
	start := time.Now()
	s := newShard(h.id, h.epoch, c.shardConfig())
	records, skipped := 0, 0
	err := c.storage.Load(h.id, func(key, value []byte) error {
		if c.stopped() {
			return errLoadAbandoned
		}
		records++
		if err := s.replay(key, value); err != nil {
			// Kafka skips records it cannot read rather than losing the
			// partition; so do we, loudly.
			skipped++
			c.log.Warn("skipping unreadable __transaction_state record", "partition", h.id, "err", err)
		}
		return nil
	})
	h.mu.Lock()
	if h.mu.status != statusLoading {
		h.mu.Unlock()
		return
	}
	if err != nil {
		h.mu.status = statusUnloaded
		h.mu.Unlock()
		c.log.Error("failed to load __transaction_state partition", "partition", h.id, "err", err)
		c.mu.Lock()
		if c.mu.shards[h.id] == h {
			delete(c.mu.shards, h.id)
		}
		c.mu.Unlock()
		return
	}
	h.mu.shard, h.mu.status = s, statusActive
	jobs := s.loaded(c.nowMs())
	ids := len(s.txns)
	h.mu.Unlock()
	c.log.Info("loaded __transaction_state partition", "partition", h.id, "records", records, "skipped", skipped,
		"transactional_ids", ids, "pending_markers", len(jobs), "took", time.Since(start))
	for _, job := range jobs {
		c.runJob(h, s, job)
	}
}

var errLoadAbandoned = errors.New("txn: load abandoned")

// OnResigned gives up partition p; its transactional ids answer
// NOT_COORDINATOR and markers in flight are dropped (the next coordinator
// sends them again).
func (c *Coordinator) OnResigned(p int32) {
	c.mu.Lock()
	h := c.mu.shards[p]
	delete(c.mu.shards, p)
	c.mu.Unlock()
	if h != nil {
		c.unload(h)
	}
}

func (c *Coordinator) unload(h *handle) {
	h.mu.Lock()
	h.mu.status, h.mu.shard = statusUnloaded, nil
	h.mu.Unlock()
}

func (c *Coordinator) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// Start runs the timers: timed-out transactions are aborted every
// AbortTimedOutIntervalMs and idle transactional ids expired every
// RemoveExpiredIntervalMs.
func (c *Coordinator) Start() {
	c.every(c.cfg.AbortTimedOutIntervalMs, c.AbortTimedOut)
	c.every(c.cfg.RemoveExpiredIntervalMs, c.ExpireTransactionalIDs)
}

func (c *Coordinator) every(intervalMs int64, fn func()) {
	c.workers.Add(1)
	go func() {
		defer c.workers.Done()
		t := time.NewTicker(time.Duration(intervalMs) * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				fn()
			}
		}
	}()
}

// Close stops the timers and loads, resigns every partition and makes
// later requests answer COORDINATOR_NOT_AVAILABLE.
func (c *Coordinator) Close() {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return
	}
	c.mu.closed = true
	close(c.stop)
	handles := make([]*handle, 0, len(c.mu.shards))
	for _, h := range c.mu.shards {
		handles = append(handles, h)
	}
	clear(c.mu.shards)
	c.mu.Unlock()
	for _, h := range handles {
		c.unload(h)
	}
	c.workers.Wait()
}

// route returns the handle coordinating a transactional id or the error.
func (c *Coordinator) route(transactionalID string) (*handle, *kerr.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, kerr.CoordinatorNotAvailable
	}
	h := c.mu.shards[c.PartitionFor(transactionalID)]
	if h == nil {
		return nil, kerr.NotCoordinator
	}
	return h, nil
}

// lockShard locks h and returns its shard, or the error to answer (with h
// unlocked).
func (h *handle) lockShard() (*Shard, *kerr.Error) {
	h.mu.Lock()
	switch h.mu.status {
	case statusLoading:
		h.mu.Unlock()
		return nil, kerr.CoordinatorLoadInProgress
	case statusUnloaded:
		h.mu.Unlock()
		return nil, kerr.NotCoordinator
	}
	return h.mu.shard, nil
}

// withShard runs fn on the shard coordinating transactionalID with its lock
// held; the error is the routing failure, fn did not run.
func (c *Coordinator) withShard(transactionalID string, fn func(h *handle, s *Shard)) *kerr.Error {
	h, code := c.route(transactionalID)
	if code != nil {
		return code
	}
	s, code := h.lockShard()
	if code != nil {
		return code
	}
	defer h.mu.Unlock()
	fn(h, s)
	return nil
}

// appendLocked writes w and applies it; it returns the markers a Prepare
// record starts, or the error to answer. Called with h.mu held, which it
// releases while the record is appended and replicates, as Kafka's
// coordinator appends outside its locks: the transition is pending
// meanwhile (Metadata.pending), so every other request for the
// transactional id answers CONCURRENT_TRANSACTIONS, as in Kafka's
// TransactionCoordinator, while the ids of the rest of the partition go on.
// h.mu is held again on return; when the partition was unloaded or
// reloaded meanwhile the answer is NOT_COORDINATOR and s is left alone.
func (c *Coordinator) appendLocked(h *handle, s *Shard, w *Write) (*MarkerJob, *kerr.Error) {
	err := c.appendUnlocked(h, w.Key, w.Value)
	if h.mu.shard != s {
		return nil, kerr.NotCoordinator
	}
	if err != nil {
		s.Failed(w)
		c.log.Warn("appending to __transaction_state failed", "partition", h.id, "transactional_id", w.TransactionalID, "err", err)
		return nil, appendErrorCode(err)
	}
	job, err := s.Applied(w, c.nowMs())
	if err != nil {
		c.log.Error("applying written transaction state", "transactional_id", w.TransactionalID, "err", err)
		return nil, kerr.UnknownServerError
	}
	return job, nil
}

// appendUnlocked appends one record to h's partition with h.mu, which the
// caller holds, released for the append.
func (c *Coordinator) appendUnlocked(h *handle, key, value []byte) error {
	h.mu.Unlock()
	defer h.mu.Lock()
	return c.storage.Append(h.id, key, value)
}

// appendErrorCode maps a failed log append to the error Kafka's coordinator
// answers (TransactionStateManager.appendTransactionToLog).
func appendErrorCode(err error) *kerr.Error {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.CoordinatorNotAvailable
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return kerr.CoordinatorNotAvailable
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return kerr.NotCoordinator
	case kerr.MessageTooLarge, kerr.RecordListTooLarge:
		return kerr.UnknownServerError
	}
	return ke
}
