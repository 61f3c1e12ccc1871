package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describedMinInsyncReplicas describes min.insync.replicas of one resource
// through kadm and returns its value and source.
func describedMinInsyncReplicas(t *testing.T, adm *kadm.Client, broker bool, name string) (string, kmsg.ConfigSource) {
	t.Helper()
	ctx := testContext(t)
	var described kadm.ResourceConfigs
	var err error
	if broker {
		described, err = adm.DescribeBrokerConfigs(ctx)
	} else {
		described, err = adm.DescribeTopicConfigs(ctx, name)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, resource := range described {
		if resource.Err != nil {
			t.Fatalf("describe %q: %v", resource.Name, resource.Err)
		}
		for _, c := range resource.Configs {
			if c.Key == "min.insync.replicas" {
				return c.MaybeValue(), c.Source
			}
		}
	}
	t.Fatalf("%q: min.insync.replicas not described", name)
	return "", 0
}

// TestNewClusterHasKafkasClusterLevelMinInsyncReplicas checks what Kafka
// 4.4's controller writes when it creates a cluster (the ELR safety record):
// a cluster-level min.insync.replicas holding the static value, so a
// topic's min.insync.replicas is described as DYNAMIC_DEFAULT_BROKER_CONFIG,
// and a later change of the static value does not apply.
func TestNewClusterHasKafkasClusterLevelMinInsyncReplicas(t *testing.T) {
	tn := startTestNode(t, "min.insync.replicas=2")
	adm := tn.admin()
	mustCreateTopic(t, adm, "isr-default", 1, nil)

	value, source := describedMinInsyncReplicas(t, adm, false, "isr-default")
	if value != "2" || source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("topic min.insync.replicas = %q %v, want 2 DYNAMIC_DEFAULT_BROKER_CONFIG", value, source)
	}
	value, source = describedMinInsyncReplicas(t, adm, true, "")
	if value != "2" || source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("cluster min.insync.replicas = %q %v, want 2 DYNAMIC_DEFAULT_BROKER_CONFIG", value, source)
	}

	// The record is written once, with the cluster: a restart with another
	// static value keeps the cluster-level one.
	tn.over = []string{"min.insync.replicas=3"}
	tn.restart()
	adm = tn.admin()
	value, source = describedMinInsyncReplicas(t, adm, false, "isr-default")
	if value != "2" || source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("after restart: topic min.insync.replicas = %q %v, want 2 DYNAMIC_DEFAULT_BROKER_CONFIG", value, source)
	}
}
