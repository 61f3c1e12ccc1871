package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeProperties(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustLoad(t *testing.T, path string, overrides, environ []string) *Broker {
	t.Helper()
	b, warnings, err := Load(path, overrides, environ)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Fatalf("unexpected warnings: %q", warnings)
	}
	return b
}

func TestLoadDefaults(t *testing.T) {
	b := mustLoad(t, "", nil, nil)
	checks := []struct {
		name      string
		got, want any
	}{
		{"NodeID", b.NodeID, int32(1)},
		{"ProcessRoles", b.ProcessRoles, []string{"broker", "controller"}},
		{"ControllerListenerNames", b.ControllerListenerNames, []string{"CONTROLLER"}},
		{"Listeners", b.Listeners, []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092, SecurityProtocol: "PLAINTEXT"}}},
		{"AdvertisedListeners", b.AdvertisedListeners, b.Listeners},
		{"InterBrokerListenerName", b.InterBrokerListenerName, "PLAINTEXT"},
		{"LogDirs", b.LogDirs, []string{"./samsa-data"}},
		{"MetadataLogDir", b.MetadataLogDir, "./samsa-data"},
		{"NumIOThreads", b.NumIOThreads, int32(8)},
		{"NumNetworkThreads", b.NumNetworkThreads, int32(3)},
		{"QueuedMaxRequests", b.QueuedMaxRequests, int32(500)},
		{"SocketRequestMaxBytes", b.SocketRequestMaxBytes, int32(104857600)},
		{"SocketReceiveBufferBytes", b.SocketReceiveBufferBytes, int32(102400)},
		{"ConnectionsMaxIdleMs", b.ConnectionsMaxIdleMs, int64(600000)},
		{"MaxConnections", b.MaxConnections, int32(2147483647)},
		{"MessageMaxBytes", b.MessageMaxBytes, int32(1048588)},
		{"ReplicaFetchMaxBytes", b.ReplicaFetchMaxBytes, int32(1048576)},
		{"AutoCreateTopicsEnable", b.AutoCreateTopicsEnable, true},
		{"NumPartitions", b.NumPartitions, int32(1)},
		{"DefaultReplicationFactor", b.DefaultReplicationFactor, int16(1)},
		{"DeleteTopicEnable", b.DeleteTopicEnable, true},
		{"MinInsyncReplicas", b.MinInsyncReplicas, int32(1)},
		{"LogRetentionMs", b.LogRetentionMs, int64(168 * 3600 * 1000)},
		{"LogRetentionBytes", b.LogRetentionBytes, int64(-1)},
		{"LogRetentionCheckIntervalMs", b.LogRetentionCheckIntervalMs, int64(300000)},
		{"LogSegmentBytes", b.LogSegmentBytes, int32(1073741824)},
		{"LogRollMs", b.LogRollMs, int64(168 * 3600 * 1000)},
		{"LogRollJitterMs", b.LogRollJitterMs, int64(0)},
		{"LogIndexSizeMaxBytes", b.LogIndexSizeMaxBytes, int32(10485760)},
		{"LogIndexIntervalBytes", b.LogIndexIntervalBytes, int32(4096)},
		{"LogFlushIntervalMessages", b.LogFlushIntervalMessages, int64(9223372036854775807)},
		{"LogFlushIntervalMs", b.LogFlushIntervalMs, int64(9223372036854775807)},
		{"LogFlushOffsetCheckpointIntervalMs", b.LogFlushOffsetCheckpointIntervalMs, int32(60000)},
		{"LogSegmentDeleteDelayMs", b.LogSegmentDeleteDelayMs, int64(60000)},
		{"LogCleanupPolicy", b.LogCleanupPolicy, []string{"delete"}},
		{"LogCleanerEnable", b.LogCleanerEnable, true},
		{"LogCleanerMinCleanableRatio", b.LogCleanerMinCleanableRatio, 0.5},
		{"LogMessageTimestampType", b.LogMessageTimestampType, "CreateTime"},
		{"LogMessageTimestampBeforeMaxMs", b.LogMessageTimestampBeforeMaxMs, int64(9223372036854775807)},
		{"LogMessageTimestampAfterMaxMs", b.LogMessageTimestampAfterMaxMs, int64(3600000)},
		{"CompressionType", b.CompressionType, "producer"},
		{"OffsetsTopicNumPartitions", b.OffsetsTopicNumPartitions, int32(50)},
		{"OffsetsTopicReplicationFactor", b.OffsetsTopicReplicationFactor, int16(3)},
		{"OffsetsTopicSegmentBytes", b.OffsetsTopicSegmentBytes, int32(104857600)},
		{"OffsetsRetentionMinutes", b.OffsetsRetentionMinutes, int32(10080)},
		{"OffsetsCommitTimeoutMs", b.OffsetsCommitTimeoutMs, int32(5000)},
		{"GroupMinSessionTimeoutMs", b.GroupMinSessionTimeoutMs, int32(6000)},
		{"GroupMaxSessionTimeoutMs", b.GroupMaxSessionTimeoutMs, int32(1800000)},
		{"GroupInitialRebalanceDelayMs", b.GroupInitialRebalanceDelayMs, int32(3000)},
		{"GroupMaxSize", b.GroupMaxSize, int32(2147483647)},
		{"TransactionStateLogNumPartitions", b.TransactionStateLogNumPartitions, int32(50)},
		{"TransactionStateLogReplicationFactor", b.TransactionStateLogReplicationFactor, int16(3)},
		{"TransactionalIDExpirationMs", b.TransactionalIDExpirationMs, int32(604800000)},
		{"TransactionMaxTimeoutMs", b.TransactionMaxTimeoutMs, int32(900000)},
		{"ProducerIDExpirationMs", b.ProducerIDExpirationMs, int32(86400000)},
		{"ReplicaLagTimeMaxMs", b.ReplicaLagTimeMaxMs, int64(30000)},
		{"UncleanLeaderElectionEnable", b.UncleanLeaderElectionEnable, false},
		{"MetricsListener", b.MetricsListener, "127.0.0.1:9644"},
		{"ClusterID", b.ClusterID, ""},
		{"NumRecoveryThreadsPerDataDir", b.NumRecoveryThreadsPerDataDir, int32(2)},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if !b.IsBroker() || !b.IsController() {
		t.Error("default roles should be broker and controller")
	}
}

