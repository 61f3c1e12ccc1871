package group

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Storage is the broker's __consumer_offsets log, implemented by the broker.
type Storage interface {
	// Append durably appends the records (key, value; value nil =
	// tombstone) to partition p of __consumer_offsets and returns the
	// offset of the last one. Durably means as Kafka's acks=-1: it
	// returns nil only once every in-sync replica has the records, and
	// refuses them when the ISR is below min.insync.replicas, so nothing
	// the coordinator answered after a nil is lost with this node.
	Append(p int32, records []KV) (int64, error)
	// Load calls fn for every record of partition p from the start to
	// its log end, in order (used when this node becomes the partition's
	// leader: its high watermark may still lag records the previous
	// leader acknowledged). An error from fn stops the load and is
	// returned.
	Load(p int32, fn func(offset int64, key, value []byte) error) error
}

// Coordinator is the group coordinator of one broker: the driver around one
// deterministic shard per __consumer_offsets partition this broker leads.
//
// Each partition has its own mutex, held while a request runs on its shard
// and while the records that request produced are appended through Storage;
// so requests for groups of different partitions proceed in parallel, and
// one partition's requests apply in arrival order. Each partition has one
// timer, set to the shard's next deadline after every step. Responses are
// delivered by calling the request's respond callback after the partition's
// mutex is released: before the method returns for most requests, later and
// from another goroutine (a timer's, or another request's) for a parked
// JoinGroup or SyncGroup. Every respond callback is called exactly once.
//
// Since an append waits for the ISR, a partition's requests queue behind
// the replication of the previous one's records, as they would behind
// Kafka's coordinator writes; requests of other partitions do not. A
// partition that stops being led here ends the wait at once
// (NOT_LEADER_OR_FOLLOWER), so resigning it is not held up.
//
// Lock order: Coordinator.mu is never held while taking a partition's mu.
type Coordinator struct {
	config  Config
	storage Storage
	log     *slog.Logger
	// now is the clock; tests replace it.
	now     func() time.Time
	loaders sync.WaitGroup

	mu struct {
		sync.Mutex
		// partitions holds the partitions this broker leads or is loading.
		partitions map[int32]*partition
		closed     bool
	}
}

type partitionStatus uint8

const (
	// partitionLoading: the partition's records are being replayed;
	// requests get COORDINATOR_LOAD_IN_PROGRESS.
	partitionLoading partitionStatus = iota
	partitionActive
	// partitionUnloaded: resigned or failed to load; NOT_COORDINATOR.
	partitionUnloaded
)

type partition struct {
	id int32
	// abandoned tells a running load that the partition was resigned.
	abandoned atomic.Bool

	mu struct {
		sync.Mutex
		status partitionStatus
		// shard is set once the partition is active.
		shard *shard
		timer *time.Timer
		// txnDone are transaction markers that arrived while loading.
		txnDone []txnCompletion
	}
}

var errLoadAbandoned = errors.New("group: partition load abandoned")

// NewCoordinator returns a coordinator that leads no partition yet; call
// OnElected for each __consumer_offsets partition this broker leads.
func NewCoordinator(cfg Config, storage Storage) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Coordinator{config: cfg, storage: storage, log: cfg.logger().With("component", "group-coordinator"), now: time.Now}
	c.mu.partitions = make(map[int32]*partition)
	return c, nil
}

// Partition returns the __consumer_offsets partition coordinating groupID.
func (c *Coordinator) Partition(groupID string) int32 {
	return PartitionFor(groupID, c.config.OffsetsTopicNumPartitions)
}

// ClientHost formats a client address as Kafka shows member hosts: a slash
// and the IP address.
func ClientHost(addr net.Addr) string {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return "/" + a.IP.String()
	case nil:
		return ""
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "/" + addr.String()
	}
	return "/" + host
}

// OnElected makes this coordinator the leader of partition p: its records
// are replayed from Storage in the background, during which requests for its
// groups get COORDINATOR_LOAD_IN_PROGRESS. Electing a partition already led
// or loading does nothing.
func (c *Coordinator) OnElected(p int32) {
	c.mu.Lock()
	if c.mu.closed || c.mu.partitions[p] != nil {
		c.mu.Unlock()
		return
	}
	part := &partition{id: p}
	part.mu.status = partitionLoading
	c.mu.partitions[p] = part
	c.loaders.Add(1)
	c.mu.Unlock()
	go c.load(part)
}

func (c *Coordinator) load(p *partition) {
	defer c.loaders.Done()
	start := time.Now()
	s := newShard(p.id, c.config)
	records := 0
	err := c.loadRecords(p, s, &records)

	p.mu.Lock()
	if p.mu.status != partitionLoading {
		p.mu.Unlock()
		return
	}
	if err != nil {
		p.mu.status = partitionUnloaded
		p.mu.Unlock()
		c.log.Error("failed to load __consumer_offsets partition; its groups are unavailable", "partition", p.id, "err", err)
		c.mu.Lock()
		if c.mu.partitions[p.id] == p {
			delete(c.mu.partitions, p.id)
		}
		c.mu.Unlock()
		return
	}
	p.mu.shard = s
	p.mu.status = partitionActive
	now := c.now()
	c.applyLoadedCompletionsLocked(p, s, now)
	s.onLoaded(now)
	groups := len(s.groups)
	replies := c.drainLocked(p, now)
	p.mu.Unlock()
	c.log.Info("loaded __consumer_offsets partition", "partition", p.id, "records", records, "groups", groups, "took", time.Since(start))
	deliver(replies)
}

