package server

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/samsa-streaming/samsa/internal/kafkaref"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/telemetry"
)

// alterClientMetrics sets (or, with a nil value, deletes) the configs of a
// client-metrics subscription and returns the resource's error.
func alterClientMetrics(t *testing.T, tn *testNode, name string, configs map[string]*string) error {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
	for k, v := range configs {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = k, v, kmsg.IncrementalAlterConfigOpSet
		if v == nil {
			c.Op = kmsg.IncrementalAlterConfigOpDelete
		}
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(testContext(t), tn.client())
	if err != nil {
		t.Fatal(err)
	}
	return kerr.ErrorForCode(resp.Resources[0].ErrorCode)
}

// TestClientMetricsResources sets client-metrics subscriptions through
// IncrementalAlterConfigs (resource type 16), reads them back with
// DescribeConfigs and ListConfigResources, and gets Kafka's errors for bad
// ones; deleting every config removes the subscription.
func TestClientMetricsResources(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	ctx := testContext(t)
	s := func(v string) *string { return &v }
	if err := alterClientMetrics(t, tn, "producers", map[string]*string{"metrics": s("org.apache.kafka.producer."), "interval.ms": s("1000"),
		"match": s("client_software_name=confluent-kafka-python")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		configs map[string]*string
		want    error
	}{
		{"", map[string]*string{"metrics": s("*")}, kerr.InvalidRequest},
		{"bad", map[string]*string{"retention.ms": s("1")}, kerr.InvalidRequest},
		{"bad", map[string]*string{"interval.ms": s("50")}, kerr.InvalidRequest},
		{"bad", map[string]*string{"interval.ms": s("often")}, kerr.InvalidConfig},
		{"bad", map[string]*string{"match": s("client_rack=a")}, kerr.InvalidConfig},
		{"bad", map[string]*string{"match": s("client_id=(")}, kerr.InvalidConfig},
	} {
		if err := alterClientMetrics(t, tn, tc.name, tc.configs); !errors.Is(err, tc.want) {
			t.Errorf("%q %v: %v, want %v", tc.name, tc.configs, err, tc.want)
		}
	}

	desc := kmsg.NewPtrDescribeConfigsRequest()
	for _, name := range []string{"producers", "nothing-here", ""} {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
		desc.Resources = append(desc.Resources, r)
	}
	dresp, err := desc.RequestWith(ctx, tn.client())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range dresp.Resources[0].Configs {
		got[c.Name] = *c.Value
		if c.Source != kmsg.ConfigSourceClientMetricsConfig {
			t.Errorf("%s source %v", c.Name, c.Source)
		}
	}
	if len(got) != 3 || got["interval.ms"] != "1000" || got["match"] != "client_software_name=confluent-kafka-python" {
		t.Fatalf("described %v", got)
	}
	if r := dresp.Resources[1]; r.ErrorCode != 0 || len(r.Configs) != 0 {
		t.Fatalf("unknown subscription: %+v", r)
	}
	if r := dresp.Resources[2]; r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("empty name: %+v", r)
	}

	list := func(version int16, types ...int8) *kmsg.ListConfigResourcesResponse {
		req := kmsg.NewPtrListConfigResourcesRequest()
		req.ResourceTypes = types
		req.SetVersion(version)
		resp, err := req.RequestWith(ctx, tn.client(kgo.MaxVersions(kversionsWith(74, version))))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := list(1, 16); r.ErrorCode != 0 || len(r.ConfigResources) != 1 || r.ConfigResources[0].Name != "producers" || r.ConfigResources[0].Type != 16 {
		t.Fatalf("list client metrics v1: %+v", r)
	}
	if r := list(0); r.ErrorCode != 0 || len(r.ConfigResources) != 1 || r.ConfigResources[0].Name != "producers" {
		t.Fatalf("list v0: %+v", r)
	}
	mustCreateTopic(t, adm, "listed", 1, nil)
	all := list(1)
	types := map[int8][]string{}
	for _, cr := range all.ConfigResources {
		types[cr.Type] = append(types[cr.Type], cr.Name)
	}
	if len(types[2]) == 0 || strings.Join(types[4], ",") != "1" || strings.Join(types[8], ",") != "1" || strings.Join(types[16], ",") != "producers" {
		t.Fatalf("list v1 of every type: %v", types)
	}
	if r := list(1, 3); r.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("list of an unknown type: %+v", r)
	}

	if err := alterClientMetrics(t, tn, "producers", map[string]*string{"metrics": nil, "interval.ms": nil, "match": nil}); err != nil {
		t.Fatal(err)
	}
	if r := list(1, 16); len(r.ConfigResources) != 0 {
		t.Fatalf("subscription still listed after deleting its configs: %+v", r)
	}
}

// kversionsWith is Kafka 4.4's versions with one key capped.
func kversionsWith(key, version int16) *kversion.Versions {
	v := kversion.V4_4_0()
	v.SetMaxKeyVersion(key, version)
	return v
}

// TestPushTelemetryBadInput sends GetTelemetrySubscriptions and
// PushTelemetry with kmsg: a push with an unknown subscription id, an
// unknown codec, an oversize or undecodable payload, or too soon, gets
// Kafka's error, and the node keeps serving.
func TestPushTelemetryBadInput(t *testing.T) {
	tn := startTestNode(t, "telemetry.max.bytes=2048")
	adm := tn.admin()
	s := func(v string) *string { return &v }
	if err := alterClientMetrics(t, tn, "everything", map[string]*string{"metrics": s("*"), "interval.ms": s("100")}); err != nil {
		t.Fatal(err)
	}
	cl := tn.client(kgo.ClientID("bad-pusher"))
	ctx := testContext(t)
	var get *kmsg.GetTelemetrySubscriptionsResponse
	waitFor(t, 10*time.Second, "the subscription reaches the broker", func() bool {
		var err error
		get, err = kmsg.NewPtrGetTelemetrySubscriptionsRequest().RequestWith(ctx, cl)
		return err == nil && get.ErrorCode == 0 && len(get.RequestedMetrics) == 1
	})
	if get.RequestedMetrics[0] != "*" || get.PushIntervalMillis != 100 || get.TelemetryMaxBytes != 2048 || !get.DeltaTemporality ||
		len(get.AcceptedCompressionTypes) != 4 || get.AcceptedCompressionTypes[0] != record.CodecZstd {
		t.Fatalf("subscription: %+v", get)
	}
	push := func(change func(*kmsg.PushTelemetryRequest)) int16 {
		t.Helper()
		req := kmsg.NewPtrPushTelemetryRequest()
		req.ClientInstanceID, req.SubscriptionID = get.ClientInstanceID, get.SubscriptionID
		change(req)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.ErrorCode
	}
	// Each case waits out the push interval first.
	cases := []struct {
		name   string
		change func(*kmsg.PushTelemetryRequest)
		want   int16
	}{
		{"unknown subscription id", func(r *kmsg.PushTelemetryRequest) { r.SubscriptionID++ }, kerr.UnknownSubscriptionID.Code},
		{"unknown codec", func(r *kmsg.PushTelemetryRequest) { r.CompressionType = 5 }, kerr.UnsupportedCompressionType.Code},
		{"oversize", func(r *kmsg.PushTelemetryRequest) { r.Metrics = make([]byte, 2049) }, kerr.TelemetryTooLarge.Code},
		{"not OTLP", func(r *kmsg.PushTelemetryRequest) { r.Metrics = []byte{0xff, 0xff, 0xff} }, kerr.InvalidRecord.Code},
		{"zero instance id", func(r *kmsg.PushTelemetryRequest) { r.ClientInstanceID = [16]byte{} }, kerr.InvalidRequest.Code},
	}
	for _, tc := range cases {
		var code int16
		waitFor(t, 10*time.Second, tc.name, func() bool {
			code = push(tc.change)
			return code != kerr.ThrottlingQuotaExceeded.Code
		})
		if code != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, kerr.ErrorForCode(code), kerr.ErrorForCode(tc.want))
		}
	}
	// A good push, then one at once: throttled.
	waitFor(t, 10*time.Second, "a good push", func() bool { return push(func(*kmsg.PushTelemetryRequest) {}) == 0 })
	if code := push(func(*kmsg.PushTelemetryRequest) {}); code != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("a push at once after another: %v", kerr.ErrorForCode(code))
	}
	if _, err := adm.ListTopics(ctx); err != nil {
		t.Fatalf("the node stopped serving: %v", err)
	}
	if got := scrape(t, tn)[`samsa_client_telemetry_requests_total{error="UNKNOWN_SUBSCRIPTION_ID"}`]; got < 1 {
		t.Fatalf("UNKNOWN_SUBSCRIPTION_ID answers counted: %v", got)
	}
}