func TestLoadPrecedence(t *testing.T) {
	path := writeProperties(t, "num.io.threads=2\nnum.network.threads=2\nnum.partitions=2\n")
	environ := []string{"HOME=/root", "SAMSA_NUM_NETWORK_THREADS=3", "SAMSA_NUM_PARTITIONS=3"}
	overrides := []string{"num.partitions=4"}
	b := mustLoad(t, path, overrides, environ)
	if b.NumIOThreads != 2 || b.NumNetworkThreads != 3 || b.NumPartitions != 4 {
		t.Errorf("io=%d network=%d partitions=%d, want file 2, env 3, override 4",
			b.NumIOThreads, b.NumNetworkThreads, b.NumPartitions)
	}
	if b.QueuedMaxRequests != 500 {
		t.Errorf("QueuedMaxRequests = %d, want the default 500", b.QueuedMaxRequests)
	}
	if v, ok := b.Get("num.partitions"); !ok || v != "4" {
		t.Errorf(`Get("num.partitions") = %q, %v`, v, ok)
	}
	if _, ok := b.Raw()["log.retention.ms"]; ok {
		t.Error("Raw should omit keys with a null default that nothing set")
	}
	if b.Raw()["log.retention.hours"] != "168" {
		t.Error("Raw should include defaults")
	}
}

func TestLoadLaterOverrideWins(t *testing.T) {
	b := mustLoad(t, "", []string{"num.partitions=2", "num.partitions = 5"}, nil)
	if b.NumPartitions != 5 {
		t.Errorf("NumPartitions = %d, want 5", b.NumPartitions)
	}
}

