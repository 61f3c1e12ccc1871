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
type Controller struct {
	cfg     Config
	journal Journal
	image   atomic.Pointer[metadata.Image]

	mu struct {
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
	img := metadata.EmptyImage()
	var pending []metadata.Record
	first := int64(-1)
	err := journal.Replay(func(offset int64, value []byte) error {
		r, err := metadata.Decode(value)
		if err != nil {
			return fmt.Errorf("metadata offset %d: %w", offset, err)
		}
		if first < 0 {
			first = offset
		}
		// Records are applied one at a time so offsets stay exact even if the
		// journal skips offsets.
		pending = append(pending[:0], r)
		img = img.Apply(offset, pending)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.image.Store(img)
	return c, nil
}

// Image returns the current metadata image.
func (c *Controller) Image() *metadata.Image { return c.image.Load() }

// OnChange registers fn to run after each applied change, with the image
// before and after. fn runs with the controller's lock held: it must not call
// back into the controller.
func (c *Controller) OnChange(fn func(old, new *metadata.Image)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.listeners = append(c.mu.listeners, fn)
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
	old := c.image.Load()
	next := old.Apply(first, recs)
	c.image.Store(next)
	for _, fn := range c.mu.listeners {
		fn(old, next)
	}
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
