package httpproxy

import (
	"errors"
	"net/http"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// v3 resources: each has a kind, metadata.self (its URL) and
// metadata.resource_name (Confluent's CRN), and links to related lists as
// {"related": url}.

type resourceMetadata struct {
	Self         string  `json:"self"`
	ResourceName *string `json:"resource_name,omitempty"`
}

type listMetadata struct {
	Self string  `json:"self"`
	Next *string `json:"next"`
}

type related struct {
	Related string `json:"related"`
}

type resourceList struct {
	Kind     string       `json:"kind"`
	Metadata listMetadata `json:"metadata"`
	Data     []any        `json:"data"`
}

func baseURL(r *request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func list(r *request, kind string, data []any) resourceList {
	if data == nil {
		data = []any{}
	}
	return resourceList{Kind: kind, Metadata: listMetadata{Self: baseURL(r) + r.URL.Path}, Data: data}
}

func crn(parts ...string) *string {
	name := "crn://"
	for i := 0; i+1 < len(parts); i += 2 {
		name += "/" + parts[i] + "=" + parts[i+1]
	}
	return &name
}

// clusterURL is /v3/clusters/{cluster_id} of the request.
func clusterURL(r *request, clusterID string) string {
	return baseURL(r) + "/v3/clusters/" + clusterID
}

type topicV3 struct {
	Kind                   string           `json:"kind"`
	Metadata               resourceMetadata `json:"metadata"`
	ClusterID              string           `json:"cluster_id"`
	TopicName              string           `json:"topic_name"`
	IsInternal             bool             `json:"is_internal"`
	ReplicationFactor      int              `json:"replication_factor"`
	PartitionsCount        int              `json:"partitions_count"`
	Partitions             related          `json:"partitions"`
	Configs                related          `json:"configs"`
	PartitionReassignments related          `json:"partition_reassignments"`
	AuthorizedOperations   []string         `json:"authorized_operations"`
}

func topicOfV3(r *request, clusterID string, detail kadm.TopicDetail) topicV3 {
	self := clusterURL(r, clusterID) + "/topics/" + detail.Topic
	replicas := 0
	for _, partition := range detail.Partitions {
		replicas = len(partition.Replicas)
		break
	}
	return topicV3{
		Kind: "KafkaTopic", Metadata: resourceMetadata{Self: self, ResourceName: crn("kafka", clusterID, "topic", detail.Topic)},
		ClusterID: clusterID, TopicName: detail.Topic, IsInternal: detail.IsInternal,
		ReplicationFactor: replicas, PartitionsCount: len(detail.Partitions),
		Partitions: related{self + "/partitions"}, Configs: related{self + "/configs"},
		PartitionReassignments: related{self + "/partitions/-/reassignment"}, AuthorizedOperations: []string{},
	}
}

// GET /v3/clusters/{cluster_id}/topics.
func (p *Proxy) listTopicsV3(r *request) (int, any, error) {
	clusterID, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	metadata, err := r.session.admin.Metadata(r.ctx)
	if err != nil {
		return 0, nil, err
	}
	var data []any
	for _, detail := range metadata.Topics.Sorted() {
		if detail.Err == nil {
			data = append(data, topicOfV3(r, clusterID, detail))
		}
	}
	return http.StatusOK, list(r, "KafkaTopicList", data), nil
}

// topicDetailV3 is the topic of the path, 404 with Kafka's code when
// unknown.
func topicDetailV3(r *request) (kadm.TopicDetail, error) {
	detail, err := topicDetail(r.ctx, r.session, r.PathValue("topic"))
	if err != nil {
		var api *apiError
		if errors.As(err, &api) && api.code == 40401 {
			return kadm.TopicDetail{}, newError(http.StatusNotFound, 40403, "This server does not host this topic-partition.")
		}
		return kadm.TopicDetail{}, err
	}
	return detail, nil
}

// GET /v3/clusters/{cluster_id}/topics/{topic}.
func (p *Proxy) getTopicV3(r *request) (int, any, error) {
	clusterID, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	detail, err := topicDetailV3(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, topicOfV3(r, clusterID, detail), nil
}

type createTopicV3 struct {
	TopicName         string `json:"topic_name"`
	PartitionsCount   *int32 `json:"partitions_count"`
	ReplicationFactor *int16 `json:"replication_factor"`
	Configs           []struct {
		Name  string  `json:"name"`
		Value *string `json:"value"`
	} `json:"configs"`
	ValidateOnly bool `json:"validate_only"`
}

// POST /v3/clusters/{cluster_id}/topics: 201 with the topic.
func (p *Proxy) createTopicV3(r *request) (int, any, error) {
	clusterID, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	var body createTopicV3
	if err := readBody(r, &body, false); err != nil {
		return 0, nil, err
	}
	if body.TopicName == "" {
		return 0, nil, errUnprocessable("topic_name is required")
	}
	partitions, replicas := int32(-1), int16(-1)
	if body.PartitionsCount != nil {
		partitions = *body.PartitionsCount
	}
	if body.ReplicationFactor != nil {
		replicas = *body.ReplicationFactor
	}
	configs := map[string]*string{}
	for _, config := range body.Configs {
		configs[config.Name] = config.Value
	}
	create := r.session.admin.CreateTopics
	if body.ValidateOnly {
		create = r.session.admin.ValidateCreateTopics
	}
	responses, err := create(r.ctx, partitions, replicas, configs, body.TopicName)
	if err != nil {
		return 0, nil, err
	}
	response, ok := responses[body.TopicName]
	if !ok {
		return 0, nil, errKafka(errors.New("no answer for the topic"))
	}
	if response.Err != nil {
		if errors.Is(response.Err, kerr.TopicAlreadyExists) {
			return 0, nil, errBadRequest("Topic '%s' already exists.", body.TopicName)
		}
		return 0, nil, response.Err
	}
	detail := kadm.TopicDetail{Topic: body.TopicName, Partitions: kadm.PartitionDetails{}}
	for i := range response.NumPartitions {
		detail.Partitions[i] = kadm.PartitionDetail{Topic: body.TopicName, Partition: i, Replicas: make([]int32, response.ReplicationFactor)}
	}
	return http.StatusCreated, topicOfV3(r, clusterID, detail), nil
}

// DELETE /v3/clusters/{cluster_id}/topics/{topic}: 204.
func (p *Proxy) deleteTopicV3(r *request) (int, any, error) {
	if _, err := checkCluster(r); err != nil {
		return 0, nil, err
	}
	topic := r.PathValue("topic")
	responses, err := r.session.admin.DeleteTopics(r.ctx, topic)
	if err != nil {
		return 0, nil, err
	}
	if response, ok := responses[topic]; ok && response.Err != nil {
		return 0, nil, response.Err
	}
	return http.StatusNoContent, nil, nil
}

type partitionV3 struct {
	Kind         string           `json:"kind"`
	Metadata     resourceMetadata `json:"metadata"`
	ClusterID    string           `json:"cluster_id"`
	TopicName    string           `json:"topic_name"`
	PartitionID  int32            `json:"partition_id"`
	Leader       *related         `json:"leader"`
	Replicas     related          `json:"replicas"`
	Reassignment related          `json:"reassignment"`
}

func partitionOfV3(r *request, clusterID string, detail kadm.PartitionDetail) partitionV3 {
	id := strconv.Itoa(int(detail.Partition))
	self := clusterURL(r, clusterID) + "/topics/" + detail.Topic + "/partitions/" + id
	out := partitionV3{
		Kind: "KafkaPartition", Metadata: resourceMetadata{Self: self, ResourceName: crn("kafka", clusterID, "topic", detail.Topic, "partition", id)},
		ClusterID: clusterID, TopicName: detail.Topic, PartitionID: detail.Partition,
		Replicas: related{self + "/replicas"}, Reassignment: related{self + "/reassignment"},
	}
	if detail.Leader >= 0 {
		out.Leader = &related{self + "/replicas/" + strconv.Itoa(int(detail.Leader))}
	}
	return out
}

// GET /v3/clusters/{cluster_id}/topics/{topic}/partitions.
func (p *Proxy) listPartitionsV3(r *request) (int, any, error) {
	clusterID, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	detail, err := topicDetailV3(r)
	if err != nil {
		return 0, nil, err
	}
	var data []any
	for _, partition := range detail.Partitions.Sorted() {
		data = append(data, partitionOfV3(r, clusterID, partition))
	}
	return http.StatusOK, list(r, "KafkaPartitionList", data), nil
}

// GET /v3/clusters/{cluster_id}/topics/{topic}/partitions/{partition}.
func (p *Proxy) getPartitionV3(r *request) (int, any, error) {
	clusterID, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	detail, err := topicDetailV3(r)
	if err != nil {
		return 0, nil, err
	}
	n, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
	partition, ok := detail.Partitions[int32(n)]
	if err != nil || !ok {
		return 0, nil, newError(http.StatusNotFound, 40403, "This server does not host this topic-partition.")
	}
	return http.StatusOK, partitionOfV3(r, clusterID, partition), nil
}

type configV3 struct {
	Kind        string           `json:"kind"`
	Metadata    resourceMetadata `json:"metadata"`
	ClusterID   string           `json:"cluster_id"`
	TopicName   string           `json:"topic_name"`
	Name        string           `json:"name"`
	Value       *string          `json:"value"`
	IsDefault   bool             `json:"is_default"`
	IsReadOnly  bool             `json:"is_read_only"`
	IsSensitive bool             `json:"is_sensitive"`
	Source      string           `json:"source"`
	Synonyms    []synonymV3      `json:"synonyms"`
}

type synonymV3 struct {
	Name   string  `json:"name"`
	Value  *string `json:"value"`
	Source string  `json:"source"`
}

func configsOfTopic(r *request, clusterID, topic string) ([]configV3, error) {
	described, err := r.session.admin.DescribeTopicConfigs(r.ctx, topic)
	if err != nil {
		return nil, err
	}
	resource, err := described.On(topic, nil)
	if err != nil {
		return nil, err
	}
	if resource.Err != nil {
		return nil, resource.Err
	}
	var out []configV3
	for _, config := range resource.Configs {
		self := clusterURL(r, clusterID) + "/topics/" + topic + "/configs/" + config.Key
		entry := configV3{
			Kind: "KafkaTopicConfig", Metadata: resourceMetadata{Self: self, ResourceName: crn("kafka", clusterID, "topic", topic, "config", config.Key)},
			ClusterID: clusterID, TopicName: topic, Name: config.Key, Value: config.Value,
			IsDefault: config.Source == 5 || config.Source == 4, IsReadOnly: false, IsSensitive: config.Sensitive,
			Source: config.Source.String(), Synonyms: []synonymV3{},
		}
		if config.Sensitive {
			entry.Value = nil
		}
		for _, synonym := range config.Synonyms {
			entry.Synonyms = append(entry.Synonyms, synonymV3{Name: synonym.Key, Value: synonym.Value, Source: synonym.Source.String()})
		}
		out = append(out, entry)
	}
	slices.SortFunc(out, func(a, b configV3) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out, nil
}

// GET /v3/clusters/{cluster_id}/topics/{topic}/configs.
func (p *Proxy) listTopicConfigsV3(r *request) (int, any, error) {
	clusterID, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	configs, err := configsOfTopic(r, clusterID, r.PathValue("topic"))
	if err != nil {
		return 0, nil, err
	}
	var data []any
	for _, config := range configs {
		data = append(data, config)
	}
	return http.StatusOK, list(r, "KafkaTopicConfigList", data), nil
}

// GET /v3/clusters/{cluster_id}/topics/{topic}/configs/{name}.
func (p *Proxy) getTopicConfigV3(r *request) (int, any, error) {
	clusterID, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	configs, err := configsOfTopic(r, clusterID, r.PathValue("topic"))
	if err != nil {
		return 0, nil, err
	}
	for _, config := range configs {
		if config.Name == r.PathValue("name") {
			return http.StatusOK, config, nil
		}
	}
	return 0, nil, newError(http.StatusNotFound, 404, "Config %s cannot be found for topic %s.", r.PathValue("name"), r.PathValue("topic"))
}

// alterTopicConfigs applies incremental changes to the path's topic.
func alterTopicConfigs(r *request, changes []kadm.AlterConfig) (int, any, error) {
	if _, err := checkCluster(r); err != nil {
		return 0, nil, err
	}
	topic := r.PathValue("topic")
	responses, err := r.session.admin.AlterTopicConfigs(r.ctx, changes, topic)
	if err != nil {
		return 0, nil, err
	}
	for _, response := range responses {
		if response.Err != nil {
			return 0, nil, response.Err
		}
	}
	return http.StatusNoContent, nil, nil
}

// PUT /v3/clusters/{cluster_id}/topics/{topic}/configs/{name}: {"value"}.
func (p *Proxy) setTopicConfigV3(r *request) (int, any, error) {
	var body struct {
		Value *string `json:"value"`
	}
	if err := readBody(r, &body, false); err != nil {
		return 0, nil, err
	}
	return alterTopicConfigs(r, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: r.PathValue("name"), Value: body.Value}})
}

// DELETE /v3/clusters/{cluster_id}/topics/{topic}/configs/{name}: back to
// the default.
func (p *Proxy) resetTopicConfigV3(r *request) (int, any, error) {
	return alterTopicConfigs(r, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: r.PathValue("name")}})
}

// POST /v3/clusters/{cluster_id}/topics/{topic}/configs:alter:
// {"data": [{"name", "value", "operation": "SET"|"DELETE"}]}.
func (p *Proxy) alterTopicConfigsV3(r *request) (int, any, error) {
	var body struct {
		Data []struct {
			Name      string  `json:"name"`
			Value     *string `json:"value"`
			Operation string  `json:"operation"`
		} `json:"data"`
	}
	if err := readBody(r, &body, false); err != nil {
		return 0, nil, err
	}
	var changes []kadm.AlterConfig
	for _, entry := range body.Data {
		switch entry.Operation {
		case "", "SET", "set":
			changes = append(changes, kadm.AlterConfig{Op: kadm.SetConfig, Name: entry.Name, Value: entry.Value})
		case "DELETE", "delete":
			changes = append(changes, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: entry.Name})
		default:
			return 0, nil, errBadRequest("unknown operation %q, expected SET or DELETE", entry.Operation)
		}
	}
	return alterTopicConfigs(r, changes)
}
