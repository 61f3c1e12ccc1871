package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestShareSessionReopenKeepsAcquisitions: a member opening a new share
// session (epoch 0) keeps what its previous session acquired, as Kafka's
// share session cache drops the old session without releasing anything:
// the records are not delivered again, neither to the member in its new
// session nor to another member, and the member's ACCEPT of them (here in
// the new session; in the bench, that of an old-session request still
// being served) is taken. Releasing them at the reopen delivered them
// again in the reopening request itself, with delivery count 2; the old
// request's ACCEPT then acknowledged them and the member's ACCEPT of the
// redelivery was refused with INVALID_RECORD_STATE, the last step below.
func TestShareSessionReopenKeepsAcquisitions(t *testing.T) {
	tn := shareTestNode(t, "group.share.record.lock.duration.ms=30000")
	const topic = "share-reopen"
	mustCreateTopic(t, tn.admin(), topic, 1, nil)
	r := shareRaw{t: t, cl: tn.client(), topicID: tn.node.broker.Image().Topic(topic).ID}
	eventually(t, 20*time.Second, "the share-partition to start", func() bool {
		r.fetch("m0", 0)
		_, ok := tn.node.broker.SharePartitionStartOffset("sg-raw", r.topicID, 0)
		return ok
	})
	produceShareRecords(t, tn, topic, 0, 5)

	first := r.fetch("m1", 0)
	if first.ErrorCode != 0 || len(first.Topics) != 1 || len(first.Topics[0].Partitions[0].AcquiredRecords) != 1 {
		t.Fatalf("first session's fetch: %+v", first)
	}
	if a := first.Topics[0].Partitions[0].AcquiredRecords[0]; a.FirstOffset != 0 || a.LastOffset != 4 || a.DeliveryCount != 1 {
		t.Fatalf("first session acquired %+v, want 0-4 delivered once", a)
	}

	reopened := r.fetch("m1", 0)
	wantCode(t, "reopening the session", reopened.ErrorCode, nil)
	for _, tp := range reopened.Topics {
		for _, p := range tp.Partitions {
			if len(p.AcquiredRecords) > 0 {
				t.Fatalf("the reopened session got its own acquired records again: %+v", p.AcquiredRecords)
			}
		}
	}
	other := r.fetch("m2", 0)
	for _, tp := range other.Topics {
		for _, p := range tp.Partitions {
			if len(p.AcquiredRecords) > 0 {
				t.Fatalf("another member took records m1 still holds: %+v", p.AcquiredRecords)
			}
		}
	}
	if n := tn.node.broker.ShareAcquiredCount("sg-raw", r.topicID, 0); n != 5 {
		t.Fatalf("%d records acquired after the reopen, want m1's 5", n)
	}

	accepted := r.ack("m1", 1, 0, 4, 1)
	wantCode(t, "ACCEPT in the new session", accepted.ErrorCode, nil)
	if accepted.ErrorCode == 0 {
		wantCode(t, "ACCEPT of the first session's records", accepted.Topics[0].Partitions[0].ErrorCode, nil)
	}
	if start, _ := tn.node.broker.SharePartitionStartOffset("sg-raw", r.topicID, 0); start != 5 {
		t.Fatalf("start offset %d after accepting 0-4, want 5", start)
	}
	wantCode(t, "ACCEPT again", r.ack("m1", 2, 0, 0, 1).Topics[0].Partitions[0].ErrorCode, kerr.InvalidRecordState)
}

// TestShareFetchWaitsForStateLoad: a ShareFetch that is a fresh node's
// first share request waits, within its MaxWaitMillis, for
// __share_group_state to be created and loaded, as Kafka's fetch waits
// for its persister, and then acquires the records: it used to answer
// COORDINATOR_LOAD_IN_PROGRESS (or NOT_COORDINATOR) at once.
func TestShareFetchWaitsForStateLoad(t *testing.T) {
	tn := shareTestNode(t)
	const topic, group = "share-cold-fetch", "sg-cold-fetch"
	mustCreateTopic(t, tn.admin(), topic, 1, nil)
	ctx := testContext(t)
	cl := tn.client()
	wantCode(t, "share.auto.offset.reset=earliest", alterGroupConfigs(ctx, t, cl, group, "share.auto.offset.reset", "earliest"), nil)
	produceShareRecords(t, tn, topic, 0, 5)

	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(group), kmsg.StringPtr("m1"), 0
	req.MaxBytes, req.MaxRecords, req.MaxWaitMillis = 1<<20, 100, 30000
	p := kmsg.NewShareFetchRequestTopicPartition()
	p.Partition, p.PartitionMaxBytes = 0, 1<<20
	req.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: tn.node.broker.Image().Topic(topic).ID, Partitions: []kmsg.ShareFetchRequestTopicPartition{p}}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("first share fetch of a fresh node: %+v", resp)
	}
	got := resp.Topics[0].Partitions[0]
	wantCode(t, "first share fetch of a fresh node", got.ErrorCode, nil)
	if len(got.AcquiredRecords) != 1 || got.AcquiredRecords[0].FirstOffset != 0 || got.AcquiredRecords[0].LastOffset != 4 {
		t.Fatalf("acquired %+v, want 0-4", got.AcquiredRecords)
	}
}
