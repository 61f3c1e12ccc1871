package httpproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func errSchemaTypeMismatch(id int, got, want string) error {
	return fmt.Errorf("schema %d is %s, the request's format needs %s", id, got, want)
}

// topicDetail returns the metadata of one topic, 40401 if it is unknown.
func topicDetail(ctx context.Context, s *session, topic string) (kadm.TopicDetail, error) {
	metadata, err := s.admin.Metadata(ctx, topic)
	if err != nil {
		return kadm.TopicDetail{}, err
	}
	detail, ok := metadata.Topics[topic]
	if !ok || errors.Is(detail.Err, kerr.UnknownTopicOrPartition) {
		return kadm.TopicDetail{}, errTopicNotFound()
	}
	if detail.Err != nil {
		return kadm.TopicDetail{}, detail.Err
	}
	return detail, nil
}

// topicPartitionCount is the topic's partition count, asked at most once
// per partitionCountTTL.
func topicPartitionCount(ctx context.Context, s *session, topic string) (int32, error) {
	now := s.config.Now()
	if count, ok := s.cachedPartitions(topic, now); ok {
		return count, nil
	}
	detail, err := topicDetail(ctx, s, topic)
	if err != nil {
		return 0, err
	}
	count := int32(len(detail.Partitions))
	s.cachePartitions(topic, count, now)
	return count, nil
}

type replicaV2 struct {
	Broker int32 `json:"broker"`
	Leader bool  `json:"leader"`
	InSync bool  `json:"in_sync"`
}

type partitionV2 struct {
	Partition int32       `json:"partition"`
	Leader    int32       `json:"leader"`
	Replicas  []replicaV2 `json:"replicas"`
}

func partitionOfV2(detail kadm.PartitionDetail) partitionV2 {
	out := partitionV2{Partition: detail.Partition, Leader: detail.Leader, Replicas: []replicaV2{}}
	for _, replica := range detail.Replicas {
		out.Replicas = append(out.Replicas, replicaV2{Broker: replica, Leader: replica == detail.Leader, InSync: slices.Contains(detail.ISR, replica)})
	}
	return out
}

func sortedPartitions(detail kadm.TopicDetail) []partitionV2 {
	out := []partitionV2{}
	for _, partition := range detail.Partitions.Sorted() {
		out = append(out, partitionOfV2(partition))
	}
	return out
}

// GET /topics: the topic names.
func (p *Proxy) listTopicsV2(r *request) (int, any, error) {
	topics, err := r.session.admin.ListTopics(r.ctx)
	if err != nil {
		return 0, nil, err
	}
	if err := topics.Error(); err != nil {
		return 0, nil, err
	}
	names := topics.Names()
	slices.Sort(names)
	return http.StatusOK, names, nil
}

// GET /topics/{topic}: name, configs, partitions.
func (p *Proxy) getTopicV2(r *request) (int, any, error) {
	topic := r.PathValue("topic")
	detail, err := topicDetail(r.ctx, r.session, topic)
	if err != nil {
		return 0, nil, err
	}
	configs := map[string]string{}
	described, err := r.session.admin.DescribeTopicConfigs(r.ctx, topic)
	if err != nil {
		return 0, nil, err
	}
	for _, resource := range described {
		if resource.Err != nil {
			return 0, nil, resource.Err
		}
		for _, config := range resource.Configs {
			if config.Value != nil && !config.Sensitive {
				configs[config.Key] = *config.Value
			}
		}
	}
	return http.StatusOK, map[string]any{"name": topic, "configs": configs, "partitions": sortedPartitions(detail)}, nil
}

// GET /topics/{topic}/partitions.
func (p *Proxy) listPartitionsV2(r *request) (int, any, error) {
	detail, err := topicDetail(r.ctx, r.session, r.PathValue("topic"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, sortedPartitions(detail), nil
}

func partitionDetail(r *request) (kadm.PartitionDetail, error) {
	detail, err := topicDetail(r.ctx, r.session, r.PathValue("topic"))
	if err != nil {
		return kadm.PartitionDetail{}, err
	}
	n, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
	if err != nil {
		return kadm.PartitionDetail{}, errPartitionNotFound()
	}
	partition, ok := detail.Partitions[int32(n)]
	if !ok {
		return kadm.PartitionDetail{}, errPartitionNotFound()
	}
	return partition, nil
}

// GET /topics/{topic}/partitions/{partition}.
func (p *Proxy) getPartitionV2(r *request) (int, any, error) {
	partition, err := partitionDetail(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, partitionOfV2(partition), nil
}

// GET /topics/{topic}/partitions/{partition}/offsets: the log start and
// end offsets.
func (p *Proxy) partitionOffsetsV2(r *request) (int, any, error) {
	partition, err := partitionDetail(r)
	if err != nil {
		return 0, nil, err
	}
	beginning, end, err := partitionOffsets(r, partition.Topic, partition.Partition)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]int64{"beginning_offset": beginning, "end_offset": end}, nil
}

func partitionOffsets(r *request, topic string, partition int32) (beginning, end int64, err error) {
	starts, err := r.session.admin.ListStartOffsets(r.ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	ends, err := r.session.admin.ListEndOffsets(r.ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	start, ok := starts.Lookup(topic, partition)
	if !ok {
		return 0, 0, errPartitionNotFound()
	}
	last, ok := ends.Lookup(topic, partition)
	if !ok {
		return 0, 0, errPartitionNotFound()
	}
	if start.Err != nil {
		return 0, 0, start.Err
	}
	if last.Err != nil {
		return 0, 0, last.Err
	}
	return start.Offset, last.Offset, nil
}

// GET /brokers: the broker ids.
func (p *Proxy) listBrokersV2(r *request) (int, any, error) {
	brokers, err := r.session.admin.ListBrokers(r.ctx)
	if err != nil {
		return 0, nil, err
	}
	ids := brokers.NodeIDs()
	slices.Sort(ids)
	return http.StatusOK, map[string]any{"brokers": ids}, nil
}
