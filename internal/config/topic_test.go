package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func ptr(s string) *string { return &s }

func TestValidateTopicConfigs(t *testing.T) {
	valid := map[string]*string{
		"cleanup.policy":                          ptr("compact,delete"),
		"compression.type":                        ptr("zstd"),
		"retention.ms":                            ptr("-1"),
		"segment.bytes":                           ptr("1048576"),
		"min.cleanable.dirty.ratio":               ptr("0.1"),
		"message.timestamp.type":                  ptr("LogAppendTime"),
		"preallocate":                             ptr("TRUE"),
		"leader.replication.throttled.replicas":   ptr("0:1, 1:1"),
		"follower.replication.throttled.replicas": ptr("*"),
	}
	if err := ValidateTopicConfigs(valid); err != nil {
		t.Fatal(err)
	}
	if err := ValidateTopicConfigs(map[string]*string{"cleanup.policy": ptr("")}); err != nil {
		t.Errorf("an empty cleanup.policy is allowed in Kafka 4.0: %v", err)
	}

	tests := []struct {
		configs map[string]*string
		kind    error
		want    []string
	}{
		{map[string]*string{"retention.hourz": ptr("1")}, ErrUnknownKey, []string{"Unknown topic config name: retention.hourz"}},
		{map[string]*string{"message.downconversion.enable": ptr("true")}, ErrUnknownKey, []string{"message.downconversion.enable"}},
		{map[string]*string{"log.retention.ms": ptr("1")}, ErrUnknownKey, []string{"log.retention.ms"}},
		{map[string]*string{"retention.ms": ptr("bad"), "zzz": ptr("1")}, ErrUnknownKey, []string{"zzz"}},
		{map[string]*string{"retention.ms": nil}, ErrInvalidValue, []string{"Null value", "retention.ms"}},
		{map[string]*string{"retention.ms": ptr("forever")}, ErrInvalidValue, []string{"Invalid value forever for configuration retention.ms", "LONG"}},
		{map[string]*string{"retention.ms": ptr("-2")}, ErrInvalidValue, []string{"retention.ms", "at least -1"}},
		{map[string]*string{"cleanup.policy": ptr("compact,forever")}, ErrInvalidValue, []string{"cleanup.policy", "forever", "compact, delete"}},
		{map[string]*string{"compression.type": ptr("none")}, ErrInvalidValue, []string{"compression.type", "none", "uncompressed"}},
		{map[string]*string{"message.timestamp.type": ptr("createtime")}, ErrInvalidValue, []string{"message.timestamp.type", "CreateTime, LogAppendTime"}},
		{map[string]*string{"min.cleanable.dirty.ratio": ptr("1.1")}, ErrInvalidValue, []string{"min.cleanable.dirty.ratio", "1.1", "no more than 1.0"}},
		{map[string]*string{"segment.bytes": ptr("100")}, ErrInvalidValue, []string{"segment.bytes", "at least 1048576"}},
		{map[string]*string{"max.message.bytes": ptr("3000000000")}, ErrInvalidValue, []string{"max.message.bytes", "INT"}},
		{map[string]*string{"unclean.leader.election.enable": ptr("1")}, ErrInvalidValue, []string{"unclean.leader.election.enable", "true or false"}},
		{map[string]*string{"compression.gzip.level": ptr("0")}, ErrInvalidValue, []string{"compression.gzip.level"}},
		{map[string]*string{"leader.replication.throttled.replicas": ptr("0-1")}, ErrInvalidValue, []string{"partitionId:brokerId"}},
		{map[string]*string{"min.compaction.lag.ms": ptr("10"), "max.compaction.lag.ms": ptr("5")}, ErrInvalidValue, []string{"min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"}},
		{map[string]*string{"remote.storage.enable": ptr("true")}, ErrInvalidValue, []string{"Tiered Storage"}},
	}
	for _, tt := range tests {
		err := ValidateTopicConfigs(tt.configs)
		if !errors.Is(err, tt.kind) {
			t.Errorf("%v: got %v, want kind %v", tt.configs, err, tt.kind)
			continue
		}
		for _, want := range tt.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
	}
}

