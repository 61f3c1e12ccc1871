package httpproxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerSettings are what POST /consumers/{group} sets on an instance.
type consumerSettings struct {
	format          format
	autoOffsetReset string // earliest, latest or none
	autoCommit      bool
	fetchMinBytes   int32
	// requestTimeoutMs is the instance's consumer.request.timeout.ms.
	requestTimeoutMs int64
}

type topicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// consumerInstance is one v2 consumer: a franz-go client that joins the
// group when subscribed (a real member, listed by DescribeGroups) or reads
// assigned partitions and commits to the group without joining.
type consumerInstance struct {
	group, name string
	// ownerKey is the session key of the identity that created it; other
	// identities are told it does not exist.
	ownerKey    string
	kafkaOpts   []kgo.Opt
	admin       *kadm.Client
	adminClient *kgo.Client
	settings    consumerSettings
	maxBytes    int64

	// groupAssignment is what the group gave the member, kept by the
	// client's rebalance callbacks (which may run while mu is held).
	groupAssignment struct {
		sync.Mutex
		partitions map[string][]int32
	}

	// mu serializes the instance's requests, as Confluent's consumer
	// state does.
	mu struct {
		sync.Mutex
		client   *kgo.Client // nil while neither subscribed nor assigned
		topics   []string
		pattern  string
		assigned []topicPartition
		// pending are records polled but not answered yet.
		// Invariant: pendingBytes is the key and value bytes of pending,
		// and at most one poll's worth (FetchMaxBytes) is held.
		pending      []*kgo.Record
		pendingBytes int64
		// delivered are the next offsets after the records answered, per
		// partition, not yet committed.
		delivered map[topicPartition]int64
		lastUsed  time.Time
		closed    bool
	}
}

func newInstanceName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "rest-consumer-" + hex.EncodeToString(b[:])
}

// clientOpts are the franz-go options of the instance's client.
func (c *consumerInstance) clientOpts(extra ...kgo.Opt) []kgo.Opt {
	reset := kgo.NewOffset().AtStart()
	if c.settings.autoOffsetReset == "latest" {
		reset = kgo.NewOffset().AtEnd()
	}
	opts := append(slices.Clone(c.kafkaOpts),
		kgo.ClientID(c.name),
		kgo.ConsumeResetOffset(reset),
		kgo.FetchMaxBytes(int32(min(c.maxBytes, 1<<30))),
		kgo.FetchMaxWait(time.Duration(max(c.settings.requestTimeoutMs, 10))*time.Millisecond),
	)
	if c.settings.fetchMinBytes > 0 {
		opts = append(opts, kgo.FetchMinBytes(c.settings.fetchMinBytes))
	}
	return append(opts, extra...)
}

// subscribeLocked replaces the subscription; the new client joins the
// group.
func (c *consumerInstance) subscribeLocked(topics []string, pattern string) error {
	if len(c.mu.assigned) > 0 {
		return errIllegalState("Subscription to topics, partitions and pattern are mutually exclusive")
	}
	extra := []kgo.Opt{kgo.ConsumerGroup(c.group),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
			c.groupAssignment.Lock()
			defer c.groupAssignment.Unlock()
			for topic, partitions := range assigned {
				c.groupAssignment.partitions[topic] = append(c.groupAssignment.partitions[topic], partitions...)
			}
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, client *kgo.Client, revoked map[string][]int32) {
			// A custom callback replaces franz-go's commit on revoke:
			// commit what was answered before the partitions go (this
			// also runs when the instance closes and leaves). A failed
			// commit only means the next owner rereads those records.
			if c.settings.autoCommit {
				_ = client.CommitMarkedOffsets(ctx)
			}
			c.forgetAssignment(ctx, client, revoked)
		}),
		kgo.OnPartitionsLost(c.forgetAssignment),
	}
	c.groupAssignment.Lock()
	c.groupAssignment.partitions = map[string][]int32{}
	c.groupAssignment.Unlock()
	if pattern != "" {
		if _, err := regexp.Compile(pattern); err != nil {
			return errUnprocessable("topic_pattern: %v", err)
		}
		extra = append(extra, kgo.ConsumeRegex(), kgo.ConsumeTopics(pattern))
	} else {
		extra = append(extra, kgo.ConsumeTopics(topics...))
	}
	if c.settings.autoCommit {
		extra = append(extra, kgo.AutoCommitMarks())
	} else {
		extra = append(extra, kgo.DisableAutoCommit())
	}
	client, err := kgo.NewClient(c.clientOpts(extra...)...)
	if err != nil {
		return errKafka(err)
	}
	c.closeClientLocked()
	c.mu.client, c.mu.topics, c.mu.pattern = client, topics, pattern
	return nil
}

