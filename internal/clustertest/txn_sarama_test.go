package clustertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// saramaTransformer copies every record of a claim to the output topic in
// its own transaction, committing the input offset in that transaction with
// AddOffsetsToTxn: with the group id alone (legacy) or with the member's
// group metadata.
type saramaTransformer struct {
	producer      sarama.SyncProducer
	group, output string
	withMetadata  bool
	// mu serializes the transactions: a producer runs one at a time,
	// while sarama consumes the claims concurrently.
	mu        sync.Mutex
	processed atomic.Int64
	failed    chan error
}

func (h *saramaTransformer) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaTransformer) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaTransformer) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		if err := h.transform(sess, msg); err != nil {
			select {
			case h.failed <- err:
			default:
			}
			return err
		}
		h.processed.Add(1)
	}
	return nil
}

func (h *saramaTransformer) transform(sess sarama.ConsumerGroupSession, msg *sarama.ConsumerMessage) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.producer.BeginTxn(); err != nil {
		return fmt.Errorf("BeginTxn: %w", err)
	}
	out := &sarama.ProducerMessage{Topic: h.output, Partition: msg.Partition, Value: sarama.ByteEncoder(append([]byte("out-"), msg.Value...))}
	if _, _, err := h.producer.SendMessage(out); err != nil {
		_ = h.producer.AbortTxn()
		return fmt.Errorf("SendMessage: %w", err)
	}
	offsets := map[string][]*sarama.PartitionOffsetMetadata{msg.Topic: {{Partition: msg.Partition, Offset: msg.Offset + 1}}}
	var err error
	if h.withMetadata {
		err = h.producer.AddOffsetsToTxnWithGroupMetadata(offsets, sarama.NewConsumerGroupMetadataFromSession(sess, h.group, nil))
	} else {
		err = h.producer.AddOffsetsToTxn(offsets, h.group)
	}
	if err != nil {
		_ = h.producer.AbortTxn()
		return fmt.Errorf("AddOffsetsToTxn: %w", err)
	}
	if err := h.producer.CommitTxn(); err != nil {
		return fmt.Errorf("CommitTxn: %w", err)
	}
	return nil
}