func TestEnvNames(t *testing.T) {
	for key, env := range map[string]string{
		"log.dirs":                            "SAMSA_LOG_DIRS",
		"node.id":                             "SAMSA_NODE_ID",
		"transaction.state.log.min.isr":       "SAMSA_TRANSACTION_STATE_LOG_MIN_ISR",
		"controller.quorum.bootstrap.servers": "SAMSA_CONTROLLER_QUORUM_BOOTSTRAP_SERVERS",
	} {
		if got := EnvName(key); got != env {
			t.Errorf("EnvName(%q) = %q, want %q", key, got, env)
		}
	}
	b := mustLoad(t, "", nil, []string{"SAMSA_LOG_DIRS=/a,/b", "SAMSA_NODE_ID=7", "SAMSA_CONTROLLER_QUORUM_VOTERS=7@localhost:9093"})
	if !reflect.DeepEqual(b.LogDirs, []string{"/a", "/b"}) || b.NodeID != 7 {
		t.Errorf("LogDirs = %q, NodeID = %d", b.LogDirs, b.NodeID)
	}
	want := []QuorumVoter{{NodeID: 7, Host: "localhost", Port: 9093}}
	if !reflect.DeepEqual(b.ControllerQuorumVoters, want) {
		t.Errorf("ControllerQuorumVoters = %+v, want %+v", b.ControllerQuorumVoters, want)
	}
}

func TestLoadUnknownKeysWarn(t *testing.T) {
	path := writeProperties(t, "# Kafka's stock file has these\nnum.io.threads=4\nsasl.kerberos.service.name=kafka\n")
	b, warnings, err := Load(path, []string{"no.such.key=1"}, []string{"SAMSA_NOT_A_KEY=1", "OTHER_VAR=1", "SAMSA_BROKERS=localhost:9092"})
	if err != nil {
		t.Fatal(err)
	}
	if b.NumIOThreads != 4 {
		t.Errorf("NumIOThreads = %d, want 4", b.NumIOThreads)
	}
	joined := strings.Join(warnings, "\n")
	for _, want := range []string{"sasl.kerberos.service.name", path + ":3", "no.such.key", "SAMSA_NOT_A_KEY"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q do not mention %q", warnings, want)
		}
	}
	if strings.Contains(joined, "OTHER_VAR") || strings.Contains(joined, "SAMSA_BROKERS") {
		t.Errorf("warnings %q mention a variable without the SAMSA_ prefix", warnings)
	}
	if len(warnings) != 3 {
		t.Errorf("got %d warnings, want 3: %q", len(warnings), warnings)
	}
}

