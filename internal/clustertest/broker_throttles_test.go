package clustertest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerThrottleKeys are the broker configs kafka-reassign-partitions
// --verify deletes on every broker once a reassignment is complete.
var brokerThrottleKeys = []string{
	"leader.replication.throttled.rate",
	"follower.replication.throttled.rate",
	"replica.alter.log.dirs.io.max.bytes.per.second",
}

// TestClearReplicationThrottlesOnEveryNode drives, with kadm, the requests
// kafka-reassign-partitions --verify sends when it clears throttles on a
// three-node cluster: one IncrementalAlterConfigs call deleting the broker
// throttles of brokers 1, 2 and 3 (the client sends each BROKER resource to
// the broker it names, the active controller among them), then the topic's
// throttled replica lists. Each node accepts the DELETE of its own
// resource, whether it is the active controller or forwards to it, and
// still refuses another broker's with INVALID_REQUEST.
func TestClearReplicationThrottlesOnEveryNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	md, err := metadataOf(ctx, t, c.Nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("active controller: node %d", md.ControllerID)
	kadmin := kadm.NewClient(newClient(t, c.Addrs()))

	const topic = "throttled"
	if err := createTopicVia(ctx, c.Nodes[0].Addr(), topic, 2, 3); err != nil {
		t.Fatal(err)
	}
	// --execute --throttle sets the topic's lists; --verify deletes them.
	lists := map[string]string{
		"leader.replication.throttled.replicas":   "0:1,0:2,1:2,1:3",
		"follower.replication.throttled.replicas": "0:3,1:1",
	}
	var set []kadm.AlterConfig
	for key, value := range lists {
		set = append(set, kadm.AlterConfig{Op: kadm.SetConfig, Name: key, Value: strptr(value)})
	}
	if err := alterTopic(ctx, kadmin, topic, set); err != nil {
		t.Fatalf("setting the throttled replica lists: %v", err)
	}
	waitTopicLists(ctx, t, kadmin, topic, lists)

	var deletes []kadm.AlterConfig
	for _, key := range brokerThrottleKeys {
		deletes = append(deletes, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: key})
	}
	// Twice: the second run deletes what is no longer there, as a rerun
	// of --verify does.
	for run := 1; run <= 2; run++ {
		responses, err := kadmin.AlterBrokerConfigs(ctx, deletes, 1, 2, 3)
		if err != nil {
			t.Fatalf("run %d: AlterBrokerConfigs DELETE on brokers 1, 2, 3: %v", run, err)
		}
		if len(responses) != 3 {
			t.Fatalf("run %d: %d answers, want 3", run, len(responses))
		}
		for id := 1; id <= 3; id++ {
			if err := alterError(responses, strconv.Itoa(id)); err != nil {
				t.Fatalf("run %d: clearing broker %d's throttles (active controller %d): %v", run, id, md.ControllerID, err)
			}
		}
	}

	for i, n := range c.Nodes {
		name, other := strconv.Itoa(i+1), strconv.Itoa((i+1)%3+1)
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		for _, resourceName := range []string{name, other} {
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, resourceName
			for _, key := range brokerThrottleKeys {
				rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
				rc.Name, rc.Op = key, kmsg.IncrementalAlterConfigOpDelete
				rr.Configs = append(rr.Configs, rc)
			}
			req.Resources = append(req.Resources, rr)
		}
		resp := requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, n.Addr(), req)
		if len(resp.Resources) != 2 {
			t.Fatalf("node %s: %d answers, want 2", name, len(resp.Resources))
		}
		if r := resp.Resources[0]; r.ResourceName != name || r.ErrorCode != 0 {
			t.Fatalf("node %s: DELETE of its own throttles: %q %v %s", name, r.ResourceName, kerr.ErrorForCode(r.ErrorCode), derefOr(r.ErrorMessage))
		}
		r := resp.Resources[1]
		checkResourceError(t, "node "+name+" DELETE of broker "+other+"'s throttles", r.ErrorCode, r.ErrorMessage,
			kerr.InvalidRequest, "Unexpected broker id, expected "+name+", but received "+other)
	}

	var clear []kadm.AlterConfig
	for key := range lists {
		clear = append(clear, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: key})
	}
	if err := alterTopic(ctx, kadmin, topic, clear); err != nil {
		t.Fatalf("clearing the throttled replica lists: %v", err)
	}
	waitTopicLists(ctx, t, kadmin, topic, map[string]string{
		"leader.replication.throttled.replicas":   "",
		"follower.replication.throttled.replicas": "",
	})
}

func alterTopic(ctx context.Context, kadmin *kadm.Client, topic string, configs []kadm.AlterConfig) error {
	responses, err := kadmin.AlterTopicConfigs(ctx, configs, topic)
	if err != nil {
		return err
	}
	return alterError(responses, topic)
}

// waitTopicLists polls until the topic describes each key with its wanted
// value ("" for the default).
func waitTopicLists(ctx context.Context, t *testing.T, kadmin *kadm.Client, topic string, want map[string]string) {
	t.Helper()
	WaitFor(t, 10*time.Second, func() error {
		described, err := kadmin.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			return err
		}
		cfg, err := described.On(topic, nil)
		if err == nil {
			err = cfg.Err
		}
		if err != nil {
			return err
		}
		values := map[string]string{}
		for _, e := range cfg.Configs {
			values[e.Key] = e.MaybeValue()
		}
		for key, value := range want {
			if got, ok := values[key]; !ok || got != value {
				return fmt.Errorf("topic %s: %s = %q (described %v), want %q", topic, key, got, ok, value)
			}
		}
		return nil
	})
}
