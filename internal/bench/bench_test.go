package bench

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

func TestHistogramQuantilesWithinPrecision(t *testing.T) {
	var h Histogram
	for i := 1; i <= 100000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {0.999, 99900 * time.Microsecond}} {
		got := h.Quantile(c.q)
		if diff := float64(got-c.want) / float64(c.want); diff < -0.02 || diff > 0.02 {
			t.Errorf("q%.3f = %s, want %s within 2%%", c.q, got, c.want)
		}
	}
	s := h.Summary()
	if s.Max != 100*time.Millisecond || s.Count != 100000 {
		t.Errorf("summary %+v", s)
	}
}

func TestHistogramBucketsAreMonotonic(t *testing.T) {
	last := -1
	for ns := int64(0); ns < 1<<20; ns += 7 {
		b := bucketOf(ns)
		if b < last {
			t.Fatalf("bucketOf(%d) = %d < %d", ns, b, last)
		}
		if upper := bucketUpper(b); upper < ns {
			t.Fatalf("bucketUpper(%d) = %d < value %d", b, upper, ns)
		}
		last = b
	}
	if b := bucketOf(histogramValueMax); b >= histogramBuckets {
		t.Fatalf("max value bucket %d out of %d", b, histogramBuckets)
	}
}

func TestParseFlags(t *testing.T) {
	for _, s := range []string{"none", "round-robin", "random:10", "sequential:3"} {
		d, err := ParseKeyDistribution(s)
		if err != nil || d.String() != s {
			t.Errorf("ParseKeyDistribution(%q) = %v, %v", s, d, err)
		}
	}
	for _, s := range []string{"random", "none:3", "random:0", "zipf:3"} {
		if _, err := ParseKeyDistribution(s); err == nil {
			t.Errorf("ParseKeyDistribution(%q) succeeded", s)
		}
	}
	if a, err := ParseAcks("all"); err != nil || a != -1 {
		t.Errorf("ParseAcks(all) = %v, %v", a, err)
	}
	if _, err := ParseAcks("2"); err == nil {
		t.Error("ParseAcks(2) succeeded")
	}
	if _, err := ParseCompression("brotli"); err == nil {
		t.Error("ParseCompression(brotli) succeeded")
	}
}

func TestWalkBatchesStopsAtTruncatedBatch(t *testing.T) {
	batch := make([]byte, 100)
	batch[11] = 100 - 12 // length
	batch[7] = 10        // base offset
	batch[26] = 4        // last offset delta
	batch[60] = 5        // records
	two := append(append([]byte{}, batch...), batch[:70]...)
	next, records, size := walkBatches(two)
	if next != 15 || records != 5 || size != 100 {
		t.Fatalf("walkBatches = %d, %d, %d; want 15, 5, 100", next, records, size)
	}
}

// TestRunsAgainstAFakeCluster drives every mode against franz-go's kfake,
// asserting only that records flowed.
func TestRunsAgainstAFakeCluster(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, n, err := EnsureTopic(ctx, brokers, nil, TopicSpec{Name: "t", Partitions: 3, ReplicationFactor: 1}); err != nil || n != 3 {
		t.Fatalf("EnsureTopic = %d, %v", n, err)
	}
	keys, _ := ParseKeyDistribution("random:50")
	produced, err := Produce(ctx, ProduceConfig{
		Brokers: brokers, Topic: "t", RecordBytes: 100, Records: 5000,
		Acks: -1, Linger: time.Millisecond, Producers: 2, Keys: keys,
		ProgressInterval: 10 * time.Millisecond, Progress: func(Progress) {},
	})
	if err != nil || produced.Records != 5000 || produced.Errors != 0 || produced.Latency.Count != 5000 {
		t.Fatalf("Produce = %+v, %v", produced, err)
	}
	for _, raw := range []bool{false, true} {
		// Two producers each wrote one warm-up record too.
		consumed, err := Consume(ctx, ConsumeConfig{Brokers: brokers, Topic: "t", Records: 5002, IdleTimeout: 5 * time.Second, RawFetch: raw})
		if err != nil || consumed.Records != 5002 || consumed.Errors != 0 {
			t.Fatalf("Consume(raw=%v) = %+v, %v", raw, consumed, err)
		}
	}
	e2e, err := EndToEnd(ctx, EndToEndConfig{Produce: ProduceConfig{
		Brokers: brokers, Topic: "t", RecordBytes: 64, Duration: 300 * time.Millisecond,
		Acks: 1, Producers: 1, RecordsPerSecond: 2000,
	}})
	if err != nil || e2e.Records == 0 || e2e.Errors != 0 || e2e.Latency.Count != e2e.Records {
		t.Fatalf("EndToEnd = %+v, %v", e2e, err)
	}
}
