package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/config"
)

// kafkaConfigRejections are topic configs Kafka 4.4 refuses, with the
// message its LogConfig and ConfigDef validators give.
var kafkaConfigRejections = []struct {
	name, value, message string
}{
	{"retention.ms", "soon", "Invalid value soon for configuration retention.ms: Not a number of type LONG"},
	{"cleanup.policy", "compact,bogus", "Invalid value bogus for configuration cleanup.policy: String must be one of: compact, delete"},
	{"cleanup.policy", "compact,,delete", "Configuration 'cleanup.policy' values must not be empty."},
	{"min.insync.replicas", "0", "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"},
	{"compression.type", "brotli", "Invalid value brotli for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"},
	{"segment.bytes", "10", "Invalid value 10 for configuration segment.bytes: Value must be at least 1048576"},
	{"unclean.leader.election.enable", "maybe", "Invalid value maybe for configuration unclean.leader.election.enable: Expected value to be either true or false"},
	{"no.such.config", "1", "Unknown topic config name: no.such.config"},
	// Added by Kafka 4.x after 4.0.
	{"max.decompressed.message.bytes", "0", "Invalid value 0 for configuration max.decompressed.message.bytes: Value must be at least 1"},
	{"remote.copy.lag.ms", "-2", "Invalid value -2 for configuration remote.copy.lag.ms: Value must be at least -1"},
	{"remote.copy.lag.bytes", "later", "Invalid value later for configuration remote.copy.lag.bytes: Not a number of type LONG"},
	// Removed in Kafka 4.0 (KIP-724, KIP-896): unknown names since.
	{"message.format.version", "3.0-IV1", "Unknown topic config name: message.format.version"},
	{"message.downconversion.enable", "true", "Unknown topic config name: message.downconversion.enable"},
	{"message.timestamp.difference.max.ms", "1000", "Unknown topic config name: message.timestamp.difference.max.ms"},
}

// TestCreateTopicsInvalidConfigAnswersKafkasMessage creates topics with
// configs Kafka refuses: each answers INVALID_CONFIG with Kafka's message,
// with validate_only too, and no topic is created.
func TestCreateTopicsInvalidConfigAnswersKafkasMessage(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	ctx := testContext(t)
	for _, validateOnly := range []bool{true, false} {
		for _, tc := range kafkaConfigRejections {
			create := adm.CreateTopics
			if validateOnly {
				create = adm.ValidateCreateTopics
			}
			resp, err := create(ctx, 1, 1, map[string]*string{tc.name: &tc.value}, "bad-config-topic")
			if err != nil {
				t.Fatal(err)
			}
			got := resp["bad-config-topic"]
			if got.Err != kerr.InvalidConfig || got.ErrMessage != tc.message {
				t.Errorf("validate_only=%v %s=%s: %v %q, want INVALID_CONFIG %q", validateOnly, tc.name, tc.value, got.Err, got.ErrMessage, tc.message)
			}
		}
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("bad-config-topic") {
		t.Fatal("a topic was created with an invalid config")
	}
	stillServes(t, tn)
}

// TestAlterConfigsAcceptKafkaTopicConfigNames sets every topic config name
// Kafka 4.4 accepts, through AlterConfigs and IncrementalAlterConfigs, and
// checks that the names Kafka refuses answer INVALID_CONFIG with Kafka's
// message and change nothing.
func TestAlterConfigsAcceptKafkaTopicConfigNames(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	ctx := testContext(t)
	mustCreateTopic(t, adm, "altered", 1, nil)

	var sets []kadm.AlterConfig
	for _, key := range config.TopicKeys() {
		value := key.Default
		sets = append(sets, kadm.AlterConfig{Op: kadm.SetConfig, Name: key.Name, Value: &value})
	}
	for _, incremental := range []bool{true, false} {
		alter := adm.AlterTopicConfigs
		if !incremental {
			alter = adm.AlterTopicConfigsState
		}
		resp, err := alter(ctx, sets, "altered")
		if err != nil {
			t.Fatal(err)
		}
		if err := resp[0].Err; err != nil {
			t.Fatalf("incremental=%v: setting every Kafka topic config to its default: %v %s", incremental, err, resp[0].ErrMessage)
		}
		for _, tc := range kafkaConfigRejections {
			value := tc.value
			resp, err := alter(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: tc.name, Value: &value}}, "altered")
			if err != nil {
				t.Fatal(err)
			}
			if resp[0].Err != kerr.InvalidConfig || resp[0].ErrMessage != tc.message {
				t.Errorf("incremental=%v %s=%s: %v %q, want INVALID_CONFIG %q", incremental, tc.name, tc.value, resp[0].Err, resp[0].ErrMessage, tc.message)
			}
		}
	}
	described, err := adm.DescribeTopicConfigs(ctx, "altered")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range described[0].Configs {
		for _, tc := range kafkaConfigRejections {
			if c.Key == tc.name && c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.MaybeValue() == tc.value {
				t.Errorf("%s was changed to the refused value %s", c.Key, tc.value)
			}
		}
	}
}