func TestResolveTopic(t *testing.T) {
	b := mustLoad(t, "", nil, nil)
	got := b.ResolveTopic(nil)
	want := TopicConfig{
		CleanupPolicy:          []string{"delete"},
		CompressionType:        "producer",
		CompressionGzipLevel:   -1,
		CompressionLz4Level:    9,
		CompressionZstdLevel:   3,
		DeleteRetentionMs:      86400000,
		FileDeleteDelayMs:      60000,
		FlushMessages:          9223372036854775807,
		FlushMs:                9223372036854775807,
		IndexIntervalBytes:     4096,
		LocalRetentionBytes:    -2,
		LocalRetentionMs:       -2,
		MaxCompactionLagMs:     9223372036854775807,
		MaxMessageBytes:        1048588,
		TimestampAfterMaxMs:    3600000,
		TimestampBeforeMaxMs:   9223372036854775807,
		MessageTimestampType:   "CreateTime",
		MinCleanableDirtyRatio: 0.5,
		MinInsyncReplicas:      1,
		RetentionBytes:         -1,
		RetentionMs:            604800000,
		SegmentBytes:           1073741824,
		SegmentIndexBytes:      10485760,
		SegmentMs:              604800000,
		// Kafka 4.4's: no copy lag by size, none by time, no per-record
		// bound below the largest allocation.
		RemoteCopyLagBytes:          -1,
		MaxDecompressedMessageBytes: 2147483639,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", got, want)
	}

	// Broker settings become topic defaults, through the fallbacks.
	b = mustLoad(t, "", []string{
		"log.retention.hours=1", "log.roll.hours=2", "log.segment.bytes=2097152",
		"message.max.bytes=2000000", "log.cleanup.policy=compact", "compression.type=lz4",
		"log.cleaner.min.cleanable.ratio=0.25", "log.flush.scheduler.interval.ms=1000",
	}, nil)
	got = b.ResolveTopic(nil)
	if got.RetentionMs != 3600000 || got.SegmentMs != 7200000 || got.SegmentBytes != 2097152 ||
		got.MaxMessageBytes != 2000000 || !got.Compact() || got.Delete() || got.CompressionType != "lz4" ||
		got.MinCleanableDirtyRatio != 0.25 || got.FlushMs != 1000 {
		t.Errorf("broker defaults not applied: %+v", got)
	}

	// Topic overrides win; invalid and unknown ones are ignored.
	got = b.ResolveTopic(map[string]string{
		"retention.ms": "5000", "cleanup.policy": "delete,compact", "segment.bytes": "12",
		"no.such.key": "1", "unclean.leader.election.enable": "true",
	})
	if got.RetentionMs != 5000 || !got.Compact() || !got.Delete() || got.SegmentBytes != 2097152 || !got.UncleanLeaderElection {
		t.Errorf("overrides not applied: %+v", got)
	}
}