// assignLocked replaces the assignment; reading starts at the group's
// committed offsets, else at auto.offset.reset.
func (c *consumerInstance) assignLocked(ctx context.Context, partitions []topicPartition) error {
	if len(c.mu.topics) > 0 || c.mu.pattern != "" {
		return errIllegalState("Subscription to topics, partitions and pattern are mutually exclusive")
	}
	committed, err := c.admin.FetchOffsets(ctx, c.group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return err
	}
	reset := kgo.NewOffset().AtStart()
	if c.settings.autoOffsetReset == "latest" {
		reset = kgo.NewOffset().AtEnd()
	}
	offsets := map[string]map[int32]kgo.Offset{}
	for _, tp := range partitions {
		if offsets[tp.Topic] == nil {
			offsets[tp.Topic] = map[int32]kgo.Offset{}
		}
		offsets[tp.Topic][tp.Partition] = reset
		if at, ok := committed.Lookup(tp.Topic, tp.Partition); ok && at.Err == nil && at.At >= 0 {
			offsets[tp.Topic][tp.Partition] = kgo.NewOffset().At(at.At)
		}
	}
	client, err := kgo.NewClient(c.clientOpts(kgo.ConsumePartitions(offsets))...)
	if err != nil {
		return errKafka(err)
	}
	c.closeClientLocked()
	c.mu.client, c.mu.assigned = client, partitions
	return nil
}

func (c *consumerInstance) forgetAssignment(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
	c.groupAssignment.Lock()
	defer c.groupAssignment.Unlock()
	for topic, partitions := range revoked {
		c.groupAssignment.partitions[topic] = slices.DeleteFunc(c.groupAssignment.partitions[topic], func(p int32) bool { return slices.Contains(partitions, p) })
	}
}

