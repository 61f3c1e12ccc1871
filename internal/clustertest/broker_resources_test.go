package clustertest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestOn sends req to the node at addr only, with no retries elsewhere.
func requestOn[R kmsg.Response](ctx context.Context, t *testing.T, addr string, req kmsg.Request) R {
	t.Helper()
	resp, err := tryRequestOn[R](ctx, addr, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func tryRequestOn[R kmsg.Response](ctx context.Context, addr string, req kmsg.Request) (R, error) {
	var zero R
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0))
	if err != nil {
		return zero, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return zero, fmt.Errorf("%s to %s: %w", kmsg.NameForKey(req.Key()), addr, err)
	}
	return resp.(R), nil
}

func incrementalAlter(resourceType kmsg.ConfigResourceType, name string, op kmsg.IncrementalAlterConfigOp, key string, value *string) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = resourceType, name
	rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	rc.Name, rc.Op, rc.Value = key, op, value
	rr.Configs = append(rr.Configs, rc)
	req.Resources = append(req.Resources, rr)
	return req
}

func describeResource(resourceType kmsg.ConfigResourceType, name string) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = resourceType, name
	req.Resources = append(req.Resources, rr)
	return req
}

// describedValue is the value and source of key in one node's answer.
func describedValue(resp *kmsg.DescribeConfigsResponse, key string) (string, kmsg.ConfigSource, error) {
	if len(resp.Resources) != 1 {
		return "", 0, fmt.Errorf("%d resources answered", len(resp.Resources))
	}
	r := resp.Resources[0]
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return "", 0, fmt.Errorf("%w: %s", err, derefOr(r.ErrorMessage))
	}
	for _, c := range r.Configs {
		if c.Name == key {
			return derefOr(c.Value), c.Source, nil
		}
	}
	return "", 0, fmt.Errorf("%s not described", key)
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func newSaramaAdmin(t *testing.T, addrs []string) sarama.ClusterAdmin {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	adm, err := sarama.NewClusterAdmin(addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adm.Close() })
	return adm
}

