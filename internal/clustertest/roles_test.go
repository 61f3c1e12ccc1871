package clustertest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeQuorumAt asks the node at addr for DescribeQuorum.
func describeQuorumAt(ctx context.Context, addr string) (*kmsg.DescribeQuorumResponseTopicPartition, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return quorumPartition(ctx, cl.SeedBrokers()[0])
}

// quorumPartition asks r (a client, or one of its brokers) for
// DescribeQuorum and returns the metadata partition's state.
func quorumPartition(ctx context.Context, r kmsg.Requestor) (*kmsg.DescribeQuorumResponseTopicPartition, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, fmt.Errorf("DescribeQuorum answered %d topics", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	return &p, kerr.ErrorForCode(p.ErrorCode)
}

// createTopicVia creates a topic through one broker only.
func createTopicVia(ctx context.Context, addr, topic string, partitions int32, rf int16) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, rf
	req.Topics = append(req.Topics, rt)
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode)
}

// TestDedicatedControllersAndBrokers runs three controllers
// (process.roles=controller) and three brokers (process.roles=broker) that
// follow the metadata log as observers. The controllers keep a tiny tail of
// entries for observers, so a broker that starts or restarts catches up
// from a snapshot (FetchSnapshot) and then the log.
func TestDedicatedControllersAndBrokers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartDedicatedCluster(t, 3, 3, "metadata.log.max.record.bytes.between.snapshots=2048")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	brokerIDs := []int32{4, 5, 6}

	// The brokers are observers of the quorum; the controllers are voters
	// and no broker.
	WaitFor(t, 30*time.Second, func() error {
		q, err := describeQuorumAt(ctx, c.Nodes[0].Addr())
		if err != nil {
			return err
		}
		var voters, observers []int32
		for _, v := range q.CurrentVoters {
			voters = append(voters, v.ReplicaID)
		}
		for _, o := range q.Observers {
			observers = append(observers, o.ReplicaID)
		}
		slices.Sort(observers)
		if q.LeaderID < 1 || q.LeaderID > 3 || !slices.Equal(voters, []int32{1, 2, 3}) || !slices.Equal(observers, brokerIDs) {
			return fmt.Errorf("quorum leader %d, voters %v, observers %v", q.LeaderID, voters, observers)
		}
		return nil
	})
	checkControllerListener(ctx, t, c)
	md, err := metadataOf(ctx, t, c.Nodes[1].Addr())
	if err != nil {
		t.Fatal(err)
	}
	var listed []int32
	for _, b := range md.Brokers {
		listed = append(listed, b.NodeID)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, brokerIDs) {
		t.Fatalf("metadata lists brokers %v, want %v", listed, brokerIDs)
	}

	// A topic created through one broker is visible on every broker, with
	// leaders on brokers only.
	const topic = "roles"
	if err := createTopicVia(ctx, c.Nodes[1].Addr(), topic, 6, 3); err != nil {
		t.Fatal(err)
	}
	waitTopicLed(t, c, topic, 6)

	// A client bootstrapped at one broker produces to every partition, one
	// bootstrapped at another reads it all back.
	producer := newClient(t, []string{c.Nodes[2].Addr()}, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	const perPartition = 50
	for p := range int32(6) {
		for i := range perPartition {
			if err := produceSync(ctx, producer, topic, p, fmt.Sprintf("%d-%d", p, i)); err != nil {
				t.Fatalf("produce to partition %d: %v", p, err)
			}
		}
	}
	consumer := newClient(t, []string{c.Nodes[0].Addr()}, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	for len(seen) < 6*perPartition {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records", len(seen), 6*perPartition)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		fetches.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}

	// Kill -9 the active controller: another is elected and a topic can be
	// created through a broker again.
	q, err := describeQuorumAt(ctx, c.Nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	active := c.Controllers[q.LeaderID-1]
	killed := time.Now()
	active.Kill()
	WaitFor(t, 30*time.Second, func() error {
		return createTopicVia(ctx, c.Nodes[0].Addr(), "after-failover", 1, 3)
	})
	t.Logf("controller %d killed: first CreateTopics through a broker succeeded %v later", q.LeaderID, time.Since(killed).Round(time.Millisecond))
	active.Start()
	waitTopicLed(t, c, "after-failover", 1)

	// A broker killed and restarted is fenced, re-registers, catches up
	// (from a snapshot: the controllers keep almost no tail) and is
	// unfenced; it then serves and sees what was created while it was down.
	down := c.Nodes[2]
	down.Kill()
	WaitFor(t, 30*time.Second, func() error {
		md, err := metadataOf(ctx, t, c.Nodes[0].Addr())
		if err != nil {
			return err
		}
		if len(md.Brokers) != 2 {
			return fmt.Errorf("broker 6 down for a while, metadata lists %d brokers", len(md.Brokers))
		}
		return nil
	})
	if err := createTopicVia(ctx, c.Nodes[0].Addr(), "while-down", 3, 2); err != nil {
		t.Fatal(err)
	}
	down.Start()
	WaitFor(t, 30*time.Second, func() error {
		md, err := metadataOf(ctx, t, down.Addr())
		if err != nil {
			return err
		}
		names := map[string]bool{}
		for _, tp := range md.Topics {
			names[*tp.Topic] = true
		}
		if len(md.Brokers) != 3 || !names["while-down"] || !names[topic] {
			return fmt.Errorf("restarted broker lists %d brokers and topics %v", len(md.Brokers), names)
		}
		return nil
	})
	restored := false
	down.LogLines(func(line string) {
		restored = restored || strings.Contains(line, "restored metadata from a controller's snapshot")
	})
	if !restored {
		t.Errorf("the restarted broker did not catch up from a snapshot")
	}
	checkMetadataSnapshotFetch(ctx, t, c)
	// It serves again: a preferred leader election gives it back the
	// partitions it prefers, and records produced there read back.
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	WaitFor(t, 30*time.Second, func() error {
		_, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{topic: {0: {}, 1: {}, 2: {}, 3: {}, 4: {}, 5: {}}})
		if err != nil {
			return err
		}
		st, err := topicState(ctx, c.Nodes[0].Addr(), topic)
		if err != nil {
			return err
		}
		for p, s := range st {
			if s.leader == 6 {
				return produceSync(ctx, producer, topic, p, "after-restart")
			}
		}
		return fmt.Errorf("broker 6 leads no partition of %s yet", topic)
	})

	// Restart the whole cluster: every broker rebuilds the same image (the
	// same topic ids) from the controllers' logs.
	want, err := topicIDs(ctx, t, c.Nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range append(append([]*Node{}, c.Nodes...), c.Controllers...) {
		n.Kill()
	}
	startTogether(c.Controllers)
	startTogether(c.Nodes)
	for _, n := range c.Nodes {
		WaitFor(t, 60*time.Second, func() error {
			got, err := topicIDs(ctx, t, n.Addr())
			if err != nil {
				return err
			}
			for name, id := range want {
				if got[name] != id {
					return fmt.Errorf("%s after the restart: topic %s has id %x, before %x", n.Addr(), name, got[name], id)
				}
			}
			return nil
		})
	}
}

// waitTopicLed waits until every broker lists topic with partitions
// partitions, each led by a live broker.
func waitTopicLed(t *testing.T, c *Cluster, topic string, partitions int) {
	t.Helper()
	for _, n := range c.Nodes {
		WaitFor(t, 30*time.Second, func() error {
			md, err := metadataOf(context.Background(), t, n.Addr())
			if err != nil {
				return err
			}
			brokers := map[int32]bool{}
			for _, b := range md.Brokers {
				brokers[b.NodeID] = true
			}
			st, err := topicState(context.Background(), n.Addr(), topic)
			if err != nil {
				return err
			}
			if len(st) != partitions {
				return fmt.Errorf("%s lists %d partitions of %s", n.Addr(), len(st), topic)
			}
			for p, s := range st {
				if !brokers[s.leader] {
					return fmt.Errorf("%s: partition %d of %s led by %d", n.Addr(), p, topic, s.leader)
				}
			}
			return nil
		})
	}
}

// checkControllerListener checks what a dedicated controller's listener
// serves: the controller APIs only, DescribeCluster for controllers, the
// metadata log only.
func checkControllerListener(ctx context.Context, t *testing.T, c *Cluster) {
	t.Helper()
	cl := newClient(t, []string{c.Controllers[0].Addr()})
	seed := cl.SeedBrokers()[0]
	versions, err := seed.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	keys := map[int16]bool{}
	for _, k := range versions.(*kmsg.ApiVersionsResponse).ApiKeys {
		keys[k.ApiKey] = true
	}
	for _, want := range []int16{1, 19, 55, 56, 59, 62, 63, 67} {
		if !keys[want] {
			t.Errorf("the controller listener does not advertise %s", kmsg.NameForKey(want))
		}
	}
	for _, not := range []int16{0, 3, 8, 10} {
		if keys[not] {
			t.Errorf("the controller listener advertises %s", kmsg.NameForKey(not))
		}
	}

	describe := kmsg.NewPtrDescribeClusterRequest()
	describe.EndpointType = 2
	resp, err := seed.Request(ctx, describe)
	if err != nil {
		t.Fatal(err)
	}
	dc := resp.(*kmsg.DescribeClusterResponse)
	if dc.ErrorCode != 0 || len(dc.Brokers) != 3 || dc.ControllerID < 1 || dc.ControllerID > 3 {
		t.Errorf("DescribeCluster(controllers) on a controller: error %d, %d nodes, controller %d", dc.ErrorCode, len(dc.Brokers), dc.ControllerID)
	}
	brokerClient := newClient(t, []string{c.Nodes[0].Addr()})
	resp, err = brokerClient.SeedBrokers()[0].Request(ctx, describe)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.DescribeClusterResponse).ErrorCode; code != kerr.UnsupportedEndpointType.Code {
		t.Errorf("DescribeCluster(controllers) on a broker: error %d, want UNSUPPORTED_ENDPOINT_TYPE", code)
	}

	// Only the metadata log can be fetched there.
	fetch := kmsg.NewPtrFetchRequest()
	fetch.ReplicaID = 99
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "orders"
	ft.Partitions = append(ft.Partitions, kmsg.NewFetchRequestTopicPartition())
	fetch.Topics = append(fetch.Topics, ft)
	resp, err = seed.Request(ctx, fetch)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("Fetch of a data topic on the controller listener: error %d, want UNKNOWN_TOPIC_OR_PARTITION", code)
	}
	// A data-plane request there closes the connection, as Kafka does for
	// an API a listener does not serve.
	conn, err := net.DialTimeout("tcp", c.Controllers[0].Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	metadataV1 := kmsg.NewPtrMetadataRequest()
	metadataV1.SetVersion(1)
	body := metadataV1.AppendTo(nil)
	// Request header v1: api key, version, correlation id, null client id.
	frame := binary.BigEndian.AppendUint32(nil, uint32(2+2+4+2+len(body)))
	frame = binary.BigEndian.AppendUint16(frame, 3)
	frame = binary.BigEndian.AppendUint16(frame, 1)
	frame = binary.BigEndian.AppendUint32(frame, 7)
	frame = binary.BigEndian.AppendUint16(frame, 0xffff)
	frame = append(frame, body...)
	if _, err := conn.Write(frame); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := conn.Read(make([]byte, 64)); !errors.Is(err, io.EOF) {
		t.Errorf("a Metadata request on the controller listener: read %d bytes, %v; want the connection closed", n, err)
	}
}

// checkMetadataSnapshotFetch fetches the metadata log from offset 0 on a
// controller whose tail no longer reaches it: the answer names a snapshot,
// which FetchSnapshot serves; a wrong snapshot id, a position past its end
// and another partition get Kafka's errors.
func checkMetadataSnapshotFetch(ctx context.Context, t *testing.T, c *Cluster) {
	t.Helper()
	var seed *kgo.Broker
	fetch := kmsg.NewPtrFetchRequest()
	fetch.ReplicaID = 99
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "__cluster_metadata"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset, fp.PartitionMaxBytes = 0, 1<<20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	var id kmsg.FetchResponseTopicPartitionSnapshotID
	controllers := make([]*kgo.Broker, len(c.Controllers))
	for i, controller := range c.Controllers {
		controllers[i] = newClient(t, []string{controller.Addr()}).SeedBrokers()[0]
	}
	WaitFor(t, 30*time.Second, func() error {
		var last error
		for i, controller := range c.Controllers {
			b := controllers[i]
			resp, err := b.Request(ctx, fetch)
			if err != nil {
				last = err
				continue
			}
			p := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
			if p.ErrorCode != 0 || p.SnapshotID.EndOffset < 0 {
				last = fmt.Errorf("fetch from offset 0 on %s: error %d, snapshot id %+v", controller.Addr(), p.ErrorCode, p.SnapshotID)
				continue
			}
			seed, id = b, p.SnapshotID
			return nil
		}
		return last
	})
	snapshotFetch := func(topic string, endOffset int64, epoch int32, position int64) kmsg.FetchSnapshotResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrFetchSnapshotRequest()
		req.ReplicaID, req.MaxBytes = 99, 1<<20
		rt := kmsg.NewFetchSnapshotRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewFetchSnapshotRequestTopicPartition()
		rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch, rp.Position = endOffset, epoch, position
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := seed.Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.FetchSnapshotResponse).Topics[0].Partitions[0]
	}
	whole := snapshotFetch("__cluster_metadata", id.EndOffset, id.Epoch, 0)
	if whole.ErrorCode != 0 || whole.Size <= 0 || int64(len(whole.Bytes)) != whole.Size {
		t.Fatalf("FetchSnapshot %+v: error %d, %d of %d bytes", id, whole.ErrorCode, len(whole.Bytes), whole.Size)
	}
	for name, tc := range map[string]struct {
		topic     string
		endOffset int64
		position  int64
		want      *kerr.Error
	}{
		"unknown snapshot":      {"__cluster_metadata", id.EndOffset + 1000, 0, kerr.SnapshotNotFound},
		"position past the end": {"__cluster_metadata", id.EndOffset, whole.Size + 1, kerr.PositionOutOfRange},
		"negative position":     {"__cluster_metadata", id.EndOffset, -1, kerr.PositionOutOfRange},
		"another partition":     {"orders", id.EndOffset, 0, kerr.UnknownTopicOrPartition},
	} {
		if got := snapshotFetch(tc.topic, tc.endOffset, id.Epoch, tc.position); got.ErrorCode != tc.want.Code {
			t.Errorf("FetchSnapshot, %s: error %d, want %s", name, got.ErrorCode, tc.want.Message)
		}
	}
}