// groupPartitions are the partitions the group assigned the member.
func (c *consumerInstance) groupPartitions() []topicPartition {
	c.groupAssignment.Lock()
	defer c.groupAssignment.Unlock()
	var out []topicPartition
	for topic, partitions := range c.groupAssignment.partitions {
		for _, partition := range partitions {
			out = append(out, topicPartition{topic, partition})
		}
	}
	slices.SortFunc(out, func(a, b topicPartition) int {
		if a.Topic != b.Topic {
			return strings.Compare(a.Topic, b.Topic)
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

func (c *consumerInstance) unsubscribeLocked() {
	c.closeClientLocked()
	c.mu.topics, c.mu.pattern, c.mu.assigned = nil, "", nil
}

// closeClientLocked commits what auto commit owes and closes the client
// (leaving the group).
func (c *consumerInstance) closeClientLocked() {
	if c.mu.client == nil {
		return
	}
	if c.settings.autoCommit && len(c.mu.assigned) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.commitDeliveredLocked(ctx)
		cancel()
	}
	c.mu.client.Close()
	c.mu.client, c.mu.pending, c.mu.pendingBytes = nil, nil, 0
	c.mu.delivered = map[topicPartition]int64{}
}

// pollLocked answers buffered records up to maxBytes (at least one), or
// polls once for at most timeout when none are buffered.
func (c *consumerInstance) pollLocked(ctx context.Context, timeout time.Duration, maxBytes int64) ([]*kgo.Record, error) {
	if c.mu.client == nil {
		return nil, errIllegalState("Consumer is not subscribed to any topics or assigned any partitions")
	}
	if c.settings.autoCommit && len(c.mu.assigned) > 0 {
		if err := c.commitDeliveredLocked(ctx); err != nil {
			return nil, err
		}
	}
	if len(c.mu.pending) == 0 {
		pollCtx, cancel := context.WithTimeout(ctx, timeout)
		fetches := c.mu.client.PollRecords(pollCtx, 0)
		cancel()
		var fetchErr error
		fetches.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && fetchErr == nil {
				fetchErr = err
			}
		})
		if fetchErr != nil && (errors.Is(fetchErr, kerr.TopicAuthorizationFailed) || errors.Is(fetchErr, kerr.GroupAuthorizationFailed)) {
			return nil, fetchErr
		}
		fetches.EachRecord(func(record *kgo.Record) {
			c.mu.pending = append(c.mu.pending, record)
			c.mu.pendingBytes += int64(len(record.Key) + len(record.Value))
		})
	}
	var out []*kgo.Record
	var bytes int64
	for len(c.mu.pending) > 0 {
		record := c.mu.pending[0]
		size := int64(len(record.Key) + len(record.Value))
		if len(out) > 0 && bytes+size > maxBytes {
			break
		}
		out = append(out, record)
		bytes += size
		c.mu.pending = c.mu.pending[1:]
		c.mu.pendingBytes -= size
	}
	for _, record := range out {
		c.mu.delivered[topicPartition{record.Topic, record.Partition}] = record.Offset + 1
	}
	if c.settings.autoCommit && len(c.mu.assigned) == 0 {
		c.mu.client.MarkCommitRecords(out...)
	}
	return out, nil
}

// commitLocked commits offsets (each the last offset consumed, so the
// committed offset is one past it, as Confluent's proxy does), or with nil
// every record answered so far.
func (c *consumerInstance) commitLocked(ctx context.Context, offsets map[topicPartition]int64) error {
	if offsets == nil {
		return c.commitDeliveredLocked(ctx)
	}
	next := map[topicPartition]int64{}
	for tp, offset := range offsets {
		next[tp] = offset + 1
	}
	return c.commitNextLocked(ctx, next)
}

func (c *consumerInstance) commitDeliveredLocked(ctx context.Context) error {
	if len(c.mu.delivered) == 0 {
		return nil
	}
	if err := c.commitNextLocked(ctx, c.mu.delivered); err != nil {
		return err
	}
	c.mu.delivered = map[topicPartition]int64{}
	return nil
}

// commitNextLocked commits next offsets: through the group member when
// subscribed, else as a simple consumer of the group.
func (c *consumerInstance) commitNextLocked(ctx context.Context, next map[topicPartition]int64) error {
	if c.mu.client != nil && len(c.mu.assigned) == 0 {
		uncommitted := map[string]map[int32]kgo.EpochOffset{}
		for tp, offset := range next {
			if uncommitted[tp.Topic] == nil {
				uncommitted[tp.Topic] = map[int32]kgo.EpochOffset{}
			}
			uncommitted[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: offset}
		}
		var commitErr error
		c.mu.client.CommitOffsetsSync(ctx, uncommitted, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, response *kmsg.OffsetCommitResponse, err error) {
			if err != nil {
				commitErr = err
				return
			}
			for _, topic := range response.Topics {
				for _, partition := range topic.Partitions {
					if err := kerr.ErrorForCode(partition.ErrorCode); err != nil && commitErr == nil {
						commitErr = err
					}
				}
			}
		})
		return commitErr
	}
	offsets := kadm.Offsets{}
	for tp, offset := range next {
		offsets.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: offset, LeaderEpoch: -1})
	}
	committed, err := c.admin.CommitOffsets(ctx, c.group, offsets)
	if err != nil {
		return err
	}
	return committed.Error()
}