// TestClientTelemetryConfluentPython lets confluent-kafka-python (the
// newest from PyPI, REGISTRY_PYTHON, with librdkafka >= 2.5) produce under
// a subscription to every metric and waits until its pushed metrics are on
// /metrics with its client id and software name.
func TestClientTelemetryConfluentPython(t *testing.T) {
	python := os.Getenv("REGISTRY_PYTHON")
	if python == "" {
		t.Skip("REGISTRY_PYTHON is not set (an interpreter with the newest confluent-kafka from PyPI)")
	}
	tn := startTestNode(t)
	adm := tn.admin()
	s := func(v string) *string { return &v }
	if err := alterClientMetrics(t, tn, "python", map[string]*string{"metrics": s("*"), "interval.ms": s("500"), "match": s("client_id=telemetry-py")}); err != nil {
		t.Fatal(err)
	}
	mustCreateTopic(t, adm, "telemetry", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "testdata/telemetry_confluent.py", tn.addr(), "telemetry", "telemetry-py")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pushed []string
	waitFor(t, 60*time.Second, "confluent-kafka-python's metrics on /metrics", func() bool {
		pushed = pushed[:0]
		for series := range scrape(t, tn) {
			if strings.HasPrefix(series, telemetry.MetricPrefix) && strings.Contains(series, `client_id="telemetry-py"`) {
				pushed = append(pushed, series)
			}
		}
		return len(pushed) > 0 || strings.Contains(out.String(), "skip ")
	})
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("confluent-kafka-python: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "skip ") {
		t.Skip(out.String())
	}
	software := false
	for _, series := range pushed {
		software = software || strings.Contains(series, `client_software_name="confluent-kafka-python"`) || strings.Contains(series, `client_software_name="librdkafka"`)
	}
	if !software {
		t.Fatalf("pushed series lack the client software name: %v", pushed[:min(len(pushed), 5)])
	}
	t.Logf("%d series from confluent-kafka-python, e.g. %s", len(pushed), pushed[0])
}

