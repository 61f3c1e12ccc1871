package telemetry

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/samsa-streaming/samsa/internal/record"
)

func TestParseSubscription(t *testing.T) {
	s, err := ParseSubscription("sub", map[string]string{
		MetricsConfig: "org.apache.kafka.producer., org.apache.kafka.consumer.", IntervalMsConfig: "1000",
		MatchConfig: "client_software_name=confluent-kafka-.*, client_id = app[0-9]+"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Metrics) != 2 || s.IntervalMs != 1000 || len(s.Match) != 2 {
		t.Fatalf("parsed %+v", s)
	}
	if !s.Matches(map[string]string{ClientSoftwareName: "confluent-kafka-python", ClientID: "app7"}) {
		t.Fatal("a matching client did not match")
	}
	if s.Matches(map[string]string{ClientSoftwareName: "confluent-kafka-python", ClientID: "xapp7"}) {
		t.Fatal("a pattern matched part of a value")
	}
	if s.Matches(map[string]string{ClientID: "app7"}) {
		t.Fatal("a client without the software name matched a pattern on it")
	}
	if d, _ := ParseSubscription("d", nil); d.IntervalMs != DefaultIntervalMs || d.Metrics != nil || !d.Matches(nil) {
		t.Fatalf("defaults: %+v", d)
	}
	for _, tc := range []struct {
		name    string
		configs map[string]string
		want    error
	}{
		{"", nil, ErrInvalidRequest},
		{"s", map[string]string{"retention.ms": "1"}, ErrInvalidRequest},
		{"s", map[string]string{IntervalMsConfig: "99"}, ErrInvalidRequest},
		{"s", map[string]string{IntervalMsConfig: "3600001"}, ErrInvalidRequest},
		{"s", map[string]string{IntervalMsConfig: "soon"}, ErrInvalidConfig},
		{"s", map[string]string{MatchConfig: "client_id"}, ErrInvalidConfig},
		{"s", map[string]string{MatchConfig: "client_rack=a"}, ErrInvalidConfig},
		{"s", map[string]string{MatchConfig: "client_id=("}, ErrInvalidConfig},
		{"s", map[string]string{MatchConfig: "client_id=a=b"}, ErrInvalidConfig},
	} {
		if _, err := ParseSubscription(tc.name, tc.configs); !errors.Is(err, tc.want) {
			t.Errorf("%q %v: %v, want %v", tc.name, tc.configs, err, tc.want)
		}
	}
}

func TestApplyIncremental(t *testing.T) {
	v := func(s string) *string { return &s }
	got, err := ApplyIncremental(map[string]string{MetricsConfig: "a,b"}, []AlterOp{
		{Name: MetricsConfig, Op: 2, Value: v("c,a")}, // APPEND
		{Name: IntervalMsConfig, Op: 0, Value: v("500")},
	})
	if err != nil || got[MetricsConfig] != "a,b,c" || got[IntervalMsConfig] != "500" {
		t.Fatalf("append and set: %v %v", got, err)
	}
	got, err = ApplyIncremental(got, []AlterOp{{Name: MetricsConfig, Op: 3, Value: v("b")}, {Name: IntervalMsConfig, Op: 1}})
	if err != nil || got[MetricsConfig] != "a,c" || len(got) != 1 {
		t.Fatalf("subtract and delete: %v %v", got, err)
	}
	if _, err := ApplyIncremental(nil, []AlterOp{{Name: IntervalMsConfig, Op: 2, Value: v("1")}}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("append to an INT: %v", err)
	}
	if _, err := ApplyIncremental(nil, []AlterOp{{Name: MetricsConfig, Op: 0}}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("null SET: %v", err)
	}
}

// payload builds a MetricsData message with a sum, a gauge and a
// histogram, compressed with codec.
func payload(t testing.TB, codec int8) []byte {
	t.Helper()
	attr := []*commonpb.KeyValue{{Key: "topic", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "orders"}}}}
	data := &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: []*metricspb.Metric{
		{Name: "org.apache.kafka.producer.record.send.total", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{IsMonotonic: true,
			DataPoints: []*metricspb.NumberDataPoint{{Attributes: attr, Value: &metricspb.NumberDataPoint_AsInt{AsInt: 42}}}}}},
		{Name: "org.apache.kafka.producer.connection.creation.rate", Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{
			DataPoints: []*metricspb.NumberDataPoint{{Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: 0.5}}}}}},
		{Name: "org.apache.kafka.producer.node.request.latency", Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
			DataPoints: []*metricspb.HistogramDataPoint{{Count: 3, Sum: proto.Float64(12)}}}}},
	}}}}}}
	raw, err := proto.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := record.Compress(codec, nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDecodePayloadEveryCodec(t *testing.T) {
	for _, codec := range []int8{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLz4, record.CodecZstd} {
		points, truncated, err := DecodePayload(codec, payload(t, codec), 1<<20, 100)
		if err != nil || truncated || len(points) != 4 {
			t.Fatalf("codec %d: %+v %v %v", codec, points, truncated, err)
		}
		if points[0].Value != 42 || points[0].Attributes != "topic=orders" || points[2].Name != "org.apache.kafka.producer.node.request.latency_count" || points[3].Value != 12 {
			t.Fatalf("codec %d: %+v", codec, points)
		}
	}
	if _, truncated, _ := DecodePayload(record.CodecNone, payload(t, record.CodecNone), 1<<20, 2); !truncated {
		t.Fatal("more points than the bound were not reported truncated")
	}
	if _, _, err := DecodePayload(record.CodecNone, []byte{0xff, 0xff}, 1<<20, 10); !errors.Is(err, ErrInvalidPayload) {
		t.Fatalf("garbage: %v", err)
	}
	if _, _, err := DecodePayload(record.CodecGzip, []byte("not gzip"), 1<<20, 10); !errors.Is(err, ErrInvalidPayload) {
		t.Fatalf("bad gzip: %v", err)
	}
	big, _ := record.Compress(record.CodecZstd, nil, make([]byte, 2<<20))
	if _, _, err := DecodePayload(record.CodecZstd, big, 1<<20, 10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a payload decompressing past the bound: %v", err)
	}
}

// TestManagerFlow drives one client instance through the exchanges of
// KIP-714 on a fake clock.
func TestManagerFlow(t *testing.T) {
	m := NewManager(Config{MaxBytes: 4096})
	client := Client{ID: "app1", SoftwareName: "confluent-kafka-python", SoftwareVersion: "2.6.0", SourceAddress: "127.0.0.1", SourcePort: "5000"}
	now := int64(1_000_000)

	// No subscription: the client gets no metrics and the default interval.
	r := m.GetSubscriptions([16]byte{}, client, now)
	if r.ErrorCode != 0 || r.ClientInstanceID == ([16]byte{}) || len(r.RequestedMetrics) != 0 || r.PushIntervalMs != DefaultIntervalMs || r.TelemetryMaxBytes != 4096 {
		t.Fatalf("first get: %+v", r)
	}
	id := r.ClientInstanceID
	if r := m.GetSubscriptions(id, client, now+1); r.ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("a second get at once: %+v", r)
	}

	sub, _ := ParseSubscription("producers", map[string]string{MetricsConfig: "org.apache.kafka.producer.", IntervalMsConfig: "1000",
		MatchConfig: "client_software_name=confluent-kafka-.*"})
	other, _ := ParseSubscription("java", map[string]string{MetricsConfig: "*", MatchConfig: "client_software_name=apache-kafka-java"})
	m.SetSubscriptions([]Subscription{sub, other})
	// The subscriptions changed: not throttled, and the new subscription.
	r = m.GetSubscriptions(id, client, now+2)
	if r.ErrorCode != 0 || r.PushIntervalMs != 1000 || len(r.RequestedMetrics) != 1 || r.RequestedMetrics[0] != "org.apache.kafka.producer." {
		t.Fatalf("get after the subscription: %+v", r)
	}
	push := PushRequest{ClientInstanceID: id, SubscriptionID: r.SubscriptionID, CompressionType: record.CodecZstd, Metrics: payload(t, record.CodecZstd)}
	if code, msg := m.Push(push, client, now+3); code != 0 {
		t.Fatalf("push: %d %s", code, msg)
	}
	if got := m.Instances(); len(got) != 1 || len(got[0].Points) != 4 {
		t.Fatalf("instances after the push: %+v", got)
	}
	if code, _ := m.Push(push, client, now+4); code != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("a second push at once: %d", code)
	}
	later := now + 3 + 1000
	bad := push
	bad.SubscriptionID++
	if code, _ := m.Push(bad, client, later); code != kerr.UnknownSubscriptionID.Code {
		t.Fatalf("another subscription id: %d", code)
	}
	// After UNKNOWN_SUBSCRIPTION_ID a get is answered at once.
	if r := m.GetSubscriptions(id, client, later+1); r.ErrorCode != 0 {
		t.Fatalf("get after an unknown subscription id: %+v", r)
	}
	for _, tc := range []struct {
		name   string
		change func(*PushRequest)
		want   int16
	}{
		{"unknown codec", func(p *PushRequest) { p.CompressionType = 9 }, kerr.UnsupportedCompressionType.Code},
		{"over telemetry.max.bytes", func(p *PushRequest) { p.Metrics = make([]byte, 4097) }, kerr.TelemetryTooLarge.Code},
		{"not OTLP", func(p *PushRequest) { p.CompressionType, p.Metrics = record.CodecNone, []byte{0xff, 0xff, 0xff} }, kerr.InvalidRecord.Code},
	} {
		later += 2000
		m.GetSubscriptions(id, client, later)
		p := push
		tc.change(&p)
		if code, _ := m.Push(p, client, later+1); code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.want)
		}
	}
	// A terminating push is taken at once; nothing after it.
	later += 2000
	term := push
	term.Terminating = true
	if code, _ := m.Push(term, client, later); code != 0 {
		t.Fatalf("terminating push: %d", code)
	}
	if code, _ := m.Push(push, client, later+5000); code != kerr.InvalidRequest.Code {
		t.Fatalf("a push after the terminating one: %d", code)
	}
	if code, _ := m.Push(PushRequest{}, client, later); code != kerr.InvalidRequest.Code {
		t.Fatalf("a zero client instance id: %d", code)
	}
	if n := m.Expire(later + 10*60000); n != 1 || len(m.Instances()) != 0 {
		t.Fatalf("expired %d, left %d", n, len(m.Instances()))
	}
}

