package clustertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFollowersTakeTheLeadersLogStart: records deleted on the leader
// (DeleteRecords) are deleted on the followers too, which take the log
// start offset from the leader's fetch responses as Kafka's do, so after
// the leader dies the new one starts where the old one did instead of
// serving the deleted records again.
func TestFollowersTakeTheLeadersLogStart(t *testing.T) {
	c := replicationCluster(t)
	const topic = "log-start"
	createReplicatedTopic(t, c, topic, 1)
	cl := c.client(t, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic))
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range 100 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	deleted, err := adm.DeleteRecords(ctx, kadm.Offsets{topic: {0: {At: 50}}})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := deleted.Lookup(topic, 0); r.Err != nil || r.LowWatermark != 50 {
		t.Fatalf("delete records: %+v", r)
	}
	st, err := topicState(ctx, c.Nodes[0].Addr(), topic)
	if err != nil {
		t.Fatal(err)
	}
	leader := st[0].leader
	// A fetch round carries the new log start to the followers.
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("100")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFullISR(t, c, topic, 30*time.Second)
	c.Nodes[leader-1].Kill()
	WaitFor(t, 60*time.Second, func() error {
		now, err := topicState(ctx, c.Nodes[leader%3].Addr(), topic)
		if err != nil {
			return err
		}
		if now[0].leader == leader || now[0].leader < 0 {
			return fmt.Errorf("leader still %d", now[0].leader)
		}
		starts, err := adm.ListStartOffsets(ctx, topic)
		if err != nil {
			return err
		}
		if s, _ := starts.Lookup(topic, 0); s.Err != nil || s.Offset != 50 {
			return fmt.Errorf("new leader %d starts at %d (%v), want 50", now[0].leader, s.Offset, s.Err)
		}
		return nil
	})
	c.Nodes[leader-1].Start()
}
