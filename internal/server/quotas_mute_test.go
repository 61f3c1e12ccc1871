package server

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/record"
)

// TestThrottledConnectionIsMuted drives a client that ignores
// throttle_time_ms: it writes Produce requests back to back on a raw
// socket. The broker mutes the connection after each throttled response,
// so the client's acknowledged rate stays near its producer_byte_rate
// (without muting nothing else would hold it back) and its requests wait
// in its own socket, not in the broker.
func TestThrottledConnectionIsMuted(t *testing.T) {
	if testing.Short() {
		t.Skip("measures a rate for 8 s")
	}
	tn := startTestNode(t, "quota.window.num=3")
	adm := tn.admin()
	mustCreateTopic(t, adm, "quota-mute", 1, nil)
	const rate = 2 << 20
	setQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: kadmName("rude")}}, "producer_byte_rate", rate)

	value := make([]byte, 128<<10)
	rand.Read(value)
	opts := record.DefaultBuildOptions()
	batch, err := record.Build(opts, []record.Record{{Value: value}})
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 7, 1, 10000
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = "quota-mute"
	partition := kmsg.NewProduceRequestTopicPartition()
	partition.Records = batch
	topic.Partitions = append(topic.Partitions, partition)
	req.Topics = append(req.Topics, topic)
	body := req.AppendTo(nil)

	conn, err := net.Dial("tcp", tn.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const runFor = 8 * time.Second
	deadline := time.Now().Add(runFor)
	conn.SetDeadline(deadline.Add(15 * time.Second))
	go func() {
		w := bufio.NewWriter(conn)
		for correlation := int32(0); time.Now().Before(deadline); correlation++ {
			frame := binary.BigEndian.AppendUint32(nil, 0)
			frame = binary.BigEndian.AppendUint16(frame, 0) // Produce
			frame = binary.BigEndian.AppendUint16(frame, 7)
			frame = binary.BigEndian.AppendUint32(frame, uint32(correlation))
			frame = binary.BigEndian.AppendUint16(frame, 4)
			frame = append(frame, "rude"...)
			frame = append(frame, body...)
			binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
			if _, err := w.Write(frame); err != nil {
				return
			}
			w.Flush()
		}
	}()
	var acked, throttled atomic.Int64
	start := time.Now()
	reader := bufio.NewReader(conn)
	for time.Now().Before(deadline) {
		var size int32
		if err := binary.Read(reader, binary.BigEndian, &size); err != nil {
			break
		}
		frame := make([]byte, size)
		if _, err := io.ReadFull(reader, frame); err != nil {
			break
		}
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 7
		if err := resp.ReadFrom(frame[4:]); err != nil {
			t.Fatal(err)
		}
		if resp.Topics[0].Partitions[0].ErrorCode == 0 {
			acked.Add(int64(len(value)))
		}
		if resp.ThrottleMillis > 0 {
			throttled.Add(1)
		}
	}
	elapsed := time.Since(start)
	achieved := float64(acked.Load()) / elapsed.Seconds()
	t.Logf("a client ignoring throttles under %d B/s achieved %.0f B/s (%.2f of the quota), %d throttled responses, %d mutes",
		rate, achieved, achieved/rate, throttled.Load(), tn.node.network.Stats().ConnectionsThrottled)
	if throttled.Load() == 0 || tn.node.network.Stats().ConnectionsThrottled == 0 {
		t.Fatal("never throttled")
	}
	if achieved > 1.5*rate {
		t.Fatalf("achieved %.0f B/s: muting did not hold the client near %d B/s", achieved, rate)
	}
	// The quota metrics name the bucket.
	series := scrape(t, tn)
	labels := `{client_id="rude",quota_type="produce",user=""}`
	if series["samsa_quota_throttles_total"+labels] == 0 || series["samsa_quota_limit"+labels] != rate || series["samsa_quota_rate"+labels] == 0 {
		t.Fatalf("quota metrics: throttles %v limit %v rate %v", series["samsa_quota_throttles_total"+labels],
			series["samsa_quota_limit"+labels], series["samsa_quota_rate"+labels])
	}
}