func TestManagerBoundsInstances(t *testing.T) {
	m := NewManager(Config{MaxInstances: 3})
	for i := range 10 {
		m.GetSubscriptions([16]byte{}, Client{ID: "c"}, int64(1000+i))
	}
	if n := len(m.Instances()); n != 3 {
		t.Fatalf("%d instances kept, bound 3", n)
	}
}

func TestCollectorExportsPoints(t *testing.T) {
	m := NewManager(Config{})
	sub, _ := ParseSubscription("all", map[string]string{MetricsConfig: "*", IntervalMsConfig: "100"})
	m.SetSubscriptions([]Subscription{sub})
	client := Client{ID: "app\xff", SoftwareName: "librdkafka", SoftwareVersion: "2.6.0", SourceAddress: "10.0.0.1"}
	r := m.GetSubscriptions([16]byte{}, client, 5000)
	m.Push(PushRequest{ClientInstanceID: r.ClientInstanceID, SubscriptionID: r.SubscriptionID, Metrics: payload(t, record.CodecLz4), CompressionType: record.CodecLz4}, client, 5001)
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.Collector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range families {
		if f.GetName() == MetricPrefix+"org_apache_kafka_producer_record_send_total" {
			found = true
			labels := map[string]string{}
			for _, l := range f.GetMetric()[0].GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels[ClientSoftwareName] != "librdkafka" || labels["attributes"] != "topic=orders" || labels[ClientInstanceID] != FormatID(r.ClientInstanceID) ||
				!strings.HasPrefix(labels[ClientID], "app") || f.GetMetric()[0].GetUntyped().GetValue() != 42 {
				t.Fatalf("labels %v value %v", labels, f.GetMetric()[0])
			}
		}
	}
	if !found {
		t.Fatal("the pushed sum is not on /metrics")
	}
}

