package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/record"
)

// BenchmarkProduceMemory drives a real node with produce requests shaped as
// a producer at full speed sends them (workloads a and g of the bench tool:
// 1 KiB records, acks=1, 12 partitions of one 1 MB batch each, five requests
// in flight per connection) from one connection and from ten, and reports
// the process's peak RSS while it does so, with the peak Go heap beside it.
//
// The producers are raw connections that send one prebuilt request, shared
// by all of them, so the load generator's own memory is that one request
// (request-MB) and the rest of the peak is the broker's. peak-RSS-MB is
// VmHWM after the peak was reset (/proc/self/clear_refs) when the measured
// phase began; peak-anon-RSS-MB the largest RssAnon sampled, which leaves
// out the binary's pages; idle-anon-RSS-MB the RssAnon when the phase
// began. Compare builds by running both in one session:
//
//	go test -run XXX -bench ProduceMemory -benchtime 200x ./internal/server/
func BenchmarkProduceMemory(b *testing.B) {
	tn := startTestNode(b,
		"log.segment.bytes=33554432", "log.retention.bytes=67108864", "log.retention.check.interval.ms=1000")
	const (
		topic      = "bench-memory"
		partitions = 12
		inFlight   = 5
	)
	resp, err := tn.admin().CreateTopics(b.Context(), partitions, 1, nil, topic)
	if err != nil || resp[topic].Err != nil {
		b.Fatalf("create topic: %v %v", err, resp[topic].Err)
	}
	request := produceRequestFrame(b, topic, partitions, 1000, 1000)
	for _, producers := range []int{1, 10} {
		b.Run(fmt.Sprintf("producers=%d", producers), func(b *testing.B) {
			conns := make([]net.Conn, producers)
			for i := range conns {
				conn, err := net.Dial("tcp", tn.addr())
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				conns[i] = conn
			}
			idle := readRSSBytes(b, "RssAnon")
			resetPeakRSS(b)
			sampler := startMemorySampler()
			var sent atomic.Int64
			var wg sync.WaitGroup
			failures := make(chan error, producers)
			b.SetBytes(int64(len(request)))
			b.ResetTimer()
			for _, conn := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := produceFrames(conn, request, inFlight, &sent, int64(b.N)); err != nil {
						failures <- err
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			close(failures)
			for err := range failures {
				b.Fatal(err)
			}
			peakHeap, peakAnon := sampler.stop()
			b.ReportMetric(float64(readRSSBytes(b, "VmHWM"))/1e6, "peak-RSS-MB")
			b.ReportMetric(float64(peakAnon)/1e6, "peak-anon-RSS-MB")
			b.ReportMetric(float64(idle)/1e6, "idle-anon-RSS-MB")
			b.ReportMetric(float64(peakHeap)/1e6, "peak-heap-MB")
			b.ReportMetric(float64(len(request))/1e6, "request-MB")
		})
	}
}

// produceRequestFrame is a framed Produce v9 request, acks=1, with one
// uncompressed batch of records records of valueBytes each per partition.
func produceRequestFrame(b *testing.B, topic string, partitions, records, valueBytes int) []byte {
	values := make([]record.Record, records)
	for i := range values {
		value := bytes.Repeat([]byte{byte('a' + i%26)}, valueBytes)
		values[i] = record.Record{TimestampDelta: int64(i), Value: value}
	}
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = time.Now().UnixMilli()
	batch, err := record.Build(opts, values)
	if err != nil {
		b.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(9)
	req.Acks = 1
	req.TimeoutMillis = 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = int32(p)
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench-memory")).AppendRequest(nil, req, 1)
}

// produceFrames sends frame, with up to inFlight unanswered, until total
// frames have been sent by the producers sharing sent, and checks every
// partition of every response for an error.
func produceFrames(conn net.Conn, frame []byte, inFlight int, sent *atomic.Int64, total int64) error {
	// The reader takes a request's token when it starts waiting for its
	// response, so the channel holds one fewer than may be in flight.
	unanswered := make(chan struct{}, inFlight-1)
	readDone := make(chan error, 1)
	go func() {
		reader := bufio.NewReader(conn)
		var size [4]byte
		body := make([]byte, 0, 4096)
		for range unanswered {
			if _, err := io.ReadFull(reader, size[:]); err != nil {
				readDone <- err
				return
			}
			body = body[:binary.BigEndian.Uint32(size[:])]
			if _, err := io.ReadFull(reader, body); err != nil {
				readDone <- err
				return
			}
			resp := kmsg.NewPtrProduceResponse()
			resp.SetVersion(9)
			// Response header v1: correlation id, no tagged fields.
			if err := resp.ReadFrom(body[5:]); err != nil {
				readDone <- err
				return
			}
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode != 0 {
						readDone <- fmt.Errorf("partition %d answered error %d", p.Partition, p.ErrorCode)
						return
					}
				}
			}
		}
		readDone <- nil
	}()
	for sent.Add(1) <= total {
		select {
		case unanswered <- struct{}{}:
		case err := <-readDone:
			if err == nil {
				err = errors.New("reader stopped early")
			}
			return err
		}
		if _, err := conn.Write(frame); err != nil {
			return err
		}
	}
	close(unanswered)
	return <-readDone
}

// readRSSBytes reads a field of /proc/self/status (VmRSS, VmHWM, RssAnon)
// in bytes.
func readRSSBytes(b *testing.B, field string) int64 {
	n, err := procStatusBytes(field)
	if err != nil {
		b.Skip(err)
	}
	return n
}

func procStatusBytes(field string) (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// resetPeakRSS sets VmHWM to the current RSS (Linux clear_refs, value 5).
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
}

// memorySampler records, every 10 ms, the largest Go heap (objects and
// free spans not yet returned to the OS) and the largest anonymous RSS
// (RssAnon: the heap, stacks and mapped frame buffers, without the pages
// of the binary that VmHWM also counts).
type memorySampler struct {
	done chan struct{}
	peak chan [2]int64
}

func startMemorySampler() *memorySampler {
	s := &memorySampler{done: make(chan struct{}), peak: make(chan [2]int64, 1)}
	go func() {
		samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
		var peak [2]int64
		ticker := time.NewTicker(10 * time.Millisecond)
		defer ticker.Stop()
		for {
			metrics.Read(samples)
			peak[0] = max(peak[0], int64(samples[0].Value.Uint64()+samples[1].Value.Uint64()+samples[2].Value.Uint64()))
			if anon, err := procStatusBytes("RssAnon"); err == nil {
				peak[1] = max(peak[1], anon)
			}
			select {
			case <-s.done:
				s.peak <- peak
				return
			case <-ticker.C:
			}
		}
	}()
	return s
}

// stop returns the peak heap and anonymous RSS.
func (s *memorySampler) stop() (heapBytes, anonBytes int64) {
	close(s.done)
	peak := <-s.peak
	return peak[0], peak[1]
}
