// Package controller validates and applies metadata changes: topic creation
// and deletion, partitions, configs, broker registration and producer-id
// blocks. Each change becomes typed metadata records that are appended to the
// metadata journal and then applied to the image that brokers serve.
//
// On one node the journal is a local durable log; with a Raft quorum the
// journal is the replicated log and only the active controller calls these
// methods. Either way, the records are the same.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// Journal is the durable, ordered metadata log.
type Journal interface {
	// Append durably commits the encoded records as one entry and returns
	// its offset. A replicated journal may already have applied the entry
	// through ApplyCommitted when Append returns; a journal that cannot
	// accept writes here (not the quorum leader) returns an error wrapping
	// ErrNotActive. When ctx ends first, Append returns an error wrapping
	// ctx.Err(); the entry may still commit later, whole.
	Append(ctx context.Context, values [][]byte) (offset int64, err error)
	// CatchUp returns once this node has applied every entry committed
	// before it could write: a new quorum leader commits a NoOpRecord and
	// waits for it. It returns an error wrapping ErrNotActive on a node
	// that cannot write, and one wrapping ctx.Err() when ctx ends first.
	CatchUp(ctx context.Context) error
}

// Config holds the broker settings that shape metadata decisions.
type Config struct {
	NodeID                   int32
	DefaultNumPartitions     int32 // num.partitions
	DefaultReplicationFactor int16 // default.replication.factor
	DeleteTopicEnable        bool  // delete.topic.enable
	// ValidateTopicConfigs checks topic config overrides (names and values).
	ValidateTopicConfigs func(map[string]*string) error
	// ProducerIDBlockSize is how many producer ids one allocation hands out.
	ProducerIDBlockSize int64
	Logger              *slog.Logger
	// BootstrapRecords are written with the cluster id when the metadata
	// log is new (the first users' SCRAM credentials).
	BootstrapRecords []metadata.Record
}

// ErrJournal marks a failure to write the metadata journal.
var ErrJournal = errors.New("controller: metadata journal")

// ErrClusterMismatch refuses a broker registration from another cluster
// (INCONSISTENT_CLUSTER_ID upstream).
var ErrClusterMismatch = errors.New("controller: cluster id mismatch")

// ErrNotActive means this controller is not the active one (not the quorum
// leader): NOT_CONTROLLER upstream.
var ErrNotActive = errors.New("controller: not the active controller")

// Controller serialises metadata changes. Reads go through Image, lock-free.
//
// Every committed record reaches the image through apply, exactly once and
// in offset order: either right after this controller's own Append returns
// (a local journal), or from the journal's replication layer through
// ApplyCommitted (a Raft quorum applies on every node, the leader included,
// before its Append returns). apply skips offsets already applied, so both
// paths can run for the same records.
type Controller struct {
	cfg     Config
	journal Journal
	image   atomic.Pointer[metadata.Image]

	// mu serialises decisions: read the image, decide, append. A request
	// with a deadline waits for it no longer than that (lockContext).
	mu writeLock
	// live tracks broker heartbeats while this controller is active.
	live liveness

	// applyMu serialises changes to the image and the listeners.
	applyMu struct {
		sync.Mutex
		listeners []func(old, new *metadata.Image)
	}
}