// FuzzDecodePayload: any bytes under any codec decode or fail with one of
// the two payload errors, within the bounds.
func FuzzDecodePayload(f *testing.F) {
	for _, codec := range []int8{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLz4, record.CodecZstd} {
		f.Add(codec, payload(f, codec))
	}
	f.Add(int8(7), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, codec int8, data []byte) {
		points, _, err := DecodePayload(codec, data, 64<<10, 100)
		if err != nil && !errors.Is(err, ErrInvalidPayload) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if len(points) > 100 {
			t.Fatalf("%d points past the bound", len(points))
		}
	})
}

// FuzzParseSubscription: any configs an IncrementalAlterConfigs carries
// parse or fail with one of the two config errors, and what parses has
// an interval in range and patterns only on known attributes.
func FuzzParseSubscription(f *testing.F) {
	f.Add("sub", "org.apache.kafka.producer.,*", "1000", "client_id=app.*,client_software_name=librdkafka")
	f.Add("", "", "", "")
	f.Add("s", " , ", "99", "client_id=(")
	f.Fuzz(func(t *testing.T, name, metrics, interval, match string) {
		s, err := ParseSubscription(name, map[string]string{MetricsConfig: metrics, IntervalMsConfig: interval, MatchConfig: match})
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if s.IntervalMs < minIntervalMs || s.IntervalMs > maxIntervalMs {
			t.Fatalf("interval %d out of range", s.IntervalMs)
		}
		for attr := range s.Match {
			if !slices.Contains(matchAttributes, attr) {
				t.Fatalf("pattern on unknown attribute %q", attr)
			}
		}
		s.Matches(map[string]string{ClientID: metrics})
	})
}