// TestBrokerResourcesOnEveryNode sends every API that names a broker, or
// must be sent to a particular node, to each node of a three-node cluster,
// the active controller and the others, with franz-go (kadm and raw
// requests) and sarama, and checks Kafka's answers: a BROKER resource is
// accepted by the broker it names, whichever node leads the quorum, and
// refused with INVALID_REQUEST by any other; BROKER_LOGGER changes stay on
// the node that receives them. A per-broker message.max.bytes altered on
// node 2 then limits produce to node 2's partitions only, and it and its
// DYNAMIC_BROKER_CONFIG source survive node 2's restart.
func TestBrokerResourcesOnEveryNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	md, err := metadataOf(ctx, t, c.Nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("active controller: node %d", md.ControllerID)
	kadmin := kadm.NewClient(newClient(t, c.Addrs()))
	sadmin := newSaramaAdmin(t, c.Addrs())
	if err := createTopicVia(ctx, c.Nodes[0].Addr(), "mixed", 1, 1); err != nil {
		t.Fatal(err)
	}

	const key = "log.cleaner.backoff.ms"
	for i, n := range c.Nodes {
		id := int32(i + 1)
		name := strconv.Itoa(int(id))
		other := strconv.Itoa(int(id%3) + 1)

		// kadm sends a broker resource to the broker it names.
		value := strconv.Itoa(16000 + int(id))
		alt, err := kadmin.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: key, Value: &value}}, id)
		if err == nil {
			err = alterError(alt, name)
		}
		if err != nil {
			t.Fatalf("kadm AlterBrokerConfigs on broker %d: %v", id, err)
		}
		WaitFor(t, 10*time.Second, func() error {
			described, err := kadmin.DescribeBrokerConfigs(ctx, id)
			if err != nil {
				return err
			}
			cfg, err := described.On(name, nil)
			if err == nil {
				err = cfg.Err
			}
			if err != nil {
				return fmt.Errorf("kadm DescribeBrokerConfigs %d: %w", id, err)
			}
			for _, e := range cfg.Configs {
				if e.Key == key {
					if e.MaybeValue() != value || e.Source != kmsg.ConfigSourceDynamicBrokerConfig {
						return fmt.Errorf("broker %d: %s = %q (%v), want %q DYNAMIC_BROKER_CONFIG", id, key, e.MaybeValue(), e.Source, value)
					}
					return nil
				}
			}
			return fmt.Errorf("broker %d: %s not described", id, key)
		})

		// sarama, incremental and legacy, to the broker named.
		value = strconv.Itoa(17000 + int(id))
		if err := sadmin.IncrementalAlterConfig(sarama.BrokerResource, name, map[string]sarama.IncrementalAlterConfigsEntry{
			key: {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &value}}, false); err != nil {
			t.Fatalf("sarama IncrementalAlterConfig on broker %d: %v", id, err)
		}
		checkSaramaBrokerValue(t, sadmin, sarama.BrokerResource, name, key, value, sarama.SourceDynamicBroker)
		value = strconv.Itoa(18000 + int(id))
		if err := sadmin.AlterConfig(sarama.BrokerResource, name, map[string]*string{key: &value}, false); err != nil {
			t.Fatalf("sarama AlterConfig on broker %d: %v", id, err)
		}
		checkSaramaBrokerValue(t, sadmin, sarama.BrokerResource, name, key, value, sarama.SourceDynamicBroker)

		// samsa configs, as the user in the report ran it.
		value = strconv.Itoa(19000 + int(id))
		if out, err := exec.Command(Binary(t), "configs", "alter", "--broker", name, "--set", key+"="+value,
			"--bootstrap-server", strings.Join(c.Addrs(), ",")).CombinedOutput(); err != nil {
			t.Fatalf("samsa configs alter --broker %s: %v\n%s", name, err, out)
		}
		WaitFor(t, 10*time.Second, func() error {
			out, err := exec.Command(Binary(t), "configs", "describe", "--broker", name,
				"--bootstrap-server", n.Addr()).CombinedOutput()
			if err != nil || !strings.Contains(string(out), value) {
				return fmt.Errorf("samsa configs describe --broker %s: %v\n%s", name, err, out)
			}
			return nil
		})

		// Another broker's resource, sent to this node, is Kafka's
		// INVALID_REQUEST for every API.
		wantAlter := "Unexpected broker id, expected " + name + ", but received " + other
		inc := requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, n.Addr(), incrementalAlter(kmsg.ConfigResourceTypeBroker, other, kmsg.IncrementalAlterConfigOpSet, key, &value))
		checkResourceError(t, "IncrementalAlterConfigs", inc.Resources[0].ErrorCode, inc.Resources[0].ErrorMessage, kerr.InvalidRequest, wantAlter)
		legacy := kmsg.NewPtrAlterConfigsRequest()
		lr := kmsg.NewAlterConfigsRequestResource()
		lr.ResourceType, lr.ResourceName = kmsg.ConfigResourceTypeBroker, other
		lc := kmsg.NewAlterConfigsRequestResourceConfig()
		lc.Name, lc.Value = key, &value
		lr.Configs = append(lr.Configs, lc)
		legacy.Resources = append(legacy.Resources, lr)
		la := requestOn[*kmsg.AlterConfigsResponse](ctx, t, n.Addr(), legacy)
		checkResourceError(t, "AlterConfigs", la.Resources[0].ErrorCode, la.Resources[0].ErrorMessage, kerr.InvalidRequest, wantAlter)
		dc := requestOn[*kmsg.DescribeConfigsResponse](ctx, t, n.Addr(), describeResource(kmsg.ConfigResourceTypeBroker, other))
		checkResourceError(t, "DescribeConfigs", dc.Resources[0].ErrorCode, dc.Resources[0].ErrorMessage, kerr.InvalidRequest,
			"Unexpected broker id, expected "+name+" or empty string, but received "+other)
		dl := requestOn[*kmsg.DescribeConfigsResponse](ctx, t, n.Addr(), describeResource(kmsg.ConfigResourceTypeBrokerLogger, other))
		checkResourceError(t, "DescribeConfigs BROKER_LOGGER", dl.Resources[0].ErrorCode, dl.Resources[0].ErrorMessage, kerr.InvalidRequest,
			"Unexpected broker id, expected "+name+" but received "+other)
		il := requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, n.Addr(), incrementalAlter(kmsg.ConfigResourceTypeBrokerLogger, other, kmsg.IncrementalAlterConfigOpSet, "api", strptr("DEBUG")))
		checkResourceError(t, "IncrementalAlterConfigs BROKER_LOGGER", il.Resources[0].ErrorCode, il.Resources[0].ErrorMessage, kerr.InvalidRequest, wantAlter)

		// The cluster-wide default resource is accepted by every node.
		defaultValue := strconv.Itoa(60000 + int(id))
		da := requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, n.Addr(), incrementalAlter(kmsg.ConfigResourceTypeBroker, "", kmsg.IncrementalAlterConfigOpSet, "log.segment.delete.delay.ms", &defaultValue))
		if err := kerr.ErrorForCode(da.Resources[0].ErrorCode); err != nil {
			t.Fatalf("node %d: default broker resource: %v %s", id, err, derefOr(da.Resources[0].ErrorMessage))
		}

		// BROKER_LOGGER: sarama sends it to the node named; the level
		// changes there and nowhere else, and DELETE restores the root's.
		debug := "DEBUG"
		if err := sadmin.IncrementalAlterConfig(sarama.BrokerLoggerResource, name, map[string]sarama.IncrementalAlterConfigsEntry{
			"group": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &debug}}, false); err != nil {
			t.Fatalf("sarama BROKER_LOGGER on %d: %v", id, err)
		}
		level, source, err := describedValue(requestOn[*kmsg.DescribeConfigsResponse](ctx, t, n.Addr(), describeResource(kmsg.ConfigResourceTypeBrokerLogger, name)), "group")
		if err != nil || level != "DEBUG" || source != kmsg.ConfigSourceDynamicBrokerLoggerConfig {
			t.Fatalf("node %d: logger group = %q (%v, %v), want DEBUG DYNAMIC_BROKER_LOGGER_CONFIG", id, level, source, err)
		}
		// sarama has no name for DYNAMIC_BROKER_LOGGER_CONFIG (6).
		checkSaramaBrokerValue(t, sadmin, sarama.BrokerLoggerResource, name, "group", "DEBUG", sarama.ConfigSource(kmsg.ConfigSourceDynamicBrokerLoggerConfig))
		otherNode := c.Nodes[id%3]
		if level, _, err := describedValue(requestOn[*kmsg.DescribeConfigsResponse](ctx, t, otherNode.Addr(), describeResource(kmsg.ConfigResourceTypeBrokerLogger, other)), "group"); err != nil || level != "INFO" {
			t.Fatalf("node %s: logger group = %q (%v) after a change on node %d, want INFO", other, level, err, id)
		}
		bad := requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, n.Addr(), incrementalAlter(kmsg.ConfigResourceTypeBrokerLogger, name, kmsg.IncrementalAlterConfigOpSet, "group", strptr("LOUD")))
		checkResourceError(t, "BROKER_LOGGER bad level", bad.Resources[0].ErrorCode, bad.Resources[0].ErrorMessage, kerr.InvalidConfig, "is not a supported log level")
		for _, bad := range []struct {
			op      kmsg.IncrementalAlterConfigOp
			logger  string
			value   *string
			want    *kerr.Error
			message string
		}{
			{kmsg.IncrementalAlterConfigOpSet, "kafka.server.KafkaApis", strptr("DEBUG"), kerr.InvalidConfig, "Logger kafka.server.KafkaApis does not exist!"},
			{kmsg.IncrementalAlterConfigOpDelete, "root", nil, kerr.InvalidRequest, "Removing the log level of the root logger is not allowed"},
			{kmsg.IncrementalAlterConfigOpAppend, "api", strptr("DEBUG"), kerr.InvalidRequest, "APPEND operation is not allowed for the BROKER_LOGGER resource"},
			{kmsg.IncrementalAlterConfigOpSet, "api", nil, kerr.InvalidRequest, "Null value not supported for : api"},
		} {
			resp := requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, n.Addr(), incrementalAlter(kmsg.ConfigResourceTypeBrokerLogger, name, bad.op, bad.logger, bad.value))
			checkResourceError(t, "BROKER_LOGGER "+bad.op.String()+" "+bad.logger, resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, bad.want, bad.message)
		}
		unset := requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, n.Addr(), incrementalAlter(kmsg.ConfigResourceTypeBrokerLogger, name, kmsg.IncrementalAlterConfigOpDelete, "group", nil))
		if err := kerr.ErrorForCode(unset.Resources[0].ErrorCode); err != nil {
			t.Fatalf("node %d: unset logger: %v", id, err)
		}
		if level, _, err := describedValue(requestOn[*kmsg.DescribeConfigsResponse](ctx, t, n.Addr(), describeResource(kmsg.ConfigResourceTypeBrokerLogger, name)), "group"); err != nil || level != "INFO" {
			t.Fatalf("node %d: logger group = %q (%v) after DELETE, want INFO", id, level, err)
		}

		// DescribeLogDirs answers for the node asked, by kadm and sarama.
		dirs, err := kadmin.DescribeBrokerLogDirs(ctx, id, nil)
		if err == nil {
			err = dirs.Error()
		}
		if err != nil || len(dirs) == 0 {
			t.Fatalf("kadm DescribeBrokerLogDirs %d: %v (%d dirs)", id, err, len(dirs))
		}
		sdirs, err := sadmin.DescribeLogDirs([]int32{id})
		if err != nil || len(sdirs[id]) == 0 {
			t.Fatalf("sarama DescribeLogDirs %d: %v (%d dirs)", id, err, len(sdirs[id]))
		}

		// One request mixing resources decided here (another broker's,
		// this node's loggers) with ones the controller decides (this
		// broker's configs, a topic's): one answer each, in order.
		mixed := kmsg.NewPtrIncrementalAlterConfigsRequest()
		for _, r := range []struct {
			resourceType kmsg.ConfigResourceType
			name, key    string
			value        string
		}{
			{kmsg.ConfigResourceTypeBroker, other, key, "20000"},
			{kmsg.ConfigResourceTypeBrokerLogger, name, "api", "INFO"},
			{kmsg.ConfigResourceTypeTopic, "mixed", "retention.ms", "7200000"},
			{kmsg.ConfigResourceTypeBroker, name, key, "20000"},
		} {
			mixed.Resources = append(mixed.Resources, incrementalAlter(r.resourceType, r.name, kmsg.IncrementalAlterConfigOpSet, r.key, strptr(r.value)).Resources[0])
		}
		mr := requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, n.Addr(), mixed)
		if len(mr.Resources) != 4 {
			t.Fatalf("mixed IncrementalAlterConfigs: %d answers, want 4", len(mr.Resources))
		}
		for j, want := range []int16{kerr.InvalidRequest.Code, 0, 0, 0} {
			got := mr.Resources[j]
			if got.ResourceType != mixed.Resources[j].ResourceType || got.ResourceName != mixed.Resources[j].ResourceName || got.ErrorCode != want {
				t.Fatalf("mixed IncrementalAlterConfigs to node %d: answer %d is %v %q %v, want %v %q %v", id, j,
					got.ResourceType, got.ResourceName, kerr.ErrorForCode(got.ErrorCode),
					mixed.Resources[j].ResourceType, mixed.Resources[j].ResourceName, kerr.ErrorForCode(want))
			}
		}

		twice := incrementalAlter(kmsg.ConfigResourceTypeTopic, "mixed", kmsg.IncrementalAlterConfigOpSet, "retention.ms", strptr("7200000"))
		twice.Resources = append(twice.Resources, twice.Resources[0])
		for j, r := range requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, n.Addr(), twice).Resources {
			checkResourceError(t, fmt.Sprintf("resource named twice, answer %d", j), r.ErrorCode, r.ErrorMessage, kerr.InvalidRequest, "Each resource must appear at most once.")
		}

		// The controller's admin APIs, sent to this node.
		checkForwardedAdminAPIs(ctx, t, n.Addr(), "sweep-"+name)
	}

	// The defaults set through each node: the last one holds everywhere.
	for i, n := range c.Nodes {
		WaitFor(t, 10*time.Second, func() error {
			value, source, err := describedValue(requestOn[*kmsg.DescribeConfigsResponse](ctx, t, n.Addr(), describeResource(kmsg.ConfigResourceTypeBroker, "")), "log.segment.delete.delay.ms")
			if err != nil {
				return err
			}
			if value != "60003" || source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
				return fmt.Errorf("node %d: default = %q (%v), want 60003 DYNAMIC_DEFAULT_BROKER_CONFIG", i+1, value, source)
			}
			return nil
		})
	}

	checkPerBrokerLimitSurvivesRestart(ctx, t, c, kadmin, sadmin)
}

