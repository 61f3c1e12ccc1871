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
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// Journal is the durable, ordered metadata log.
type Journal interface {
	// Append durably appends the encoded records, in order, and returns the
	// offset of the first.
	Append(values [][]byte) (firstOffset int64, err error)
	// Replay calls fn for every record in the journal, in order.
	Replay(fn func(offset int64, value []byte) error) error
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
}

// ErrJournal marks a failure to write the metadata journal.
var ErrJournal = errors.New("controller: metadata journal")

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

	// mu serialises decisions: read the image, decide, append.
	mu sync.Mutex

	// applyMu serialises changes to the image and the listeners.
	applyMu struct {
		sync.Mutex
		listeners []func(old, new *metadata.Image)
	}
}

// New replays the journal into an image and returns the controller.
func New(cfg Config, journal Journal) (*Controller, error) {
	if cfg.ProducerIDBlockSize <= 0 {
		cfg.ProducerIDBlockSize = 1000
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Controller{cfg: cfg, journal: journal}
	c.image.Store(metadata.EmptyImage())
	err := journal.Replay(func(offset int64, value []byte) error {
		return c.ApplyCommitted(offset, [][]byte{value})
	})
	if err != nil {
		return nil, err
	}
	return c, nil
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

// ApplyCommitted decodes and applies committed records that start at
// offset. Records at or below the image's offset are skipped.
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

// apply applies recs, which start at offset first, skipping those already
// applied, and tells the listeners.
func (c *Controller) apply(first int64, recs []metadata.Record) {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	old := c.image.Load()
	if skip := old.Offset - first + 1; skip > 0 {
		if skip >= int64(len(recs)) {
			return
		}
		recs, first = recs[skip:], first+skip
	}
	next := old.Apply(first, recs)
	c.image.Store(next)
	for _, fn := range c.applyMu.listeners {
		fn(old, next)
	}
}

// commitLocked appends recs to the journal and applies them.
func (c *Controller) commitLocked(recs []metadata.Record) error {
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
	first, err := c.journal.Append(values)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrJournal, err)
	}
	c.apply(first, recs)
	return nil
}

// Bootstrap writes the cluster id if the log is new and registers this node
// with its endpoints if they changed.
func (c *Controller) Bootstrap(clusterID string, self metadata.RegisterBrokerRecord) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	img := c.image.Load()
	var recs []metadata.Record
	if img.ClusterID == "" {
		recs = append(recs, &metadata.ClusterRecord{ClusterID: clusterID})
	}
	if b := img.Broker(self.BrokerID); b == nil || !sameEndpoints(b.Endpoints, self.Endpoints) || b.Fenced != self.Fenced {
		reg := self
		recs = append(recs, &reg)
	}
	return c.commitLocked(recs)
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
	first = c.image.Load().NextProducerID
	size = c.cfg.ProducerIDBlockSize
	err = c.commitLocked([]metadata.Record{&metadata.ProducerIDsRecord{BrokerID: broker, NextProducerID: first + size}})
	return first, size, err
}