// TestTransactionalOffsetsUnderRunningGroup runs sarama's
// consume-transform-produce loop while its consumer group is active
// (Stable, one member): each input record is copied in a transaction that
// also commits the input offset with AddOffsetsToTxn, in the legacy form
// that names the group alone (TxnOffsetCommit v2 from a client speaking
// Kafka 2.4, v3 with an empty member and generation -1 from a newer one)
// and in the form carrying the member's generation and id. Kafka accepts
// all three whatever the group's state; every record must come out once
// and the group's offsets must end at the input's end. Then a franz-go
// producer commits, in the legacy form, for a group a franz-go consumer is
// a member of.
func TestTransactionalOffsetsUnderRunningGroup(t *testing.T) {
	c := txnCluster(t)
	const in, records = "sarama-ctp-in", 36
	createReplicatedTopic(t, c, in, txnPartitions)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	seed := acksAllProducer(t, c)
	var want []string
	for i := range records {
		v := fmt.Sprintf("r%03d", i)
		if err := produceSync(ctx, seed, in, int32(i%txnPartitions), v); err != nil {
			t.Fatal(err)
		}
		want = append(want, "out-"+v)
	}
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	ends, err := adm.ListEndOffsets(ctx, in)
	if err != nil {
		t.Fatal(err)
	}

	for _, form := range []struct {
		name            string
		producerVersion sarama.KafkaVersion
		withMetadata    bool
	}{
		{"legacy-v2", sarama.V2_4_0_0, false},
		{"legacy-v3", sarama.V3_6_0_0, false},
		{"group-metadata", sarama.V3_6_0_0, true},
	} {
		t.Run(form.name, func(t *testing.T) {
			group, output := "sarama-ctp-"+form.name, "sarama-ctp-out-"+form.name
			createReplicatedTopic(t, c, output, txnPartitions)

			pcfg := sarama.NewConfig()
			pcfg.Version = form.producerVersion
			pcfg.Producer.Idempotent = true
			pcfg.Producer.RequiredAcks = sarama.WaitForAll
			pcfg.Producer.Return.Successes = true
			pcfg.Producer.Partitioner = sarama.NewManualPartitioner
			pcfg.Producer.Transaction.ID = "sarama-ctp-" + form.name
			pcfg.Producer.Transaction.Timeout = 20 * time.Second
			pcfg.Net.MaxOpenRequests = 1
			producer, err := sarama.NewSyncProducer(c.Addrs(), pcfg)
			if err != nil {
				t.Fatal(err)
			}
			defer producer.Close()

			ccfg := sarama.NewConfig()
			ccfg.Version = sarama.V3_6_0_0
			ccfg.Consumer.Offsets.Initial = sarama.OffsetOldest
			ccfg.Consumer.Offsets.AutoCommit.Enable = false
			ccfg.Consumer.IsolationLevel = sarama.ReadCommitted
			consumer, err := sarama.NewConsumerGroup(c.Addrs(), group, ccfg)
			if err != nil {
				t.Fatal(err)
			}
			handler := &saramaTransformer{producer: producer, group: group, output: output, withMetadata: form.withMetadata, failed: make(chan error, 1)}
			consumeCtx, stopConsuming := context.WithCancel(ctx)
			consumed := make(chan struct{})
			go func() {
				defer close(consumed)
				for consumeCtx.Err() == nil {
					if err := consumer.Consume(consumeCtx, []string{in}, handler); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
						select {
						case handler.failed <- fmt.Errorf("Consume: %w", err):
						default:
						}
						return
					}
				}
			}()
			WaitFor(t, 90*time.Second, func() error {
				select {
				case err := <-handler.failed:
					return errStopWaiting{err}
				default:
				}
				if n := handler.processed.Load(); n < records {
					return fmt.Errorf("%d of %d records transformed", n, records)
				}
				return nil
			})
			// The commits were made while the group was active.
			described, err := adm.DescribeGroups(ctx, group)
			if err != nil {
				t.Fatal(err)
			}
			if g := described[group]; g.State != "Stable" || len(g.Members) != 1 {
				t.Fatalf("group %s is %s with %d members, want Stable with 1", group, g.State, len(g.Members))
			}
			stopConsuming()
			<-consumed
			if err := consumer.Close(); err != nil {
				t.Fatal(err)
			}

			WaitFor(t, 30*time.Second, func() error {
				offsets, err := adm.FetchOffsets(ctx, group)
				if err != nil {
					return err
				}
				for p := range int32(txnPartitions) {
					end, _ := ends.Lookup(in, p)
					got, ok := offsets.Lookup(in, p)
					if !ok || got.At != end.Offset {
						return fmt.Errorf("partition %d: committed offset %d, end %d", p, got.At, end.Offset)
					}
				}
				return nil
			})
			sentinel := transactionalProducer(t, c, "sarama-ctp-sentinel-"+form.name)
			if err := runTransaction(ctx, sentinel, output, "sentinel", true); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, values := range readUntilSentinel(t, c, output, "sentinel", kgo.ReadCommitted()) {
				for _, v := range values {
					if !strings.HasPrefix(v, "sentinel-") {
						got = append(got, v)
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("output read_committed: %d records, want each of %d once:\n got %v", len(got), len(want), got)
			}
		})
	}
	t.Run("franz-go-legacy", func(t *testing.T) { franzLegacyTxnOffsetCommit(ctx, t, c, adm, in, ends) })
}

// franzLegacyTxnOffsetCommit has a franz-go transactional producer commit
// offsets for a group a franz-go consumer is a member of, with
// AddOffsetsToTxn and a TxnOffsetCommit naming the group alone (member ""
// and generation -1), and checks the group, still Stable, then has them.
func franzLegacyTxnOffsetCommit(ctx context.Context, t *testing.T, c *Cluster, adm *kadm.Client, in string, ends kadm.ListedOffsets) {
	const group, output = "kgo-legacy", "kgo-legacy-out"
	createReplicatedTopic(t, c, output, txnPartitions)
	member := newClient(t, c.Addrs(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(in), kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(200*time.Millisecond))
	WaitFor(t, 30*time.Second, func() error {
		pollCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		member.PollFetches(pollCtx)
		described, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return err
		}
		if g := described[group]; g.State != "Stable" || len(g.Members) != 1 {
			return fmt.Errorf("group %s is %s with %d members", group, g.State, len(g.Members))
		}
		return nil
	})

	producer := transactionalProducer(t, c, "kgo-legacy-txn")
	if err := producer.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: output, Partition: 0, Value: []byte("legacy-out")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	producerID, epoch, err := producer.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = "kgo-legacy-txn", producerID, epoch, group
	addResp, err := add.RequestWith(ctx, producer)
	if err != nil || addResp.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %v %v", err, kerr.ErrorForCode(addResp.ErrorCode))
	}
	commit := kmsg.NewPtrTxnOffsetCommitRequest()
	commit.TransactionalID, commit.ProducerID, commit.ProducerEpoch, commit.Group = "kgo-legacy-txn", producerID, epoch, group
	commit.Generation, commit.MemberID = -1, ""
	ct := kmsg.NewTxnOffsetCommitRequestTopic()
	// TxnOffsetCommit v6 names the topic by id; older versions by name.
	inID, err := topicIDOf(ctx, producer, in)
	if err != nil {
		t.Fatal(err)
	}
	ct.Topic, ct.TopicID = in, inID
	for p := range int32(txnPartitions) {
		end, _ := ends.Lookup(in, p)
		cp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		cp.Partition, cp.Offset, cp.LeaderEpoch = p, end.Offset, -1
		ct.Partitions = append(ct.Partitions, cp)
	}
	commit.Topics = append(commit.Topics, ct)
	commitResp, err := commit.RequestWith(ctx, producer)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range commitResp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("TxnOffsetCommit without group metadata to a Stable group: partition %d: %v", rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
			}
		}
	}
	if err := producer.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 30*time.Second, func() error {
		offsets, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return err
		}
		for p := range int32(txnPartitions) {
			end, _ := ends.Lookup(in, p)
			if got, ok := offsets.Lookup(in, p); !ok || got.At != end.Offset {
				return fmt.Errorf("partition %d: committed offset %d, end %d", p, got.At, end.Offset)
			}
		}
		return nil
	})
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if g := described[group]; g.State != "Stable" || len(g.Members) != 1 {
		t.Fatalf("group %s is %s with %d members after the commit, want Stable with 1", group, g.State, len(g.Members))
	}
}