func strptr(s string) *string { return &s }

// alterError is the error kadm's answer gives the resource name.
func alterError(rs kadm.AlterConfigsResponses, name string) error {
	r, err := rs.On(name, nil)
	if err != nil {
		return err
	}
	if r.Err != nil {
		return fmt.Errorf("%w: %s", r.Err, r.ErrMessage)
	}
	return nil
}

func checkResourceError(t *testing.T, api string, code int16, message *string, want *kerr.Error, wantMessage string) {
	t.Helper()
	if code != want.Code || !strings.Contains(derefOr(message), wantMessage) {
		t.Fatalf("%s: %v %q, want %v %q", api, kerr.ErrorForCode(code), derefOr(message), want, wantMessage)
	}
}

// checkSaramaBrokerValue polls the node with sarama until it describes key
// as want from wantSource: the node applies a change once it follows the
// metadata log past it.
func checkSaramaBrokerValue(t *testing.T, adm sarama.ClusterAdmin, resourceType sarama.ConfigResourceType, name, key, want string, wantSource sarama.ConfigSource) {
	t.Helper()
	WaitFor(t, 10*time.Second, func() error {
		entries, err := adm.DescribeConfig(sarama.ConfigResource{Type: resourceType, Name: name, ConfigNames: []string{key}})
		if err != nil {
			return fmt.Errorf("sarama DescribeConfig %s: %w", name, err)
		}
		for _, e := range entries {
			if e.Name == key {
				if e.Value != want || e.Source != wantSource {
					return fmt.Errorf("sarama: broker %s %s = %q (%v), want %q (%v)", name, key, e.Value, e.Source, want, wantSource)
				}
				return nil
			}
		}
		return fmt.Errorf("sarama: broker %s: %s not described", name, key)
	})
}