// OnResigned gives up partition p: parked requests of its groups are
// answered with NOT_COORDINATOR and its state is dropped; later requests get
// NOT_COORDINATOR.
func (c *Coordinator) OnResigned(p int32) {
	c.mu.Lock()
	part := c.mu.partitions[p]
	delete(c.mu.partitions, p)
	c.mu.Unlock()
	if part != nil {
		c.unload(part)
	}
}

func (c *Coordinator) unload(p *partition) {
	p.abandoned.Store(true)
	p.mu.Lock()
	var replies []func()
	if p.mu.status == partitionActive {
		p.mu.shard.unload(c.now())
		replies = p.mu.shard.takeReplies()
	}
	p.mu.status = partitionUnloaded
	p.mu.shard = nil
	if p.mu.timer != nil {
		p.mu.timer.Stop()
	}
	p.mu.Unlock()
	deliver(replies)
}

// Close resigns every partition, waits for loads in progress to stop, and
// makes later requests answer COORDINATOR_NOT_AVAILABLE.
func (c *Coordinator) Close() {
	c.mu.Lock()
	c.mu.closed = true
	parts := make([]*partition, 0, len(c.mu.partitions))
	for _, p := range c.mu.partitions {
		parts = append(parts, p)
	}
	clear(c.mu.partitions)
	c.mu.Unlock()
	for _, p := range parts {
		c.unload(p)
	}
	c.loaders.Wait()
}

// TopicsDeleted drops the committed offsets of deleted topics in every
// partition this coordinator leads.
func (c *Coordinator) TopicsDeleted(topics ...string) {
	for _, p := range c.partitions() {
		c.runOn(p, func(s *shard, _ time.Time) { s.deleteTopics(topics) })
	}
}

// partitions returns the partitions led or loading, in partition order.
func (c *Coordinator) partitions() []*partition {
	c.mu.Lock()
	defer c.mu.Unlock()
	parts := make([]*partition, 0, len(c.mu.partitions))
	for _, p := range c.mu.partitions {
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b *partition) int { return int(a.id) - int(b.id) })
	return parts
}

// route returns the partition coordinating groupID, or the error to answer.
func (c *Coordinator) route(groupID string) (*partition, int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	p := c.mu.partitions[c.Partition(groupID)]
	if p == nil {
		return nil, kerr.NotCoordinator.Code
	}
	return p, 0
}

// run runs step on the shard coordinating groupID. It returns the error to
// answer when that partition cannot serve (step did not run).
func (c *Coordinator) run(groupID string, step func(s *shard, now time.Time)) int16 {
	p, code := c.route(groupID)
	if code != 0 {
		return code
	}
	return c.runOn(p, step)
}

// runOn runs step on p's shard, appends the records it produced, re-arms
// the timer and delivers the responses.
func (c *Coordinator) runOn(p *partition, step func(s *shard, now time.Time)) int16 {
	p.mu.Lock()
	switch p.mu.status {
	case partitionLoading:
		p.mu.Unlock()
		return kerr.CoordinatorLoadInProgress.Code
	case partitionUnloaded:
		p.mu.Unlock()
		return kerr.NotCoordinator.Code
	}
	now := c.now()
	step(p.mu.shard, now)
	replies := c.drainLocked(p, now)
	p.mu.Unlock()
	deliver(replies)
	return 0
}

// drainLocked appends the shard's pending writes one after another, re-arms
// the partition timer and returns the responses to deliver.
func (c *Coordinator) drainLocked(p *partition, now time.Time) []func() {
	s := p.mu.shard
	for records := s.nextWrite(); records != nil; records = s.nextWrite() {
		_, err := c.storage.Append(p.id, records)
		if err != nil {
			err = fmt.Errorf("group: appending %d records to __consumer_offsets-%d: %w", len(records), p.id, err)
			c.log.Warn("append failed", "err", err)
		}
		s.writeDone(c.now(), err)
	}
	if next, ok := s.nextDeadline(); ok {
		d := max(next.Sub(now), 0)
		if p.mu.timer == nil {
			p.mu.timer = time.AfterFunc(d, func() { c.tick(p) })
		} else {
			p.mu.timer.Reset(d)
		}
	} else if p.mu.timer != nil {
		p.mu.timer.Stop()
	}
	return s.takeReplies()
}

// tick fires p's due timers.
func (c *Coordinator) tick(p *partition) {
	c.runOn(p, func(s *shard, now time.Time) { s.tick(now) })
}

func deliver(replies []func()) {
	for _, r := range replies {
		r()
	}
}
