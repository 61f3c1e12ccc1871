package server

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// librdkafkaProducerScript produces 16 KiB random records with
// confluent-kafka-python as fast as librdkafka will for the given seconds,
// flushes, and prints the bytes acknowledged, the seconds taken and the
// throttles librdkafka reported through throttle_cb.
const librdkafkaProducerScript = `
import json, os, sys, time
from confluent_kafka import Producer

bootstrap, topic, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
throttles = []
acked = [0]
def on_throttle(event):
    throttles.append(event.throttle_time)
def on_delivery(err, msg):
    if err is None:
        acked[0] += len(msg.value())
p = Producer({"bootstrap.servers": bootstrap, "client.id": "rdkafka-limited", "linger.ms": 5,
              "queue.buffering.max.kbytes": 8192, "throttle_cb": on_throttle})
values = [os.urandom(16 << 10) for _ in range(64)]
start = time.monotonic()
i = 0
while time.monotonic() - start < seconds:
    try:
        p.produce(topic, values[i % len(values)], on_delivery=on_delivery)
        i += 1
    except BufferError:
        p.poll(0.05)
    p.poll(0)
p.flush(30)
elapsed = time.monotonic() - start
print(json.dumps({"acked": acked[0], "seconds": elapsed, "throttles": len(throttles),
                  "max_throttle_s": max(throttles) if throttles else 0}))
`

// TestProducerByteRateLibrdkafka: a librdkafka producer
// (confluent-kafka-python) under a 10 MB/s producer_byte_rate achieves
// 10 MB/s ± 10% and reports throttles through throttle_cb.
func TestProducerByteRateLibrdkafka(t *testing.T) {
	if testing.Short() {
		t.Skip("measures a rate for 12 s")
	}
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import confluent_kafka").Run(); err != nil {
		t.Skip("confluent-kafka-python not installed (compat/run.sh installs it)")
	}
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "quota-rdkafka", 1, nil)
	const rate = 10 << 20
	setQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: kadmName("rdkafka-limited")}}, "producer_byte_rate", rate)
	script := filepath.Join(t.TempDir(), "produce.py")
	if err := os.WriteFile(script, []byte(librdkafkaProducerScript), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, script, tn.addr(), "quota-rdkafka", fmt.Sprint(quotaRunDuration().Seconds())).Output()
	if err != nil {
		t.Fatalf("librdkafka producer: %v\n%s", err, out)
	}
	var result struct {
		Acked        int64   `json:"acked"`
		Seconds      float64 `json:"seconds"`
		Throttles    int     `json:"throttles"`
		MaxThrottleS float64 `json:"max_throttle_s"`
	}
	if err := json.Unmarshal(out, &result); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	achieved := float64(result.Acked) / result.Seconds
	t.Logf("librdkafka under producer_byte_rate %d B/s: achieved %.0f B/s (%.3f of the quota) over %.1f s, %d throttle_cb calls (max %.3f s)",
		rate, achieved, achieved/rate, result.Seconds, result.Throttles, result.MaxThrottleS)
	if achieved < rate*0.9 || achieved > rate*1.1 {
		t.Fatalf("achieved %.0f B/s, want %d ± 10%%", achieved, rate)
	}
	if result.Throttles == 0 {
		t.Fatal("librdkafka reported no throttle")
	}
}