// checkForwardedAdminAPIs sends the controller's admin APIs to the node at
// addr only: the active controller decides them there, any other node
// forwards them.
func checkForwardedAdminAPIs(ctx context.Context, t *testing.T, addr, topic string) {
	t.Helper()
	if err := createTopicVia(ctx, addr, topic, 1, 3); err != nil {
		t.Fatalf("CreateTopics via %s: %v", addr, err)
	}
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.TimeoutMillis = 10000
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = topic, 2
	cp.Topics = append(cp.Topics, cpt)
	if resp := requestOn[*kmsg.CreatePartitionsResponse](ctx, t, addr, cp); resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("CreatePartitions via %s: %v", addr, kerr.ErrorForCode(resp.Topics[0].ErrorCode))
	}
	ta := requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, addr, incrementalAlter(kmsg.ConfigResourceTypeTopic, topic, kmsg.IncrementalAlterConfigOpSet, "retention.ms", strptr("3600000")))
	if err := kerr.ErrorForCode(ta.Resources[0].ErrorCode); err != nil {
		t.Fatalf("topic IncrementalAlterConfigs via %s: %v", addr, err)
	}
	// A preferred election of a partition its preferred replica leads is
	// not needed.
	var el *kmsg.ElectLeadersResponse
	WaitFor(t, 15*time.Second, func() error {
		req := kmsg.NewPtrElectLeadersRequest()
		req.TimeoutMillis = 10000
		rt := kmsg.NewElectLeadersRequestTopic()
		rt.Topic, rt.Partitions = topic, []int32{0}
		req.Topics = append(req.Topics, rt)
		el = requestOn[*kmsg.ElectLeadersResponse](ctx, t, addr, req)
		if len(el.Topics) != 1 || len(el.Topics[0].Partitions) != 1 {
			return fmt.Errorf("ElectLeaders answered %d topics", len(el.Topics))
		}
		if code := el.Topics[0].Partitions[0].ErrorCode; code != kerr.ElectionNotNeeded.Code {
			return fmt.Errorf("ElectLeaders via %s: %v, want ELECTION_NOT_NEEDED", addr, kerr.ErrorForCode(code))
		}
		return nil
	})
	lr := kmsg.NewPtrListPartitionReassignmentsRequest()
	lr.TimeoutMillis = 10000
	if resp := requestOn[*kmsg.ListPartitionReassignmentsResponse](ctx, t, addr, lr); resp.ErrorCode != 0 {
		t.Fatalf("ListPartitionReassignments via %s: %v", addr, kerr.ErrorForCode(resp.ErrorCode))
	}
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.TimeoutMillis = 10000
	dt.TopicNames = []string{topic}
	dtt := kmsg.NewDeleteTopicsRequestTopic()
	dtt.Topic = &dt.TopicNames[0]
	dt.Topics = append(dt.Topics, dtt)
	if resp := requestOn[*kmsg.DeleteTopicsResponse](ctx, t, addr, dt); resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("DeleteTopics via %s: %v", addr, kerr.ErrorForCode(resp.Topics[0].ErrorCode))
	}
}

