package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// RestoreTopic is a topic to create again from a backup (tiered storage's
// cluster manifest): under its old id, with each partition's first leader
// epoch given.
type RestoreTopic struct {
	Name              string
	ID                metadata.UUID
	ReplicationFactor int16
	// LeaderEpochs[i] is partition i's leader epoch; its length is the
	// partition count.
	LeaderEpochs []int32
	Configs      map[string]string
}

// ErrRestoreWaiting means a topic to restore cannot be placed yet: fewer
// brokers are unfenced than its replication factor. Nothing was written.
var ErrRestoreWaiting = errors.New("controller: too few live brokers to restore the topics")

// restoreRecordsPerEntry bounds the records of one metadata entry a
// restore appends, so a bucket of many topics is committed in pieces.
const restoreRecordsPerEntry = 4096

// RestoreTopics creates the topics that neither the name nor the id of
// exists in the image, placed on the unfenced brokers like new topics.
// Topics that exist answer TOPIC_ALREADY_EXISTS and are left as they are,
// so a restore may run again. Until every topic can be placed it writes
// nothing and returns ErrRestoreWaiting; invalid topics fail on their own.
func (c *Controller) RestoreTopics(ctx context.Context, topics []RestoreTopic) ([]TopicResult, error) {
	if err := c.beginTimed(ctx); err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	img := c.image.Load()
	live := liveBrokers(img)
	results := make([]TopicResult, len(topics))
	var batches [][]metadata.Record
	var batch []metadata.Record
	seenNames := map[string]bool{}
	seenIDs := map[metadata.UUID]bool{}
	first := int32(0)
	for i, t := range topics {
		res, recs := c.planRestore(img, live, t, first, seenNames, seenIDs)
		if res.ErrorCode == kerr.InvalidReplicationFactor.Code {
			return nil, fmt.Errorf("%w: topic %q has replication factor %d, %d broker(s) are live", ErrRestoreWaiting, t.Name, t.ReplicationFactor, len(live))
		}
		results[i] = res
		if res.ErrorCode != 0 {
			continue
		}
		seenNames[collisionName(t.Name)], seenIDs[t.ID] = true, true
		first += int32(len(t.LeaderEpochs))
		if len(batch) > 0 && len(batch)+len(recs) > restoreRecordsPerEntry {
			batches = append(batches, batch)
			batch = nil
		}
		batch = append(batch, recs...)
	}
	if len(batch) > 0 {
		batches = append(batches, batch)
	}
	for _, recs := range batches {
		if err := c.commitLocked(ctx, recs); err != nil {
			return nil, err
		}
	}
	return results, nil
}

func (c *Controller) planRestore(img *metadata.Image, live []int32, t RestoreTopic, first int32,
	seenNames map[string]bool, seenIDs map[metadata.UUID]bool) (TopicResult, []metadata.Record) {
	if err := ValidateTopicName(t.Name); err != nil || IsInternalTopic(t.Name) {
		return fail(t.Name, kerr.InvalidTopicException, "topic %q cannot be restored: %v", t.Name, err), nil
	}
	if img.Topic(t.Name) != nil || img.TopicByID(t.ID) != nil {
		return fail(t.Name, kerr.TopicAlreadyExists, "Topic '%s' already exists.", t.Name), nil
	}
	if seenNames[collisionName(t.Name)] || seenIDs[t.ID] {
		return fail(t.Name, kerr.InvalidTopicException, "topic %q collides with another topic restored", t.Name), nil
	}
	for _, other := range img.TopicNames() {
		if collisionName(other) == collisionName(t.Name) {
			return fail(t.Name, kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", t.Name, other), nil
		}
	}
	if len(t.LeaderEpochs) == 0 {
		return fail(t.Name, kerr.InvalidPartitions, "topic %q has no partitions", t.Name), nil
	}
	if t.ReplicationFactor <= 0 || int(t.ReplicationFactor) > len(live) {
		return fail(t.Name, kerr.InvalidReplicationFactor, "replication factor %d with %d live brokers", t.ReplicationFactor, len(live)), nil
	}
	if c.cfg.ValidateTopicConfigs != nil {
		configs := make(map[string]*string, len(t.Configs))
		for k, v := range t.Configs {
			configs[k] = &v
		}
		if err := c.cfg.ValidateTopicConfigs(configs); err != nil {
			return fail(t.Name, kerr.InvalidConfig, "%v", err), nil
		}
	}
	assignments := place(live, first, int32(len(t.LeaderEpochs)), t.ReplicationFactor)
	recs := []metadata.Record{&metadata.TopicRecord{Name: t.Name, TopicID: t.ID}}
	for p, replicas := range assignments {
		recs = append(recs, &metadata.PartitionRecord{
			TopicID: t.ID, Partition: int32(p), Replicas: replicas, ISR: slices.Clone(replicas),
			Leader: replicas[0], LeaderEpoch: max(t.LeaderEpochs[p], 0), PartitionEpoch: 0,
		})
	}
	names := make([]string, 0, len(t.Configs))
	for name := range t.Configs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		value := t.Configs[name]
		recs = append(recs, &metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: t.Name, Name: name, Value: &value})
	}
	return TopicResult{Name: t.Name, TopicID: t.ID, NumPartitions: int32(len(assignments)), ReplicationFactor: t.ReplicationFactor}, recs
}