// New returns a controller with an empty image; the journal's committed
// entries reach it through ApplyCommitted and Restore.
func New(cfg Config, journal Journal) *Controller {
	if cfg.ProducerIDBlockSize <= 0 {
		cfg.ProducerIDBlockSize = 1000
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Controller{cfg: cfg, journal: journal, mu: newWriteLock()}
	c.image.Store(metadata.EmptyImage())
	return c
}

// Image returns the current metadata image.
func (c *Controller) Image() *metadata.Image { return c.image.Load() }

// OnChange registers fn to run after each applied change, with the image
// before and after. fn runs with the apply lock held: it must not call back
// into the controller's write methods.
func (c *Controller) OnChange(fn func(old, new *metadata.Image)) {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	c.applyMu.listeners = append(c.applyMu.listeners, fn)
}

// Subscribe registers fn like OnChange and calls it once at once with an
// empty old image and the current one, atomically with the registration, so
// fn sees every state exactly in order.
func (c *Controller) Subscribe(fn func(old, new *metadata.Image)) {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	c.applyMu.listeners = append(c.applyMu.listeners, fn)
	fn(metadata.EmptyImage(), c.image.Load())
}

// ApplyCommitted decodes and applies the records of the committed entry at
// offset. An entry at or below the image's offset was applied already and is
// skipped.
func (c *Controller) ApplyCommitted(offset int64, values [][]byte) error {
	recs := make([]metadata.Record, len(values))
	for i, v := range values {
		r, err := metadata.Decode(v)
		if err != nil {
			return fmt.Errorf("metadata offset %d: %w", offset+int64(i), err)
		}
		recs[i] = r
	}
	c.apply(offset, recs)
	return nil
}

// apply applies the records of the entry at offset unless it was applied
// already, and tells the listeners.
func (c *Controller) apply(offset int64, recs []metadata.Record) {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	old := c.image.Load()
	if offset <= old.Offset {
		return
	}
	c.publishLocked(old, old.Apply(offset, recs))
}

func (c *Controller) publishLocked(old, next *metadata.Image) {
	c.image.Store(next)
	for _, fn := range c.applyMu.listeners {
		fn(old, next)
	}
}

// Snapshot encodes the current image for a metadata snapshot and returns
// the offset it covers.
func (c *Controller) Snapshot() ([]byte, int64, error) {
	img := c.image.Load()
	b, err := metadata.EncodeSnapshot(img)
	return b, img.Offset, err
}

// Restore replaces the image with a snapshot taken at offset.
func (c *Controller) Restore(snapshot []byte, offset int64) error {
	next, err := metadata.DecodeSnapshot(snapshot, offset)
	if err != nil {
		return err
	}
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	c.publishLocked(c.image.Load(), next)
	return nil
}

// commitLocked appends recs to the journal and applies them. When ctx ends
// before the entry commits, it returns an error wrapping ctx.Err() and
// applies nothing here; the entry may still commit, and then reaches the
// image through ApplyCommitted.
func (c *Controller) commitLocked(ctx context.Context, recs []metadata.Record) error {
	if len(recs) == 0 {
		return nil
	}
	values := make([][]byte, len(recs))
	for i, r := range recs {
		v, err := metadata.Encode(nil, r)
		if err != nil {
			return err
		}
		values[i] = v
	}
	offset, err := c.journal.Append(ctx, values)
	if err != nil {
		if errors.Is(err, ErrNotActive) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrJournal, err)
	}
	c.apply(offset, recs)
	return nil
}

// Bootstrap writes the cluster id if the log is new and registers this node
// with its endpoints if they changed.
func (c *Controller) Bootstrap(clusterID string, self metadata.RegisterBrokerRecord) error {
	return c.RegisterBroker(clusterID, self)
}

// BootstrapCluster writes the cluster id and the bootstrap records
// (Config.BootstrapRecords) if the metadata log is new, as the first
// active controller of a cluster does in Kafka (the bootstrap metadata of
// kafka-storage format). A controller calls it once it leads the quorum, so
// a cluster of dedicated controllers has its id and first SCRAM users
// before any broker registers. It does nothing on a log that has them.
func (c *Controller) BootstrapCluster(clusterID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return err
	}
	return c.commitLocked(context.Background(), c.bootstrapRecordsLocked(clusterID))
}

// bootstrapRecordsLocked are the records that start a new metadata log
// under clusterID: none once the log has a cluster id.
func (c *Controller) bootstrapRecordsLocked(clusterID string) []metadata.Record {
	if c.image.Load().ClusterID != "" {
		return nil
	}
	return append([]metadata.Record{&metadata.ClusterRecord{ClusterID: clusterID}}, c.cfg.BootstrapRecords...)
}

// RegisterBroker registers (or re-registers) a broker, writing the cluster
// id first if the log is new. A broker of another cluster is refused with
// ErrClusterMismatch.
func (c *Controller) RegisterBroker(clusterID string, reg metadata.RegisterBrokerRecord) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return err
	}
	img := c.image.Load()
	if img.ClusterID != "" && clusterID != "" && clusterID != img.ClusterID {
		return fmt.Errorf("%w: broker %d has cluster id %q, the cluster is %q", ErrClusterMismatch, reg.BrokerID, clusterID, img.ClusterID)
	}
	// A log the quorum has not bootstrapped yet (BootstrapCluster) is
	// bootstrapped with this registration.
	recs := c.bootstrapRecordsLocked(clusterID)
	// The registration is always written, even unchanged, so that its
	// offset is a barrier: a broker that has applied it has applied
	// everything committed before it.
	recs = append(recs, &reg)
	return c.commitLocked(context.Background(), recs)
}

func sameEndpoints(a, b []metadata.Endpoint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// AllocateProducerIDs hands out a block of producer ids to broker and returns
// the first id and the block size. Ids are never reused, across restarts too.
func (c *Controller) AllocateProducerIDs(broker int32) (first, size int64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return 0, 0, err
	}
	first = c.image.Load().NextProducerID
	size = c.cfg.ProducerIDBlockSize
	err = c.commitLocked(context.Background(), []metadata.Record{&metadata.ProducerIDsRecord{BrokerID: broker, NextProducerID: first + size}})
	return first, size, err
}