// checkPerBrokerLimitSurvivesRestart sets message.max.bytes on broker 2
// alone and checks it limits produce to the partition node 2 leads, not the
// one node 1 leads, before and after node 2 restarts.
func checkPerBrokerLimitSurvivesRestart(ctx context.Context, t *testing.T, c *Cluster, kadmin *kadm.Client, sadmin sarama.ClusterAdmin) {
	t.Helper()
	const topic = "per-broker-limit"
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for partition, broker := range []int32{2, 1} {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = int32(partition), []int32{broker}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	req.Topics = append(req.Topics, rt)
	if resp := requestOn[*kmsg.CreateTopicsResponse](ctx, t, c.Nodes[0].Addr(), req); resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics: %v", kerr.ErrorForCode(resp.Topics[0].ErrorCode))
	}
	limit := "2000"
	alt, err := kadmin.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "message.max.bytes", Value: &limit}}, 2)
	if err == nil {
		err = alterError(alt, "2")
	}
	if err != nil {
		t.Fatalf("AlterBrokerConfigs message.max.bytes on broker 2: %v", err)
	}
	producer := newClient(t, c.Addrs(), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(1<<20), kgo.RecordRetries(3), kgo.ProducerBatchCompression(kgo.NoCompression()))
	big := strings.Repeat("x", 5000)
	check := func(stage string) {
		t.Helper()
		WaitFor(t, 30*time.Second, func() error {
			err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(big)}).FirstErr()
			if !errors.Is(err, kerr.MessageTooLarge) {
				return fmt.Errorf("%s: 5000 bytes to node 2's partition: %v, want MESSAGE_TOO_LARGE", stage, err)
			}
			if err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 1, Value: []byte(big)}).FirstErr(); err != nil {
				return fmt.Errorf("%s: 5000 bytes to node 1's partition: %v", stage, err)
			}
			return nil
		})
		checkSaramaBrokerValue(t, sadmin, sarama.BrokerResource, "2", "message.max.bytes", limit, sarama.SourceDynamicBroker)
	}
	check("before restart")
	c.Nodes[1].Restart()
	WaitFor(t, 30*time.Second, func() error {
		resp, err := tryRequestOn[*kmsg.DescribeConfigsResponse](ctx, c.Nodes[1].Addr(), describeResource(kmsg.ConfigResourceTypeBroker, "2"))
		if err != nil {
			return err
		}
		value, source, err := describedValue(resp, "message.max.bytes")
		if err != nil {
			return err
		}
		if value != limit || source != kmsg.ConfigSourceDynamicBrokerConfig {
			return fmt.Errorf("after restart node 2 describes message.max.bytes = %q (%v)", value, source)
		}
		return nil
	})
	check("after restart")
}

