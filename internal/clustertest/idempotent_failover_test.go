package clustertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/record"
)

// idempotentBatch is a batch of an idempotent producer, as a client sends
// it.
func idempotentBatch(t *testing.T, producerID int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	opts := record.DefaultBuildOptions()
	opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence = producerID, epoch, seq
	opts.BaseTimestamp = time.Now().UnixMilli()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Value: fmt.Appendf(nil, "seq-%d", int(seq)+i), TimestampDelta: int64(i)}
	}
	b, err := record.Build(opts, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// topicIDOf looks the topic's id up in the cluster's metadata.
func topicIDOf(ctx context.Context, cl *kgo.Client, topic string) ([16]byte, error) {
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	req.Topics = append(req.Topics, mt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return [16]byte{}, err
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		return [16]byte{}, fmt.Errorf("metadata of %s: %+v", topic, resp.Topics)
	}
	return resp.Topics[0].TopicID, nil
}

// produceBatch sends one batch with acks=all to broker and returns the
// partition's answer.
func produceBatch(ctx context.Context, cl *kgo.Client, broker int32, topic string, batch []byte) (int64, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// Produce v13 names the topic by id (KIP-516); older versions by name.
	topicID, err := topicIDOf(rctx, cl, topic)
	if err != nil {
		return -1, err
	}
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = 0, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(rctx, cl.Broker(int(broker)))
	if err != nil {
		return -1, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return -1, fmt.Errorf("produce response for %d topics", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	return p.BaseOffset, kerr.ErrorForCode(p.ErrorCode)
}

// TestReplicationFailoverKeepsIdempotentRetries: an idempotent producer's
// five in-flight batches (max.in.flight.requests.per.connection) are all
// acknowledged, the leader is killed, and the producer retries every one of
// them against the new leader, a follower promoted in a running process:
// each is answered as a duplicate with its original base offset, not
// OUT_OF_ORDER_SEQUENCE_NUMBER, and the next batch follows them.
func TestReplicationFailoverKeepsIdempotentRetries(t *testing.T) {
	c := replicationCluster(t, "broker.session.timeout.ms=1000", "broker.heartbeat.interval.ms=100")
	const topic = "idempotent-failover"
	createReplicatedTopic(t, c, topic, 1)
	cl := newClient(t, c.Addrs())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	init, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(ctx, cl)
	if err != nil || init.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %v", err, kerr.ErrorForCode(init.ErrorCode))
	}
	st, err := topicState(ctx, c.Nodes[0].Addr(), topic)
	if err != nil {
		t.Fatal(err)
	}
	oldLeader := st[0].leader

	const batches, perBatch = 5, 3
	var sent [][]byte
	var bases []int64
	for i := range batches {
		b := idempotentBatch(t, init.ProducerID, init.ProducerEpoch, int32(i*perBatch), perBatch)
		base, err := produceBatch(ctx, cl, oldLeader, topic, b)
		if err != nil {
			t.Fatalf("batch %d to leader %d: %v", i, oldLeader, err)
		}
		sent, bases = append(sent, b), append(bases, base)
	}
	// acks=all: every replica of the full ISR holds the five batches.

	killed := time.Now()
	c.Nodes[oldLeader-1].Kill()
	var newLeader int32 = -1
	survivor := c.Nodes[oldLeader%3]
	WaitFor(t, 30*time.Second, func() error {
		st, err := topicState(ctx, survivor.Addr(), topic)
		if err != nil {
			return err
		}
		if l := st[0].leader; l < 0 || l == oldLeader {
			return fmt.Errorf("leader still %d", l)
		}
		newLeader = st[0].leader
		return nil
	})
	t.Logf("leader %d killed; node %d leads after %v", oldLeader, newLeader, time.Since(killed).Round(time.Millisecond))

	// The retries, oldest first, as a producer resends its in-flight
	// batches. The new leader may answer NOT_LEADER_OR_FOLLOWER until its
	// metadata catches up.
	for i, b := range sent {
		var base int64
		WaitFor(t, 30*time.Second, func() error {
			var err error
			base, err = produceBatch(ctx, cl, newLeader, topic, b)
			if errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.NotEnoughReplicas) || errors.Is(err, kerr.NotEnoughReplicasAfterAppend) {
				return err
			}
			if err != nil {
				return errStopWaiting{fmt.Errorf("retry of batch %d (sequence %d) to the new leader: %w", i, i*perBatch, err)}
			}
			return nil
		})
		if base != bases[i] {
			t.Fatalf("retry of batch %d answered base offset %d, want its original %d", i, base, bases[i])
		}
	}
	next := idempotentBatch(t, init.ProducerID, init.ProducerEpoch, batches*perBatch, perBatch)
	base, err := produceBatch(ctx, cl, newLeader, topic, next)
	if err != nil {
		t.Fatalf("the batch after the retries: %v", err)
	}
	if want := bases[batches-1] + perBatch; base != want {
		t.Fatalf("the batch after the retries at %d, want %d", base, want)
	}
}
