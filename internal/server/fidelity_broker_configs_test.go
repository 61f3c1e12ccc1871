package server

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestBrokerConfigValidationAnswersKafkasErrors alters broker configs
// through kadm with what Kafka 4.4's ConfigAdminManager refuses on the
// receiving broker: INVALID_REQUEST with Kafka's message, for this node and
// for the cluster-wide defaults, and nothing is stored.
func TestBrokerConfigValidationAnswersKafkasErrors(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	ctx := testContext(t)
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name     string
		value    *string
		defaults bool
		code     *kerr.Error
		message  string
	}{
		{"log.cleaner.threads", s("abc"), false, kerr.InvalidRequest, "Invalid value abc for configuration log.cleaner.threads: Not a number of type INT"},
		{"log.cleaner.threads", s("abc"), true, kerr.InvalidRequest, "Invalid value abc for configuration log.cleaner.threads: Not a number of type INT"},
		{"min.insync.replicas", s("0"), false, kerr.InvalidRequest, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"},
		{"compression.type", s("brotli"), true, kerr.InvalidRequest, "Invalid value brotli for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"},
		{"log.dirs", s("/elsewhere"), false, kerr.InvalidRequest, "Cannot update these configs dynamically: [log.dirs]"},
		{"listener.name.plaintext.ssl.keystore.location", s("/nope"), true, kerr.InvalidRequest,
			"Cannot update these configs at default cluster level, broker id must be specified: [listener.name.plaintext.ssl.keystore.location]"},
	} {
		for _, validateOnly := range []bool{true, false} {
			alter := adm.AlterBrokerConfigs
			if validateOnly {
				alter = adm.ValidateAlterBrokerConfigs
			}
			var brokers []int32
			if !tc.defaults {
				brokers = []int32{tn.node.cfg.NodeID}
			}
			responses, err := alter(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: tc.name, Value: tc.value}}, brokers...)
			if err != nil {
				t.Fatal(err)
			}
			if len(responses) != 1 || responses[0].Err != tc.code || responses[0].ErrMessage != tc.message {
				t.Errorf("%s=%s (defaults %v, validate only %v): %+v, want %v %q", tc.name, *tc.value, tc.defaults, validateOnly, responses, tc.code, tc.message)
			}
		}
	}
	appended, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.AppendConfig, Name: "log.cleaner.threads", Value: s("2")}}, tn.node.cfg.NodeID)
	if err != nil {
		t.Fatal(err)
	}
	if len(appended) != 1 || appended[0].Err != kerr.InvalidConfig || appended[0].ErrMessage != "Config value append is not allowed for config key: log.cleaner.threads" {
		t.Errorf("APPEND to log.cleaner.threads: %+v, want Kafka's INVALID_CONFIG", appended)
	}
	described, err := adm.DescribeBrokerConfigs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, resource := range described {
		for _, c := range resource.Configs {
			if c.Key == "listener.name.plaintext.ssl.keystore.location" || c.Key == "compression.type" && c.Source == kmsg.ConfigSourceDynamicDefaultBrokerConfig {
				t.Errorf("a refused config was stored: %+v", c)
			}
		}
	}
	stillServes(t, tn)
}

// TestDescribeConfigsOnTheControllerListener asks the controller listener
// for DescribeConfigs, as kafka-configs --bootstrap-controller does: Kafka
// 4.4's controllers answer it for this node, the cluster defaults and
// topics, and refuse another broker's id with INVALID_REQUEST.
func TestDescribeConfigsOnTheControllerListener(t *testing.T) {
	port := freePort(t)
	tn := startTestNode(t,
		"process.roles=broker,controller", "node.id=1",
		"listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:"+port,
		"controller.listener.names=CONTROLLER",
		"controller.quorum.voters=1@127.0.0.1:"+port)
	mustCreateTopic(t, tn.admin(), "described", 1, nil)
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rc := &rawConn{t: t, conn: conn}
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, resource := range []struct {
		resourceType kmsg.ConfigResourceType
		name         string
	}{{kmsg.ConfigResourceTypeBroker, "1"}, {kmsg.ConfigResourceTypeBroker, ""}, {kmsg.ConfigResourceTypeTopic, "described"}, {kmsg.ConfigResourceTypeBroker, "2"}} {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName, r.ConfigNames = resource.resourceType, resource.name, []string{"min.insync.replicas"}
		req.Resources = append(req.Resources, r)
	}
	rc.request(req, 4)
	resp := kmsg.NewPtrDescribeConfigsResponse()
	rc.response(resp, 4)
	if len(resp.Resources) != 4 {
		t.Fatalf("%d resources answered, want 4", len(resp.Resources))
	}
	for _, r := range resp.Resources[:3] {
		if r.ErrorCode != 0 || len(r.Configs) != 1 || r.Configs[0].Value == nil || *r.Configs[0].Value != "1" ||
			r.Configs[0].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
			t.Errorf("%v %q: %+v, want min.insync.replicas=1 DYNAMIC_DEFAULT_BROKER_CONFIG", r.ResourceType, r.ResourceName, r)
		}
	}
	other := resp.Resources[3]
	if other.ErrorCode != kerr.InvalidRequest.Code || other.ErrorMessage == nil ||
		*other.ErrorMessage != "Unexpected broker id, expected 1 or empty string, but received 2" {
		t.Errorf("broker 2: %+v, want INVALID_REQUEST", other)
	}
}
