package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// Broker liveness, decided by the active controller: every broker
// heartbeats every broker.heartbeat.interval.ms; one that is silent for
// broker.session.timeout.ms is fenced (it leaves the live set, loses its
// partition leaderships to another in-sync replica or to none), and its next
// heartbeat unfences it and gives back the leaderships that had nowhere
// else to go. Time comes in as arguments, so the rules test without clocks.

// ErrUnknownBroker answers a heartbeat from a broker that never registered.
var ErrUnknownBroker = errors.New("controller: unknown broker")

type liveness struct {
	mu sync.Mutex
	// lastSeen is each broker's last heartbeat as this controller saw it.
	lastSeen map[int32]time.Time
	// checkedAt is when FenceStale last ran as the active controller; a
	// controller that was not active for a while gives every broker a fresh
	// session before fencing anyone.
	checkedAt time.Time
}

// Heartbeat records a heartbeat of broker id at now and unfences the broker
// if it was fenced.
func (c *Controller) Heartbeat(id int32, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return err
	}
	img := c.image.Load()
	b := img.Broker(id)
	if b == nil {
		return fmt.Errorf("%w: %d", ErrUnknownBroker, id)
	}
	c.live.mu.Lock()
	if c.live.lastSeen == nil {
		c.live.lastSeen = map[int32]time.Time{}
	}
	c.live.lastSeen[id] = now
	c.live.mu.Unlock()
	if !b.Fenced {
		return nil
	}
	recs := []metadata.Record{&metadata.RegisterBrokerRecord{BrokerID: id, Endpoints: b.Endpoints, Rack: b.Rack, Fenced: false}}
	for _, name := range img.TopicNames() {
		t := img.Topic(name)
		for _, p := range t.Partitions {
			if p != nil && p.Leader < 0 && slices.Contains(p.ISR, id) {
				leader := id
				recs = append(recs, &metadata.PartitionChangeRecord{TopicID: t.ID, Partition: p.Partition, Leader: &leader})
			}
		}
	}
	return c.commitLocked(context.Background(), recs)
}

// FenceStale fences every broker (other than this controller's own node)
// whose last heartbeat is older than sessionTimeout at now.
func (c *Controller) FenceStale(now time.Time, sessionTimeout time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return err
	}
	img := c.image.Load()
	c.live.mu.Lock()
	if c.live.lastSeen == nil {
		c.live.lastSeen = map[int32]time.Time{}
	}
	if c.live.checkedAt.IsZero() || now.Sub(c.live.checkedAt) > sessionTimeout/2 {
		for _, b := range img.Brokers() {
			c.live.lastSeen[b.ID] = now
		}
	}
	c.live.checkedAt = now
	var stale []int32
	for _, b := range img.Brokers() {
		if b.Fenced || b.ID == c.cfg.NodeID {
			continue
		}
		if seen, ok := c.live.lastSeen[b.ID]; !ok || now.Sub(seen) > sessionTimeout {
			stale = append(stale, b.ID)
		}
	}
	c.live.mu.Unlock()
	if len(stale) == 0 {
		return nil
	}
	return c.commitLocked(context.Background(), fenceRecords(img, stale))
}

// fenceRecords fences the brokers and moves their leaderships to another
// unfenced in-sync replica, or to none (-1: offline) when there is none, as
// unclean.leader.election.enable=false requires. Fenced brokers leave the
// ISR of partitions that keep another member.
func fenceRecords(img *metadata.Image, fenced []int32) []metadata.Record {
	var recs []metadata.Record
	isFenced := func(id int32) bool {
		if slices.Contains(fenced, id) {
			return true
		}
		b := img.Broker(id)
		return b == nil || b.Fenced
	}
	for _, id := range fenced {
		b := img.Broker(id)
		recs = append(recs, &metadata.RegisterBrokerRecord{BrokerID: id, Endpoints: b.Endpoints, Rack: b.Rack, Fenced: true})
	}
	for _, name := range img.TopicNames() {
		t := img.Topic(name)
		for _, p := range t.Partitions {
			if p == nil || !slices.ContainsFunc(p.ISR, func(id int32) bool { return slices.Contains(fenced, id) }) {
				continue
			}
			change := &metadata.PartitionChangeRecord{TopicID: t.ID, Partition: p.Partition}
			var isr []int32
			for _, r := range p.ISR {
				if !isFenced(r) {
					isr = append(isr, r)
				}
			}
			if len(isr) > 0 {
				change.ISR = isr
			}
			if slices.Contains(fenced, p.Leader) {
				leader := int32(-1)
				if len(isr) > 0 {
					leader = isr[0]
				}
				change.Leader = &leader
			}
			recs = append(recs, change)
		}
	}
	return recs
}

// ControlledShutdown moves the leaderships of broker id away before it
// stops, as Kafka's controlled shutdown does: the broker is fenced at once
// (instead of after broker.session.timeout.ms of silence) and each partition
// it leads gets another in-sync replica as leader, or none.
func (c *Controller) ControlledShutdown(id int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return err
	}
	img := c.image.Load()
	b := img.Broker(id)
	if b == nil {
		return fmt.Errorf("%w: %d", ErrUnknownBroker, id)
	}
	if b.Fenced {
		return nil
	}
	return c.commitLocked(context.Background(), fenceRecords(img, []int32{id}))
}
