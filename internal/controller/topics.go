package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// Internal topic names, reserved for the coordinators.
const (
	ConsumerOffsetsTopic  = "__consumer_offsets"
	TransactionStateTopic = "__transaction_state"
	MetadataTopic         = "__cluster_metadata"
	ShareGroupStateTopic  = "__share_group_state"
)

// IsInternalTopic reports whether name is one of Kafka's internal topics.
func IsInternalTopic(name string) bool {
	return name == ConsumerOffsetsTopic || name == TransactionStateTopic || name == ShareGroupStateTopic
}

// maxTopicNameLength is Kafka's limit (249, so that partition directory names fit in 255).
const maxTopicNameLength = 249

// ValidateTopicName applies Kafka's topic name rules.
func ValidateTopicName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("topic name is empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic name cannot be %q", name)
	case len(name) > maxTopicNameLength:
		return fmt.Errorf("topic name %q is longer than %d characters", name, maxTopicNameLength)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("topic name %q contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}

// collisionName folds '.' into '_', since both map to the same metric names.
func collisionName(name string) string { return strings.ReplaceAll(name, ".", "_") }

// CreateTopic is one topic to create.
type CreateTopic struct {
	Name              string
	NumPartitions     int32 // -1: num.partitions
	ReplicationFactor int16 // -1: default.replication.factor
	// Assignments, if any, gives the replicas of each partition in order.
	Assignments [][]int32
	Configs     map[string]*string
}

// TopicResult is the outcome for one topic.
type TopicResult struct {
	Name              string
	TopicID           metadata.UUID
	ErrorCode         int16
	ErrorMessage      string
	NumPartitions     int32
	ReplicationFactor int16
}

func fail(name string, err *kerr.Error, format string, args ...any) TopicResult {
	return TopicResult{Name: name, ErrorCode: err.Code, ErrorMessage: fmt.Sprintf(format, args...)}
}

// CreateTopics validates and, unless validateOnly, creates the topics. Each
// topic succeeds or fails on its own, as in Kafka. ctx carries the
// request's deadline (deadline.go): past it, every topic not yet decided
// answers REQUEST_TIMED_OUT.
func (c *Controller) CreateTopics(ctx context.Context, topics []CreateTopic, validateOnly bool) []TopicResult {
	results := make([]TopicResult, len(topics))
	if err := c.beginTimed(ctx); err != nil {
		for i, t := range topics {
			results[i] = fail(t.Name, commitError(err), "%v", err)
		}
		return results
	}
	defer c.mu.Unlock()
	seen := map[string]int{}
	for _, t := range topics {
		seen[t.Name]++
	}
	var recs []metadata.Record
	img := c.image.Load()
	created := map[string]bool{}
	for i, t := range topics {
		if seen[t.Name] > 1 {
			results[i] = fail(t.Name, kerr.InvalidRequest, "topic %q appears more than once in the request", t.Name)
			continue
		}
		res, topicRecs := c.planTopic(img, t, created)
		results[i] = res
		if res.ErrorCode == 0 && !validateOnly {
			recs = append(recs, topicRecs...)
			created[collisionName(t.Name)] = true
		}
	}
	if err := c.commitLocked(ctx, recs); err != nil {
		for i := range results {
			if results[i].ErrorCode == 0 {
				results[i] = fail(results[i].Name, commitError(err), "%v", err)
			}
		}
	}
	return results
}

func (c *Controller) planTopic(img *metadata.Image, t CreateTopic, created map[string]bool) (TopicResult, []metadata.Record) {
	if err := ValidateTopicName(t.Name); err != nil {
		return fail(t.Name, kerr.InvalidTopicException, "%v", err), nil
	}
	if img.Topic(t.Name) != nil {
		return fail(t.Name, kerr.TopicAlreadyExists, "Topic '%s' already exists.", t.Name), nil
	}
	if created[collisionName(t.Name)] {
		return fail(t.Name, kerr.InvalidTopicException, "topic %q collides with another topic in this request", t.Name), nil
	}
	for _, other := range img.TopicNames() {
		if collisionName(other) == collisionName(t.Name) {
			return fail(t.Name, kerr.InvalidTopicException,
				"Topic '%s' collides with existing topic: %s", t.Name, other), nil
		}
	}
	if c.cfg.ValidateTopicConfigs != nil {
		if err := c.cfg.ValidateTopicConfigs(t.Configs); err != nil {
			return fail(t.Name, kerr.InvalidConfig, "%v", err), nil
		}
	}
	live := liveBrokers(img)
	var assignments [][]int32
	if len(t.Assignments) > 0 {
		if t.NumPartitions != -1 || t.ReplicationFactor != -1 {
			return fail(t.Name, kerr.InvalidRequest,
				"Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time."), nil
		}
		if err := validateAssignments(img, t.Assignments); err != nil {
			return fail(t.Name, kerr.InvalidReplicaAssignment, "%v", err), nil
		}
		assignments = t.Assignments
	} else {
		partitions := t.NumPartitions
		if partitions == -1 {
			partitions = c.cfg.DefaultNumPartitions
		}
		if partitions <= 0 {
			return fail(t.Name, kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value."), nil
		}
		factor := t.ReplicationFactor
		if factor == -1 {
			factor = c.cfg.DefaultReplicationFactor
		}
		if factor <= 0 {
			return fail(t.Name, kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value."), nil
		}
		if int(factor) > len(live) {
			return fail(t.Name, kerr.InvalidReplicationFactor,
				"Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered.",
				factor, factor, len(live)), nil
		}
		assignments = place(live, 0, partitions, factor)
	}
	id := metadata.RandomUUID()
	recs := []metadata.Record{&metadata.TopicRecord{Name: t.Name, TopicID: id}}
	for p, replicas := range assignments {
		recs = append(recs, &metadata.PartitionRecord{
			TopicID: id, Partition: int32(p), Replicas: replicas, ISR: slices.Clone(replicas),
			Leader: replicas[0], LeaderEpoch: 0, PartitionEpoch: 0,
		})
	}
	for name, value := range t.Configs {
		if value == nil {
			continue
		}
		recs = append(recs, &metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: t.Name, Name: name, Value: value})
	}
	return TopicResult{Name: t.Name, TopicID: id, NumPartitions: int32(len(assignments)), ReplicationFactor: int16(len(assignments[0]))}, recs
}

// liveBrokers lists the unfenced brokers in placement order: when brokers
// have racks (broker.rack), the list takes one broker from each rack in
// turn, so consecutive brokers, and so the replicas of one partition, sit
// in distinct racks whenever there are enough racks.
func liveBrokers(img *metadata.Image) []int32 {
	byRack := map[string][]int32{}
	var racks []string
	for _, b := range img.Brokers() {
		if b.Fenced {
			continue
		}
		rack := ""
		if b.Rack != nil {
			rack = *b.Rack
		}
		if _, ok := byRack[rack]; !ok {
			racks = append(racks, rack)
		}
		byRack[rack] = append(byRack[rack], b.ID)
	}
	slices.Sort(racks)
	var ids []int32
	for i := 0; len(ids) < len(img.Brokers()); i++ {
		added := false
		for _, rack := range racks {
			if i < len(byRack[rack]) {
				ids = append(ids, byRack[rack][i])
				added = true
			}
		}
		if !added {
			break
		}
	}
	return ids
}

// place spreads partitions [first, first+count) over brokers round-robin,
// each partition's replicas on distinct brokers, leaders rotating.
func place(brokers []int32, first, count int32, factor int16) [][]int32 {
	out := make([][]int32, count)
	for i := range count {
		p := first + i
		replicas := make([]int32, factor)
		for r := range int32(factor) {
			replicas[r] = brokers[(p+r)%int32(len(brokers))]
		}
		out[i] = replicas
	}
	return out
}

func validateAssignments(img *metadata.Image, assignments [][]int32) error {
	factor := len(assignments[0])
	for p, replicas := range assignments {
		if len(replicas) == 0 {
			return fmt.Errorf("partition %d has no replicas", p)
		}
		if len(replicas) != factor {
			return fmt.Errorf("all partitions must have the same number of replicas")
		}
		seen := map[int32]bool{}
		for _, b := range replicas {
			if seen[b] {
				return fmt.Errorf("partition %d lists broker %d twice", p, b)
			}
			seen[b] = true
			if img.Broker(b) == nil {
				return fmt.Errorf("partition %d is assigned to unknown broker %d", p, b)
			}
		}
	}
	return nil
}

// DeleteTopics deletes the topics with the given ids, within ctx's deadline
// (deadline.go).
func (c *Controller) DeleteTopics(ctx context.Context, ids []metadata.UUID) []TopicResult {
	results := make([]TopicResult, len(ids))
	if err := c.beginTimed(ctx); err != nil {
		for i, id := range ids {
			results[i] = TopicResult{TopicID: id, ErrorCode: commitError(err).Code, ErrorMessage: err.Error()}
		}
		return results
	}
	defer c.mu.Unlock()
	img := c.image.Load()
	var recs []metadata.Record
	for i, id := range ids {
		t := img.TopicByID(id)
		switch {
		case t == nil:
			results[i] = TopicResult{TopicID: id, ErrorCode: kerr.UnknownTopicID.Code}
		case !c.cfg.DeleteTopicEnable:
			results[i] = fail(t.Name, kerr.TopicDeletionDisabled, "Topic deletion is disabled.")
		default:
			results[i] = TopicResult{Name: t.Name, TopicID: id}
			recs = append(recs, &metadata.RemoveTopicRecord{TopicID: id})
		}
	}
	if err := c.commitLocked(ctx, recs); err != nil {
		for i := range results {
			if results[i].ErrorCode == 0 {
				results[i] = fail(results[i].Name, commitError(err), "%v", err)
			}
		}
	}
	return results
}

// CreatePartitions grows a topic to count partitions, within ctx's deadline
// (deadline.go).
func (c *Controller) CreatePartitions(ctx context.Context, name string, count int32, assignments [][]int32, validateOnly bool) TopicResult {
	if err := c.beginTimed(ctx); err != nil {
		return fail(name, commitError(err), "%v", err)
	}
	defer c.mu.Unlock()
	img := c.image.Load()
	t := img.Topic(name)
	if t == nil {
		return fail(name, kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", name)
	}
	current := int32(len(t.Partitions))
	if count < current {
		return fail(name, kerr.InvalidPartitions, "The topic %s currently has %d partition(s); %d would not be an increase.", name, current, count)
	}
	if count == current {
		return fail(name, kerr.InvalidPartitions, "Topic already has %d partition(s).", current)
	}
	factor := int16(len(t.Partitions[0].TargetReplicas()))
	var planned [][]int32
	if len(assignments) > 0 {
		if int32(len(assignments)) != count-current {
			return fail(name, kerr.InvalidReplicaAssignment, "Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", count-current, len(assignments))
		}
		if err := validateAssignments(img, assignments); err != nil {
			return fail(name, kerr.InvalidReplicaAssignment, "%v", err)
		}
		planned = assignments
	} else {
		live := liveBrokers(img)
		if int(factor) > len(live) {
			return fail(name, kerr.InvalidReplicationFactor, "Unable to replicate the partition %d time(s): only %d broker(s) are registered.", factor, len(live))
		}
		planned = place(live, current, count-current, factor)
	}
	if validateOnly {
		return TopicResult{Name: name, TopicID: t.ID}
	}
	var recs []metadata.Record
	for i, replicas := range planned {
		recs = append(recs, &metadata.PartitionRecord{
			TopicID: t.ID, Partition: current + int32(i), Replicas: replicas, ISR: slices.Clone(replicas), Leader: replicas[0],
		})
	}
	if err := c.commitLocked(ctx, recs); err != nil {
		return fail(name, commitError(err), "%v", err)
	}
	return TopicResult{Name: name, TopicID: t.ID}
}

// SetConfigs replaces the dynamic configs of a resource with want, writing
// one record per changed key. The caller has validated want.
func (c *Controller) SetConfigs(resourceType int8, name string, want map[string]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return err
	}
	current := c.image.Load().Configs(resourceType, name)
	var recs []metadata.Record
	for k := range current {
		if _, ok := want[k]; !ok {
			recs = append(recs, &metadata.ConfigRecord{ResourceType: resourceType, ResourceName: name, Name: k})
		}
	}
	for k, v := range want {
		if old, ok := current[k]; !ok || old != v {
			v := v
			recs = append(recs, &metadata.ConfigRecord{ResourceType: resourceType, ResourceName: name, Name: k, Value: &v})
		}
	}
	return c.commitLocked(context.Background(), recs)
}

// commitError is the Kafka error for a failed metadata write.
func commitError(err error) *kerr.Error {
	switch {
	case errors.Is(err, ErrNotActive):
		return kerr.NotController
	case IsTimeout(err):
		return kerr.RequestTimedOut
	}
	return kerr.UnknownServerError
}