// seekLocked moves the positions of partitions the instance reads.
func (c *consumerInstance) seekLocked(positions map[string]map[int32]kgo.EpochOffset) error {
	if c.mu.client == nil {
		return errIllegalState("No current assignment for the partitions")
	}
	c.mu.client.SetOffsets(positions)
	// Records buffered from before the seek must not be answered.
	kept := c.mu.pending[:0]
	c.mu.pendingBytes = 0
	for _, record := range c.mu.pending {
		if _, moved := positions[record.Topic][record.Partition]; !moved {
			kept = append(kept, record)
			c.mu.pendingBytes += int64(len(record.Key) + len(record.Value))
		}
	}
	c.mu.pending = kept
	return nil
}

// consumerRegistry holds every instance, bounded by MaxConsumerInstances.
type consumerRegistry struct {
	config Config
	mu     struct {
		sync.Mutex
		// Invariant: len(instances) <= config.MaxConsumerInstances.
		instances map[[2]string]*consumerInstance
	}
}

func newConsumerRegistry(config Config) *consumerRegistry {
	r := &consumerRegistry{config: config}
	r.mu.instances = map[[2]string]*consumerInstance{}
	return r
}

func (r *consumerRegistry) add(instance *consumerInstance) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := [2]string{instance.group, instance.name}
	if _, exists := r.mu.instances[key]; exists {
		return errConsumerExists()
	}
	if len(r.mu.instances) >= r.config.MaxConsumerInstances {
		return errTooManyInstances(r.config.MaxConsumerInstances)
	}
	instance.mu.lastUsed = r.config.Now()
	instance.mu.delivered = map[topicPartition]int64{}
	r.mu.instances[key] = instance
	return nil
}

// get returns the instance for ownerKey and locks it; the caller unlocks.
func (r *consumerRegistry) get(group, name, ownerKey string) (*consumerInstance, error) {
	r.mu.Lock()
	instance, ok := r.mu.instances[[2]string{group, name}]
	r.mu.Unlock()
	if !ok || instance.ownerKey != ownerKey {
		return nil, errConsumerInstanceNotFound()
	}
	instance.mu.Lock()
	if instance.mu.closed {
		instance.mu.Unlock()
		return nil, errConsumerInstanceNotFound()
	}
	instance.mu.lastUsed = r.config.Now()
	return instance, nil
}

// remove deletes and closes an instance the caller holds locked.
func (r *consumerRegistry) removeLocked(instance *consumerInstance) {
	r.mu.Lock()
	delete(r.mu.instances, [2]string{instance.group, instance.name})
	r.mu.Unlock()
	instance.mu.closed = true
	instance.closeClientLocked()
	instance.adminClient.Close()
}

// expire closes the instances unused since consumer.instance.timeout.ms.
func (r *consumerRegistry) expire(now time.Time) []*consumerInstance {
	timeout := time.Duration(r.config.ConsumerInstanceTimeoutMs) * time.Millisecond
	r.mu.Lock()
	var candidates []*consumerInstance
	for _, instance := range r.mu.instances {
		candidates = append(candidates, instance)
	}
	r.mu.Unlock()
	var expired []*consumerInstance
	for _, instance := range candidates {
		if !instance.mu.TryLock() {
			continue // in use right now
		}
		if !instance.mu.closed && now.Sub(instance.mu.lastUsed) > timeout {
			r.removeLocked(instance)
			expired = append(expired, instance)
		}
		instance.mu.Unlock()
	}
	return expired
}

func (r *consumerRegistry) closeAll() {
	r.mu.Lock()
	var all []*consumerInstance
	for _, instance := range r.mu.instances {
		all = append(all, instance)
	}
	r.mu.Unlock()
	for _, instance := range all {
		instance.mu.Lock()
		r.removeLocked(instance)
		instance.mu.Unlock()
	}
}
