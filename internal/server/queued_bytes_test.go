package server

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestQueuedMaxRequestBytesFranzGo: eight franz-go producers of 64 KiB
// requests against one handler thread and a queued.max.request.bytes of
// 100 KiB (socket.request.max.bytes too, the least Kafka allows). The
// readers find the pool spent and stop reading; they resume as requests
// are handled, every record acknowledged is read back, and once the load
// stops the pool is empty again.
func TestQueuedMaxRequestBytesFranzGo(t *testing.T) {
	const maxBytes = 102400
	tn := startTestNode(t, "num.io.threads=1",
		fmt.Sprintf("socket.request.max.bytes=%d", maxBytes),
		fmt.Sprintf("queued.max.request.bytes=%d", maxBytes))
	adm := tn.admin()
	mustCreateTopic(t, adm, "pool", 1, nil)
	series := scrape(t, tn)
	if available, ok := series["samsa_network_memory_pool_available_bytes"]; !ok || available != maxBytes {
		t.Fatalf("samsa_network_memory_pool_available_bytes = %v (present %v) at rest, want %d", available, ok, maxBytes)
	}

	value := make([]byte, 16<<10)
	rand.Read(value)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acked, failed atomic.Int64
	var wg sync.WaitGroup
	const producers = 8
	for p := range producers {
		cl := tn.client(kgo.ClientID(fmt.Sprintf("producer-%d", p)),
			kgo.ProducerBatchMaxBytes(64<<10), kgo.ProducerLinger(0))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				cl.Produce(ctx, &kgo.Record{Topic: "pool", Value: value}, func(_ *kgo.Record, err error) {
					switch {
					case err == nil:
						acked.Add(1)
					case ctx.Err() == nil:
						failed.Add(1)
						t.Errorf("produce: %v", err)
					}
				})
			}
		}()
	}
	deadline := time.Now().Add(60 * time.Second)
	for tn.node.network.Stats().MemoryPoolWaits < 10 {
		if time.Now().After(deadline) {
			t.Fatalf("readers waited for memory %d times in 60 s of produce", tn.node.network.Stats().MemoryPoolWaits)
		}
		time.Sleep(10 * time.Millisecond)
	}
	seenWaiting := tn.node.network.Stats()
	cancel()
	wg.Wait()
	for deadline := time.Now().Add(30 * time.Second); tn.node.network.Stats().MemoryPoolUsedBytes != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still used in the pool after the load", tn.node.network.Stats().MemoryPoolUsedBytes)
		}
	}
	if failed.Load() != 0 {
		t.Fatalf("%d records failed", failed.Load())
	}

	// Every acknowledged record is there (records cancelled before they
	// were sent are not acknowledged and not counted).
	offsets, err := adm.ListEndOffsets(testContext(t), "pool")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := offsets.Lookup("pool", 0)
	if end.Offset < acked.Load() {
		t.Fatalf("end offset %d below the %d records acknowledged", end.Offset, acked.Load())
	}
	consumer := tn.client(kgo.ConsumeTopics("pool"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var read int64
	readCtx := testContext(t)
	for read < end.Offset {
		fetches := consumer.PollFetches(readCtx)
		if err := fetches.Err(); err != nil {
			t.Fatal(err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if len(r.Value) != len(value) {
				t.Fatalf("record at %d has %d bytes, want %d", r.Offset, len(r.Value), len(value))
			}
			read++
		})
	}
	after := tn.node.network.Stats()
	t.Logf("%d records acknowledged; readers waited %d times, pool depleted %v in all",
		acked.Load(), after.MemoryPoolWaits, after.MemoryPoolDepleted)
	if seenWaiting.MemoryPoolDepleted <= 0 {
		t.Fatal("readers waited but no depleted time was counted")
	}
	// The consumer's own requests hold the pool while they are handled:
	// with it closed, the pool drains to empty.
	consumer.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		series = scrape(t, tn)
		if series["samsa_network_memory_pool_waits_total"] < 10 {
			t.Fatalf("samsa_network_memory_pool_waits_total = %v, want at least 10", series["samsa_network_memory_pool_waits_total"])
		}
		if series["samsa_network_memory_pool_used_bytes"] == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("samsa_network_memory_pool_used_bytes = %v 30 s after the consumer closed", series["samsa_network_memory_pool_used_bytes"])
		}
	}
}
