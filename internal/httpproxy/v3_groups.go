package httpproxy

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func groupOfV3(r *request, id string, group kadm.DescribedGroup) map[string]any {
	self := clusterURL(r, id) + "/consumer-groups/" + group.Group
	out := map[string]any{
		"kind": "KafkaConsumerGroup", "metadata": resourceMetadata{Self: self, ResourceName: crn("kafka", id, "consumer-group", group.Group)},
		"cluster_id": id, "consumer_group_id": group.Group, "is_simple": group.ProtocolType == "" && len(group.Members) == 0,
		"partition_assignor": group.Protocol, "state": strings.ToUpper(group.State), "type": "CLASSIC",
		"coordinator": related{clusterURL(r, id) + "/brokers/" + strconv.Itoa(int(group.Coordinator.NodeID))},
		"consumers":   related{self + "/consumers"}, "lag_summary": related{self + "/lag-summary"},
	}
	return out
}

// describeGroup describes the path's group; a group nobody knows answers
// 404.
func describeGroup(r *request) (kadm.DescribedGroup, error) {
	name := r.PathValue("group")
	described, err := r.session.admin.DescribeGroups(r.ctx, name)
	if err != nil {
		return kadm.DescribedGroup{}, err
	}
	group, ok := described[name]
	if !ok || errors.Is(group.Err, kerr.GroupIDNotFound) || group.State == "Dead" {
		return kadm.DescribedGroup{}, newError(http.StatusNotFound, 404, "Consumer group %s cannot be found.", name)
	}
	if group.Err != nil {
		return kadm.DescribedGroup{}, group.Err
	}
	return group, nil
}

// GET /v3/clusters/{cluster_id}/consumer-groups.
func (p *Proxy) listGroupsV3(r *request) (int, any, error) {
	id, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	listed, err := r.session.admin.ListGroups(r.ctx)
	if err != nil {
		return 0, nil, err
	}
	names := listed.Groups()
	slices.Sort(names)
	var data []any
	if len(names) > 0 {
		described, err := r.session.admin.DescribeGroups(r.ctx, names...)
		if err != nil {
			return 0, nil, err
		}
		for _, name := range names {
			if group, ok := described[name]; ok && group.Err == nil {
				data = append(data, groupOfV3(r, id, group))
			}
		}
	}
	return http.StatusOK, list(r, "KafkaConsumerGroupList", data), nil
}