// TestClientTelemetryJavaClient lets Apache Kafka's Java producer (4.4)
// produce under a subscription matching its software name and waits until
// its pushed metrics are on /metrics.
func TestClientTelemetryJavaClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	classpath, err := kafkaref.Classpath(ctx)
	if errors.Is(err, kafkaref.ErrUnavailable) && os.Getenv("SAMSA_REQUIRE_KAFKA") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	tn := startTestNode(t)
	s := func(v string) *string { return &v }
	if err := alterClientMetrics(t, tn, "java", map[string]*string{"metrics": s("org.apache.kafka.producer."), "interval.ms": s("500"),
		"match": s("client_software_name=apache-kafka-java,client_id=telemetry-java")}); err != nil {
		t.Fatal(err)
	}
	mustCreateTopic(t, tn.admin(), "telemetry", 1, nil)
	cmd := exec.CommandContext(ctx, "java", "-Xmx256m", "-XX:+UseSerialGC", "-cp", classpath, "testdata/TelemetryProducer.java", tn.addr(), "telemetry", "telemetry-java")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pushed []string
	waitFor(t, 90*time.Second, "the Java client's metrics on /metrics", func() bool {
		pushed = pushed[:0]
		for series := range scrape(t, tn) {
			if strings.HasPrefix(series, telemetry.MetricPrefix+"org_apache_kafka_producer_") && strings.Contains(series, `client_software_name="apache-kafka-java"`) {
				pushed = append(pushed, series)
			}
		}
		return len(pushed) > 0
	})
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("java producer: %v\n%s", err, out.String())
	}
	t.Logf("%d series from the Java client, e.g. %s", len(pushed), pushed[0])
}