func findEntry(t *testing.T, entries []ConfigEntry, name string) ConfigEntry {
	t.Helper()
	for _, e := range entries {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no entry %s", name)
	return ConfigEntry{}
}

func synonymsString(synonyms []ConfigSynonym) string {
	var parts []string
	for _, s := range synonyms {
		value := "null"
		if s.Value != nil {
			value = *s.Value
		}
		parts = append(parts, s.Source.String()+":"+s.Name+"="+value)
	}
	return strings.Join(parts, ",")
}

func TestDescribeTopic(t *testing.T) {
	b := mustLoad(t, "", []string{"log.segment.bytes=2097152", "log.retention.hours=1"}, nil)
	entries := b.DescribeTopic(map[string]string{"cleanup.policy": "compact"}, true)
	if len(entries) != len(topicKeys) {
		t.Fatalf("got %d entries, want %d", len(entries), len(topicKeys))
	}
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Name >= entries[i].Name {
			t.Fatalf("entries not sorted: %s before %s", entries[i-1].Name, entries[i].Name)
		}
	}
	tests := []struct {
		name     string
		value    string
		source   kmsg.ConfigSource
		typ      kmsg.ConfigType
		synonyms string
	}{
		{"cleanup.policy", "compact", kmsg.ConfigSourceDynamicTopicConfig, kmsg.ConfigTypeList,
			"DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,DEFAULT_CONFIG:log.cleanup.policy=delete"},
		{"segment.bytes", "2097152", kmsg.ConfigSourceStaticBrokerConfig, kmsg.ConfigTypeInt,
			"STATIC_BROKER_CONFIG:log.segment.bytes=2097152,DEFAULT_CONFIG:log.segment.bytes=1073741824"},
		{"max.message.bytes", "1048588", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt,
			"DEFAULT_CONFIG:message.max.bytes=1048588"},
		// As in Kafka, synonyms before the first entry for log.retention.ms
		// are dropped, so the hours setting shows only in the value.
		{"retention.ms", "3600000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeLong, ""},
		{"segment.ms", "604800000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeLong, ""},
		{"remote.storage.enable", "false", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeBoolean, ""},
		{"min.cleanable.dirty.ratio", "0.5", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeDouble,
			"DEFAULT_CONFIG:log.cleaner.min.cleanable.ratio=0.5"},
	}
	for _, tt := range tests {
		e := findEntry(t, entries, tt.name)
		if e.Value == nil || *e.Value != tt.value || e.Source != tt.source || e.Type != tt.typ || e.ReadOnly || e.Sensitive || e.Doc == "" {
			t.Errorf("%s: got value %v source %v type %v readOnly %v doc %q", tt.name, deref(e.Value), e.Source, e.Type, e.ReadOnly, e.Doc)
		}
		if got := synonymsString(e.Synonyms); got != tt.synonyms {
			t.Errorf("%s synonyms:\n got %s\nwant %s", tt.name, got, tt.synonyms)
		}
	}

	b = mustLoad(t, "", []string{"log.retention.ms=1000", "log.retention.hours=2"}, nil)
	e := findEntry(t, b.DescribeTopic(map[string]string{"retention.ms": "50"}, true), "retention.ms")
	if want := "DYNAMIC_TOPIC_CONFIG:retention.ms=50,STATIC_BROKER_CONFIG:log.retention.ms=1000,STATIC_BROKER_CONFIG:log.retention.hours=2,DEFAULT_CONFIG:log.retention.hours=168"; synonymsString(e.Synonyms) != want {
		t.Errorf("retention.ms synonyms:\n got %s\nwant %s", synonymsString(e.Synonyms), want)
	}
	if *e.Value != "50" || e.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("retention.ms = %s from %v", *e.Value, e.Source)
	}

	if e := findEntry(t, b.DescribeTopic(nil, false), "retention.ms"); e.Synonyms != nil || e.Source != kmsg.ConfigSourceStaticBrokerConfig || *e.Value != "1000" {
		t.Errorf("without synonyms: %+v", e)
	}
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

func TestDescribeBroker(t *testing.T) {
	b := mustLoad(t, "", []string{"num.io.threads=4"}, nil)
	entries := b.DescribeBroker(true)
	if len(entries) != len(brokerKeys) {
		t.Fatalf("got %d entries, want %d", len(entries), len(brokerKeys))
	}
	io := findEntry(t, entries, "num.io.threads")
	if *io.Value != "4" || io.Source != kmsg.ConfigSourceStaticBrokerConfig || io.ReadOnly || io.Type != kmsg.ConfigTypeInt {
		t.Errorf("num.io.threads: %+v", io)
	}
	if got, want := synonymsString(io.Synonyms), "STATIC_BROKER_CONFIG:num.io.threads=4,DEFAULT_CONFIG:num.io.threads=8"; got != want {
		t.Errorf("num.io.threads synonyms %s, want %s", got, want)
	}
	partitions := findEntry(t, entries, "num.partitions")
	if *partitions.Value != "1" || partitions.Source != kmsg.ConfigSourceDefaultConfig || !partitions.ReadOnly {
		t.Errorf("num.partitions: %+v", partitions)
	}
	retention := findEntry(t, entries, "log.retention.ms")
	if retention.Value != nil || retention.Source != kmsg.ConfigSourceDefaultConfig || retention.ReadOnly {
		t.Errorf("log.retention.ms should be null, default and dynamic: %+v", retention)
	}
	hours := findEntry(t, entries, "log.retention.hours")
	if got := synonymsString(hours.Synonyms); got != "DEFAULT_CONFIG:log.retention.hours=168" {
		t.Errorf("log.retention.hours synonyms %s", got)
	}
	for _, e := range FilterEntries(entries, []string{"node.id", "listeners"}) {
		if e.Name != "listeners" && e.Name != "node.id" {
			t.Errorf("FilterEntries kept %s", e.Name)
		}
	}
	if len(FilterEntries(entries, nil)) != len(entries) {
		t.Error("FilterEntries(nil) should keep everything")
	}
}

func TestWithDynamic(t *testing.T) {
	b := mustLoad(t, "", []string{"num.io.threads=4", "log.retention.ms=1000"}, nil)
	d, err := b.WithDynamic(
		map[string]string{"num.io.threads": "6"},
		map[string]string{"num.io.threads": "5", "log.retention.ms": "2000", "message.max.bytes": "2000000"},
	)
	if err != nil {
		t.Fatal(err)
	}
	if d.NumIOThreads != 6 || d.LogRetentionMs != 2000 || d.MessageMaxBytes != 2000000 {
		t.Errorf("io=%d retention=%d maxBytes=%d", d.NumIOThreads, d.LogRetentionMs, d.MessageMaxBytes)
	}
	if b.NumIOThreads != 4 {
		t.Error("WithDynamic modified the original")
	}
	io := findEntry(t, d.DescribeBroker(true), "num.io.threads")
	if want := "DYNAMIC_BROKER_CONFIG:num.io.threads=6,DYNAMIC_DEFAULT_BROKER_CONFIG:num.io.threads=5,STATIC_BROKER_CONFIG:num.io.threads=4,DEFAULT_CONFIG:num.io.threads=8"; synonymsString(io.Synonyms) != want {
		t.Errorf("synonyms %s, want %s", synonymsString(io.Synonyms), want)
	}
	if io.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("source %v", io.Source)
	}
	topic := findEntry(t, d.DescribeTopic(nil, true), "retention.ms")
	if *topic.Value != "2000" || topic.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Errorf("topic retention.ms = %s from %v", *topic.Value, topic.Source)
	}
	if d.ResolveTopic(nil).MaxMessageBytes != 2000000 {
		t.Error("dynamic message.max.bytes is not the topic default")
	}

	defaults := d.DescribeBrokerDefaults(true)
	if len(defaults) != 3 {
		t.Fatalf("DescribeBrokerDefaults returned %d entries, want 3", len(defaults))
	}
	if e := findEntry(t, defaults, "num.io.threads"); *e.Value != "5" || synonymsString(e.Synonyms) != "DYNAMIC_DEFAULT_BROKER_CONFIG:num.io.threads=5" {
		t.Errorf("default num.io.threads: %s %s", *e.Value, synonymsString(e.Synonyms))
	}

	if _, err := b.WithDynamic(map[string]string{"node.id": "2"}, nil); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "node.id") {
		t.Errorf("read-only key: got %v", err)
	}
	if _, err := b.WithDynamic(map[string]string{"no.such": "2"}, nil); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key: got %v", err)
	}
	if _, err := b.WithDynamic(nil, map[string]string{"num.io.threads": "0"}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("invalid value: got %v", err)
	}
	// Dynamic values are checked together with the static ones.
	if _, err := b.WithDynamic(map[string]string{"log.retention.ms": "0"}, nil); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("log.retention.ms=0: got %v", err)
	}
	cleared, err := d.WithDynamic(nil, nil)
	if err != nil || cleared.NumIOThreads != 4 {
		t.Errorf("clearing dynamic values: %v, io=%d", err, cleared.NumIOThreads)
	}
}