// GET /v3/clusters/{cluster_id}/consumer-groups/{group}.
func (p *Proxy) getGroupV3(r *request) (int, any, error) {
	id, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	group, err := describeGroup(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, groupOfV3(r, id, group), nil
}

// GET /v3/clusters/{cluster_id}/consumer-groups/{group}/consumers.
func (p *Proxy) listGroupConsumersV3(r *request) (int, any, error) {
	id, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	group, err := describeGroup(r)
	if err != nil {
		return 0, nil, err
	}
	var data []any
	for _, member := range group.Members {
		self := clusterURL(r, id) + "/consumer-groups/" + group.Group + "/consumers/" + member.MemberID
		data = append(data, map[string]any{
			"kind": "KafkaConsumer", "metadata": resourceMetadata{Self: self, ResourceName: crn("kafka", id, "consumer-group", group.Group, "consumer", member.MemberID)},
			"cluster_id": id, "consumer_group_id": group.Group, "consumer_id": member.MemberID,
			"instance_id": member.InstanceID, "client_id": member.ClientID, "assignments": related{self + "/assignments"},
		})
	}
	return http.StatusOK, list(r, "KafkaConsumerList", data), nil
}

type lagV3 struct {
	Kind            string           `json:"kind"`
	Metadata        resourceMetadata `json:"metadata"`
	ClusterID       string           `json:"cluster_id"`
	ConsumerGroupID string           `json:"consumer_group_id"`
	TopicName       string           `json:"topic_name"`
	PartitionID     int32            `json:"partition_id"`
	CurrentOffset   int64            `json:"current_offset"`
	LogEndOffset    int64            `json:"log_end_offset"`
	Lag             int64            `json:"lag"`
	ConsumerID      string           `json:"consumer_id"`
	InstanceID      *string          `json:"instance_id"`
	ClientID        string           `json:"client_id"`
}

// groupLags computes each committed partition's lag against the log end.
func groupLags(r *request, id string) ([]lagV3, error) {
	group, err := describeGroup(r)
	if err != nil {
		return nil, err
	}
	committed, err := r.session.admin.FetchOffsets(r.ctx, group.Group)
	if err != nil {
		return nil, err
	}
	topics := committed.Partitions().Topics()
	if len(topics) == 0 {
		return nil, nil
	}
	ends, err := r.session.admin.ListEndOffsets(r.ctx, topics...)
	if err != nil {
		return nil, err
	}
	owners := map[topicPartition]kadm.DescribedGroupMember{}
	for _, member := range group.Members {
		if assigned, ok := member.Assigned.AsConsumer(); ok {
			for _, topic := range assigned.Topics {
				for _, partition := range topic.Partitions {
					owners[topicPartition{topic.Topic, partition}] = member
				}
			}
		}
	}
	var out []lagV3
	for _, offset := range committed.Sorted() {
		if offset.Err != nil || offset.At < 0 {
			continue
		}
		end, ok := ends.Lookup(offset.Topic, offset.Partition)
		if !ok || end.Err != nil {
			continue
		}
		id3 := strconv.Itoa(int(offset.Partition))
		self := clusterURL(r, id) + "/consumer-groups/" + group.Group + "/lags/" + offset.Topic + "/partitions/" + id3
		lag := lagV3{
			Kind: "KafkaConsumerLag", Metadata: resourceMetadata{Self: self, ResourceName: crn("kafka", id, "consumer-group", group.Group, "lag", offset.Topic, "partition", id3)},
			ClusterID: id, ConsumerGroupID: group.Group, TopicName: offset.Topic, PartitionID: offset.Partition,
			CurrentOffset: offset.At, LogEndOffset: end.Offset, Lag: max(end.Offset-offset.At, 0),
		}
		if owner, ok := owners[topicPartition{offset.Topic, offset.Partition}]; ok {
			lag.ConsumerID, lag.InstanceID, lag.ClientID = owner.MemberID, owner.InstanceID, owner.ClientID
		}
		out = append(out, lag)
	}
	return out, nil
}

// GET /v3/clusters/{cluster_id}/consumer-groups/{group}/lags.
func (p *Proxy) listLagsV3(r *request) (int, any, error) {
	id, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	lags, err := groupLags(r, id)
	if err != nil {
		return 0, nil, err
	}
	var data []any
	for _, lag := range lags {
		data = append(data, lag)
	}
	return http.StatusOK, list(r, "KafkaConsumerLagList", data), nil
}

// GET /v3/clusters/{cluster_id}/consumer-groups/{group}/lag-summary.
func (p *Proxy) lagSummaryV3(r *request) (int, any, error) {
	id, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	lags, err := groupLags(r, id)
	if err != nil {
		return 0, nil, err
	}
	self := clusterURL(r, id) + "/consumer-groups/" + r.PathValue("group") + "/lag-summary"
	summary := map[string]any{
		"kind": "KafkaConsumerGroupLagSummary", "metadata": resourceMetadata{Self: self, ResourceName: crn("kafka", id, "consumer-group", r.PathValue("group"), "lag-summary", "")},
		"cluster_id": id, "consumer_group_id": r.PathValue("group"),
		"max_lag_consumer_id": "", "max_lag_instance_id": nil, "max_lag_client_id": "",
		"max_lag_topic_name": "", "max_lag_partition_id": 0, "max_lag": 0, "total_lag": 0,
	}
	var total int64
	var worst *lagV3
	for i := range lags {
		total += lags[i].Lag
		if worst == nil || lags[i].Lag > worst.Lag {
			worst = &lags[i]
		}
	}
	summary["total_lag"] = total
	if worst != nil {
		summary["max_lag_consumer_id"], summary["max_lag_instance_id"], summary["max_lag_client_id"] = worst.ConsumerID, worst.InstanceID, worst.ClientID
		summary["max_lag_topic_name"], summary["max_lag_partition_id"], summary["max_lag"] = worst.TopicName, worst.PartitionID, worst.Lag
		summary["max_lag_partition"] = related{clusterURL(r, id) + "/topics/" + worst.TopicName + "/partitions/" + strconv.Itoa(int(worst.PartitionID))}
	}
	return http.StatusOK, summary, nil
}