func TestLoadInvalidValues(t *testing.T) {
	tests := []struct {
		override string
		want     []string // substrings of the error
	}{
		{"num.io.threads=abc", []string{"num.io.threads", "abc", "Not a number of type INT"}},
		{"num.io.threads=0", []string{"num.io.threads", "0", "at least 1"}},
		{"num.io.threads=99999999999", []string{"num.io.threads", "Not a number of type INT"}},
		{"auto.create.topics.enable=yes", []string{"auto.create.topics.enable", "yes", "true or false"}},
		{"node.id=-1", []string{"node.id", "-1", "at least 0"}},
		{"process.roles=broker,zookeeper", []string{"process.roles", "zookeeper", "broker, controller"}},
		{"process.roles=", []string{"process.roles", "Empty list"}},
		{"log.dirs=", []string{"log.dirs", "Empty list"}},
		{"log.dirs=/a,/a", []string{"log.dirs", "Duplicate"}},
		{"log.segment.bytes=1024", []string{"log.segment.bytes", "1024", "at least 1048576"}},
		{"log.cleanup.policy=compact,remove", []string{"log.cleanup.policy", "remove"}},
		{"log.message.timestamp.type=Now", []string{"log.message.timestamp.type", "Now", "CreateTime, LogAppendTime"}},
		{"compression.type=brotli", []string{"compression.type", "brotli", "producer"}},
		{"log.cleaner.min.cleanable.ratio=1.5", []string{"log.cleaner.min.cleanable.ratio", "1.5", "no more than 1.0"}},
		{"listeners=PLAINTEXT://127.0.0.1:70000", []string{"listeners", "Port must be between 0 and 65535"}},
		{"listeners=127.0.0.1:9092", []string{"listeners", "NAME://host:port"}},
		{"listeners=PLAINTEXT://:9092,PLAINTEXT://:9093", []string{"listeners", "different name"}},
		{"listeners=INTERNAL://:9092", []string{"listeners", "No security protocol defined for listener INTERNAL"}},
		{"listeners=PLAINTEXT://0.0.0.0:9092", []string{"listeners", "nonroutable meta-address 0.0.0.0"}},
		{"advertised.listeners=PLAINTEXT://0.0.0.0:9092", []string{"advertised.listeners", "nonroutable"}},
		{"listener.security.protocol.map=PLAINTEXT:FOO", []string{"listener.security.protocol.map", "FOO"}},
		{"metrics.listener=nohost", []string{"metrics.listener", "nohost", "host:port"}},
		{"controller.quorum.voters=1@localhost", []string{"controller.quorum.voters", "host:port"}},
		{"controller.quorum.voters=x@localhost:9093", []string{"controller.quorum.voters", "id@host:port"}},
		{"controller.quorum.voters=2@localhost:9093", []string{"controller.quorum.voters", "node id 1"}},
		{"cluster.id=not-a-uuid", []string{"cluster.id", "not-a-uuid", "16-byte UUID"}},
		{"log.retention.ms=0", []string{"log.retention.ms", "unlimited (-1)"}},
		{"group.min.session.timeout.ms=2000000", []string{"group.max.session.timeout.ms"}},
		{"replica.fetch.wait.max.ms=40000", []string{"replica.fetch.wait.max.ms"}},
		{"queued.max.request.bytes=1048576", []string{"queued.max.request.bytes", "socket.request.max.bytes"}},
		{"remote.log.storage.system.enable=true", []string{"remote.log.storage.system.enable", "rsm.config.bucket.url"}},
	}
	for _, tt := range tests {
		t.Run(tt.override, func(t *testing.T) {
			_, _, err := Load("", []string{tt.override}, nil)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalidValue) {
				t.Errorf("error %v is not ErrInvalidValue", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestLoadErrorNamesOrigin(t *testing.T) {
	path := writeProperties(t, "node.id=1\nnum.io.threads=many\n")
	if _, _, err := Load(path, nil, nil); err == nil || !strings.Contains(err.Error(), path+":2") {
		t.Errorf("error %v does not name %s:2", err, path)
	}
	if _, _, err := Load("", nil, []string{"SAMSA_NUM_IO_THREADS=many"}); err == nil || !strings.Contains(err.Error(), "SAMSA_NUM_IO_THREADS") {
		t.Errorf("error %v does not name the variable", err)
	}
	if _, _, err := Load("", []string{"novalue"}, nil); err == nil || !strings.Contains(err.Error(), "key=value") {
		t.Errorf("error %v should explain the override form", err)
	}
	if _, _, err := Load(filepath.Join(t.TempDir(), "missing.properties"), nil, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v should wrap os.ErrNotExist", err)
	}
}

func TestLogRetentionPrecedence(t *testing.T) {
	const hour, minute = int64(3600 * 1000), int64(60 * 1000)
	tests := []struct {
		overrides []string
		want      int64
	}{
		{nil, 168 * hour},
		{[]string{"log.retention.hours=1"}, hour},
		{[]string{"log.retention.hours=1", "log.retention.minutes=5"}, 5 * minute},
		{[]string{"log.retention.hours=1", "log.retention.minutes=5", "log.retention.ms=1234"}, 1234},
		{[]string{"log.retention.ms=-1"}, -1},
		{[]string{"log.retention.minutes=-5"}, -1},
		{[]string{"log.retention.hours=-1"}, -1},
	}
	for _, tt := range tests {
		b := mustLoad(t, "", tt.overrides, nil)
		if b.LogRetentionMs != tt.want {
			t.Errorf("%q: LogRetentionMs = %d, want %d", tt.overrides, b.LogRetentionMs, tt.want)
		}
	}
}

func TestLogRollAndFlushFallbacks(t *testing.T) {
	b := mustLoad(t, "", []string{"log.roll.hours=2", "log.roll.jitter.hours=1", "log.flush.scheduler.interval.ms=3000"}, nil)
	if b.LogRollMs != 2*3600*1000 || b.LogRollJitterMs != 3600*1000 || b.LogFlushIntervalMs != 3000 {
		t.Errorf("roll=%d jitter=%d flush=%d", b.LogRollMs, b.LogRollJitterMs, b.LogFlushIntervalMs)
	}
	b = mustLoad(t, "", []string{"log.roll.hours=2", "log.roll.ms=100", "log.roll.jitter.ms=10", "log.flush.interval.ms=50"}, nil)
	if b.LogRollMs != 100 || b.LogRollJitterMs != 10 || b.LogFlushIntervalMs != 50 {
		t.Errorf("roll=%d jitter=%d flush=%d", b.LogRollMs, b.LogRollJitterMs, b.LogFlushIntervalMs)
	}
}

func TestLogDirFallback(t *testing.T) {
	b := mustLoad(t, "", []string{"log.dir=/var/samsa"}, nil)
	if !reflect.DeepEqual(b.LogDirs, []string{"/var/samsa"}) {
		t.Errorf("LogDirs = %q", b.LogDirs)
	}
	b = mustLoad(t, "", []string{"log.dir=/var/samsa", "log.dirs=/d1, /d2", "metadata.log.dir=/meta"}, nil)
	if !reflect.DeepEqual(b.LogDirs, []string{"/d1", "/d2"}) || b.MetadataLogDir != "/meta" {
		t.Errorf("LogDirs = %q, MetadataLogDir = %q", b.LogDirs, b.MetadataLogDir)
	}
}

func TestListeners(t *testing.T) {
	defer func(h func() (string, error)) { hostname = h }(hostname)
	hostname = func() (string, error) { return "samsa-host", nil }

	b := mustLoad(t, "", []string{
		"listeners=plaintext://:9092,CONTROLLER://127.0.0.1:9093,IPV6://[::1]:9094",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,IPV6:PLAINTEXT",
	}, nil)
	wantListeners := []Listener{
		{Name: "PLAINTEXT", Host: "", Port: 9092, SecurityProtocol: "PLAINTEXT"},
		{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9093, SecurityProtocol: "PLAINTEXT"},
		{Name: "IPV6", Host: "::1", Port: 9094, SecurityProtocol: "PLAINTEXT"},
	}
	if !reflect.DeepEqual(b.Listeners, wantListeners) {
		t.Errorf("Listeners = %+v", b.Listeners)
	}
	wantAdvertised := []Listener{
		{Name: "PLAINTEXT", Host: "samsa-host", Port: 9092, SecurityProtocol: "PLAINTEXT"},
		{Name: "IPV6", Host: "::1", Port: 9094, SecurityProtocol: "PLAINTEXT"},
	}
	if !reflect.DeepEqual(b.AdvertisedListeners, wantAdvertised) {
		t.Errorf("AdvertisedListeners = %+v, want controller listener left out and the hostname filled in", b.AdvertisedListeners)
	}
	if got := b.AdvertisedListeners[1].Address(); got != "[::1]:9094" {
		t.Errorf("Address() = %q", got)
	}

	b = mustLoad(t, "", []string{"listeners=PLAINTEXT://0.0.0.0:9092", "advertised.listeners=PLAINTEXT://broker.example:19092"}, nil)
	if b.AdvertisedListeners[0].Host != "broker.example" || b.AdvertisedListeners[0].Port != 19092 {
		t.Errorf("AdvertisedListeners = %+v", b.AdvertisedListeners)
	}
	// Controller listener names default to PLAINTEXT when the map is not set.
	if b.ListenerSecurityProtocolMap["CONTROLLER"] != "PLAINTEXT" {
		t.Errorf("ListenerSecurityProtocolMap = %v", b.ListenerSecurityProtocolMap)
	}
}

func TestInterBrokerListener(t *testing.T) {
	renamed := []string{"listeners=EXTERNAL://127.0.0.1:9092", "listener.security.protocol.map=EXTERNAL:PLAINTEXT"}
	if _, _, err := Load("", renamed, nil); err == nil || !strings.Contains(err.Error(), "inter.broker.listener.name must be a listener name defined in advertised.listeners") {
		t.Errorf("got %v, want Kafka's inter.broker.listener.name error", err)
	}
	b := mustLoad(t, "", append(renamed, "inter.broker.listener.name=external"), nil)
	if b.InterBrokerListenerName != "EXTERNAL" {
		t.Errorf("InterBrokerListenerName = %q", b.InterBrokerListenerName)
	}
	if _, _, err := Load("", append(renamed, "inter.broker.listener.name=EXTERNAL", "security.inter.broker.protocol=PLAINTEXT"), nil); err == nil || !strings.Contains(err.Error(), "Only one of") {
		t.Errorf("got %v, want an error for setting both", err)
	}
	// A controller-only node needs no broker listener.
	mustLoad(t, "", []string{"process.roles=controller", "listeners=CONTROLLER://127.0.0.1:9093"}, nil)
}

func TestValueNormalization(t *testing.T) {
	b := mustLoad(t, "", []string{"auto.create.topics.enable= TRUE ", "num.partitions=+3", "log.cleanup.policy=delete , compact", "log.cleaner.io.buffer.load.factor=1e7"}, nil)
	for key, want := range map[string]string{
		"auto.create.topics.enable":           "true",
		"num.partitions":                      "3",
		"log.cleanup.policy":                  "delete,compact",
		"log.cleaner.io.buffer.load.factor":   "1.0E7",
		"log.cleaner.io.max.bytes.per.second": "1.7976931348623157E308",
	} {
		if got, _ := b.Get(key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if !reflect.DeepEqual(b.LogCleanupPolicy, []string{"delete", "compact"}) {
		t.Errorf("LogCleanupPolicy = %q", b.LogCleanupPolicy)
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{0: "0.0", 0.5: "0.5", 1: "1.0", 0.001: "0.001", 0.0001: "1.0E-4", 1e7: "1.0E7", 1234567.5: "1234567.5", -2.5e10: "-2.5E10"} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestKeyTablesConsistent(t *testing.T) {
	for _, keys := range [][]Key{brokerKeys, topicKeys} {
		for _, k := range keys {
			if k.Doc == "" {
				t.Errorf("%s has no Doc", k.Name)
			}
			if k.NoDefault {
				continue
			}
			if _, err := k.validate(k.Default); err != nil {
				t.Errorf("%s: default %q is invalid: %v", k.Name, k.Default, err)
			}
			if normalized, _ := normalize(k.Type, k.Default); normalized != k.Default {
				t.Errorf("%s: default %q is not in canonical form %q", k.Name, k.Default, normalized)
			}
		}
	}
	for _, k := range topicKeys {
		if k.topicField == nil {
			t.Errorf("topic key %s fills no TopicConfig field", k.Name)
		}
		if k.Synonym == "" {
			continue
		}
		broker, _ := LookupBroker(k.Synonym)
		if broker.Type != k.Type {
			t.Errorf("topic key %s is %v but its synonym %s is %v", k.Name, k.Type, k.Synonym, broker.Type)
		}
	}
}

func TestLoadRoleChecks(t *testing.T) {
	controllerOnly := []string{"process.roles=controller", "node.id=1", "controller.listener.names=CONTROLLER",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"}
	brokerOnly := []string{"process.roles=broker", "node.id=4", "controller.listener.names=CONTROLLER",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"}
	tests := []struct {
		name      string
		overrides []string
		want      []string // substrings of the error; none: valid
	}{
		{"even voters", []string{"controller.quorum.voters=1@h:9093,2@h:9094"}, []string{"controller.quorum.voters", "odd number"}},
		{"controller not a voter", append(controllerOnly, "listeners=CONTROLLER://:9093", "controller.quorum.voters=2@h:9093"),
			[]string{"node id 1 must be included"}},
		{"controller with a broker listener", append(controllerOnly, "listeners=PLAINTEXT://:9092,CONTROLLER://:9093", "controller.quorum.voters=1@h:9093"),
			[]string{"listeners", "only contain KRaft controller listeners", "PLAINTEXT"}},
		{"controller only", append(controllerOnly, "listeners=CONTROLLER://:9093", "controller.quorum.voters=1@h:9093"), nil},
		{"broker in the voters", append(brokerOnly, "listeners=PLAINTEXT://:9092", "controller.quorum.voters=4@h:9093"),
			[]string{"node id 4 must not be included"}},
		{"broker with no voters", append(brokerOnly, "listeners=PLAINTEXT://:9092"), []string{"controller.quorum.voters", "name the controllers"}},
		{"broker with a controller listener", append(brokerOnly, "listeners=PLAINTEXT://:9092,CONTROLLER://:9093", "controller.quorum.voters=1@h:9093"),
			[]string{"must not contain a value appearing in the 'listeners'", "CONTROLLER"}},
		{"broker only", append(brokerOnly, "listeners=PLAINTEXT://:9092", "controller.quorum.voters=1@h:9093"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Load("", tt.overrides, nil)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("valid roles refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("error %v is not ErrInvalidValue", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}