func TestApplyIncremental(t *testing.T) {
	current := map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"}
	ops := []AlterOp{
		{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpDelete},
		{Name: "segment.ms", Op: kmsg.IncrementalAlterConfigOpSet, Value: ptr("600000")},
		{Name: "cleanup.policy", Op: kmsg.IncrementalAlterConfigOpAppend, Value: ptr("delete,compact")},
		{Name: "leader.replication.throttled.replicas", Op: kmsg.IncrementalAlterConfigOpAppend, Value: ptr("0:1")},
	}
	got, err := ApplyIncremental(current, ops)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"segment.ms": "600000", "cleanup.policy": "compact,delete", "leader.replication.throttled.replicas": "0:1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if current["retention.ms"] != "1000" {
		t.Error("ApplyIncremental modified its input")
	}

	// APPEND without an override starts from the default; SUBTRACT can
	// empty the list.
	got, err = ApplyIncremental(nil, []AlterOp{{Name: "cleanup.policy", Op: kmsg.IncrementalAlterConfigOpAppend, Value: ptr("compact")}})
	if err != nil || got["cleanup.policy"] != "delete,compact" {
		t.Errorf("append to default: %v %v", got, err)
	}
	got, err = ApplyIncremental(map[string]string{"cleanup.policy": "delete,compact"}, []AlterOp{{Name: "cleanup.policy", Op: kmsg.IncrementalAlterConfigOpSubtract, Value: ptr("delete,compact")}})
	if err != nil || got["cleanup.policy"] != "" {
		t.Errorf("subtract all: %v %v", got, err)
	}
	got, err = ApplyIncremental(nil, []AlterOp{{Name: "log.cleanup.policy", Op: kmsg.IncrementalAlterConfigOpSubtract, Value: ptr("delete")}})
	if err != nil || got["log.cleanup.policy"] != "" {
		t.Errorf("broker list key: %v %v", got, err)
	}

	errorTests := []struct {
		ops  []AlterOp
		kind error
		want string
	}{
		{[]AlterOp{{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpAppend, Value: ptr("1")}}, ErrInvalidValue, "Can't APPEND to key retention.ms because its type is not LIST."},
		{[]AlterOp{{Name: "num.io.threads", Op: kmsg.IncrementalAlterConfigOpSubtract, Value: ptr("1")}}, ErrInvalidValue, "Can't SUBTRACT to key num.io.threads because its type is not LIST."},
		{[]AlterOp{{Name: "no.such", Op: kmsg.IncrementalAlterConfigOpAppend, Value: ptr("1")}}, ErrInvalidValue, "not LIST"},
		{[]AlterOp{{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpSet}}, ErrInvalidRequest, "Null value not supported for : retention.ms"},
		{[]AlterOp{{Name: "a", Op: kmsg.IncrementalAlterConfigOpDelete}, {Name: "a", Op: kmsg.IncrementalAlterConfigOpDelete}}, ErrInvalidRequest, "duplicate config keys"},
		{[]AlterOp{{Name: "a", Op: 9, Value: ptr("1")}}, ErrInvalidRequest, "Unknown operations type 9"},
	}
	for _, tt := range errorTests {
		_, err := ApplyIncremental(current, tt.ops)
		if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want %v %q", tt.ops, err, tt.kind, tt.want)
		}
	}

	// The result feeds validation.
	got, _ = ApplyIncremental(nil, []AlterOp{{Name: "cleanup.policy", Op: kmsg.IncrementalAlterConfigOpAppend, Value: ptr("bogus")}})
	configs := map[string]*string{}
	for k, v := range got {
		configs[k] = ptr(v)
	}
	if err := ValidateTopicConfigs(configs); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("validating an appended bogus policy: %v", err)
	}
}