// TestBrokerConfigsWithDedicatedController: with a dedicated controller
// (process.roles=controller) every broker forwards its broker-resource
// changes, and each broker accepts its own resource, refuses another's,
// and shows its own override after a restart.
func TestBrokerConfigsWithDedicatedController(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartDedicatedCluster(t, 1, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kadmin := kadm.NewClient(newClient(t, c.Addrs()))
	const key = "log.cleaner.backoff.ms"
	for i, n := range c.Nodes {
		id := int32(i + 2)
		name, other := strconv.Itoa(int(id)), strconv.Itoa(int(5-id))
		value := strconv.Itoa(21000 + int(id))
		alt, err := kadmin.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: key, Value: &value}}, id)
		if err == nil {
			err = alterError(alt, name)
		}
		if err != nil {
			t.Fatalf("kadm AlterBrokerConfigs on broker %d: %v", id, err)
		}
		inc := requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, n.Addr(), incrementalAlter(kmsg.ConfigResourceTypeBroker, other, kmsg.IncrementalAlterConfigOpSet, key, &value))
		checkResourceError(t, "IncrementalAlterConfigs", inc.Resources[0].ErrorCode, inc.Resources[0].ErrorMessage, kerr.InvalidRequest,
			"Unexpected broker id, expected "+name+", but received "+other)
	}
	c.Nodes[0].Restart()
	for i, n := range c.Nodes {
		id := strconv.Itoa(i + 2)
		WaitFor(t, 30*time.Second, func() error {
			resp, err := tryRequestOn[*kmsg.DescribeConfigsResponse](ctx, n.Addr(), describeResource(kmsg.ConfigResourceTypeBroker, id))
			if err != nil {
				return err
			}
			value, source, err := describedValue(resp, key)
			if err != nil {
				return err
			}
			if want := strconv.Itoa(21000 + i + 2); value != want || source != kmsg.ConfigSourceDynamicBrokerConfig {
				return fmt.Errorf("broker %s: %s = %q (%v), want %s DYNAMIC_BROKER_CONFIG", id, key, value, source, want)
			}
			return nil
		})
	}
}
