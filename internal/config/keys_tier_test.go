package config

import (
	"errors"
	"strings"
	"testing"
)

func TestTierOffByDefault(t *testing.T) {
	b, _, err := Load("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Tier.RemoteLogStorageSystemEnable || b.Tier.BucketURL != "" {
		t.Fatalf("tiered storage on by default: %+v", b.Tier)
	}
	want := TierConfig{TaskIntervalMs: 30000, TaskRetryBackoffMs: 500, TaskRetryBackoffMaxMs: 30000, TaskRetryJitter: 0.2,
		ThreadPoolSize: 2, CopierThreadPoolSize: 10, ExpirationThreadPoolSize: 10, ReaderThreads: 10, ReaderMaxPendingTasks: 100,
		FetchMaxWaitMs: 500, IndexFileCacheTotalSizeBytes: 1 << 30, CopyMaxBytesPerSecond: 1<<63 - 1, FetchMaxBytesPerSecond: 1<<63 - 1,
		CustomMetadataMaxBytes: 128, ListOffsetsRequestTimeoutMs: 30000, LocalRetentionMs: -2, LocalRetentionBytes: -2}
	if b.Tier != want {
		t.Fatalf("defaults\n got %+v\nwant %+v", b.Tier, want)
	}
}

func TestTierBrokerValidation(t *testing.T) {
	on := []string{"remote.log.storage.system.enable=true", "rsm.config.bucket.url=mem://"}
	if b, _, err := Load("", on, nil); err != nil || !b.Tier.RemoteLogStorageSystemEnable || b.Tier.BucketURL != "mem://" {
		t.Fatalf("enabled: %v %+v", err, b)
	}
	tests := []struct {
		overrides []string
		want      []string
	}{
		{append(on, "log.local.retention.ms=700000000"), []string{"log.local.retention.ms", "not be more than log.retention.ms", "604800000"}},
		{append(on, "log.retention.bytes=1000", "log.local.retention.bytes=2000"), []string{"log.local.retention.bytes", "1000"}},
		{append(on, "rsm.config.bucket.prefix=/abs/"), []string{"rsm.config.bucket.prefix"}},
		{append(on, "remote.log.manager.task.retry.jitter=0.7"), []string{"remote.log.manager.task.retry.jitter"}},
		{append(on, "remote.log.reader.threads=0"), []string{"remote.log.reader.threads"}},
	}
	for _, tt := range tests {
		_, _, err := Load("", tt.overrides, nil)
		if !errors.Is(err, ErrInvalidValue) {
			t.Errorf("%v: got %v, want ErrInvalidValue", tt.overrides, err)
			continue
		}
		for _, want := range tt.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: error %q does not contain %q", tt.overrides, err, want)
			}
		}
	}
	// With tiering off, the local retention keys are not checked, as Kafka.
	if _, _, err := Load("", []string{"log.local.retention.ms=700000000"}, nil); err != nil {
		t.Errorf("local retention checked with tiering off: %v", err)
	}
}

func TestTierTopicValidation(t *testing.T) {
	b, _, err := Load("", []string{"remote.log.storage.system.enable=true", "rsm.config.bucket.url=mem://", "log.retention.bytes=5000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok := []map[string]*string{
		{"remote.storage.enable": ptr("true")},
		{"remote.storage.enable": ptr("true"), "local.retention.ms": ptr("1000"), "local.retention.bytes": ptr("4000")},
		{"remote.storage.enable": ptr("true"), "retention.ms": ptr("-1"), "local.retention.ms": ptr("-1")},
		{"remote.storage.enable": ptr("true"), "remote.log.copy.disable": ptr("true")},
		{"cleanup.policy": ptr("compact"), "local.retention.ms": ptr("-1")},
		// KIP-1241: a lag up to the effective local retention, -1, or any
		// lag when local retention is unlimited.
		{"remote.storage.enable": ptr("true"), "local.retention.ms": ptr("1000"), "remote.copy.lag.ms": ptr("1000")},
		{"remote.storage.enable": ptr("true"), "remote.copy.lag.ms": ptr("-1"), "remote.copy.lag.bytes": ptr("-1")},
		{"remote.storage.enable": ptr("true"), "retention.ms": ptr("-1"), "local.retention.ms": ptr("-1"), "remote.copy.lag.ms": ptr("2000")},
		{"remote.storage.enable": ptr("true"), "remote.copy.lag.bytes": ptr("5000")},
		// Not tiered: the lag is only range-checked.
		{"local.retention.ms": ptr("1000"), "remote.copy.lag.ms": ptr("2000")},
	}
	for _, m := range ok {
		if err := b.ValidateTopicConfigs(m); err != nil {
			t.Errorf("%v: %v", m, err)
		}
	}
	bad := []struct {
		configs map[string]*string
		want    string
	}{
		{map[string]*string{"remote.storage.enable": ptr("true"), "cleanup.policy": ptr("compact")}, "only supports topics with cleanup.policy=delete"},
		{map[string]*string{"remote.storage.enable": ptr("true"), "cleanup.policy": ptr("compact,delete")}, "cleanup.policy=delete"},
		{map[string]*string{"remote.storage.enable": ptr("true"), "retention.ms": ptr("1000"), "local.retention.ms": ptr("2000")}, "Value must not be more than retention.ms property value: 1000"},
		{map[string]*string{"remote.storage.enable": ptr("true"), "local.retention.ms": ptr("-1")}, "Value must not be -1 as retention.ms value is set as 604800000."},
		// retention.bytes comes from the broker's log.retention.bytes.
		{map[string]*string{"remote.storage.enable": ptr("true"), "local.retention.bytes": ptr("6000")}, "Value must not be more than retention.bytes property value: 5000"},
		{map[string]*string{"remote.storage.enable": ptr("true"), "local.retention.bytes": ptr("-3")}, "at least -2"},
		{map[string]*string{"remote.storage.enable": ptr("true"), "local.retention.ms": ptr("1000"), "remote.copy.lag.ms": ptr("2000")},
			"Invalid value 2000 for configuration remote.copy.lag.ms: Value must not exceed local.retention.ms (effective value: 1000)"},
		// -2 resolves to retention.bytes, the broker's 5000.
		{map[string]*string{"remote.storage.enable": ptr("true"), "remote.copy.lag.bytes": ptr("5001")},
			"Invalid value 5001 for configuration remote.copy.lag.bytes: Value must not exceed local.retention.bytes (effective value: 5000)"},
		{map[string]*string{"remote.copy.lag.ms": ptr("-2")}, "Invalid value -2 for configuration remote.copy.lag.ms: Value must be at least -1"},
	}
	for _, tt := range bad {
		err := b.ValidateTopicConfigs(tt.configs)
		if !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want %q", tt.configs, err, tt.want)
		}
	}
	// A broker with tiering off refuses the topic, as the package function.
	off, _, _ := Load("", nil, nil)
	if err := off.ValidateTopicConfigs(map[string]*string{"remote.storage.enable": ptr("true")}); err == nil ||
		!strings.Contains(err.Error(), "Tiered Storage functionality is disabled in the broker") {
		t.Errorf("tiering off: %v", err)
	}
}

func TestEffectiveLocalRetention(t *testing.T) {
	tc := TopicConfig{RetentionMs: 100, RetentionBytes: -1, LocalRetentionMs: -2, LocalRetentionBytes: 10}
	if ms, bytes := tc.EffectiveLocalRetention(); ms != 100 || bytes != 10 {
		t.Fatalf("got %d %d", ms, bytes)
	}
}
