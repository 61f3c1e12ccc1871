package server

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func describeQuorumRequest() *kmsg.DescribeQuorumRequest {
	req := kmsg.NewPtrDescribeQuorumRequest()
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = "__cluster_metadata"
	topic.Partitions = append(topic.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, topic)
	return req
}

// TestDescribeQuorumNodesNameTheControllerListener configures a node as
// Kafka's combined nodes are (a CONTROLLER listener beside the client one,
// controller.quorum.voters naming it) and checks that DescribeQuorum v2
// lists the voter with its controller listener only, by that name, as
// Kafka 4.4 does, whether asked through kgo on the client listener or on
// the controller listener (kafka-metadata-quorum --bootstrap-controller).
func TestDescribeQuorumNodesNameTheControllerListener(t *testing.T) {
	port := freePort(t)
	tn := startTestNode(t,
		"process.roles=broker,controller", "node.id=1",
		"listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:"+port,
		"controller.listener.names=CONTROLLER",
		"controller.quorum.voters=1@127.0.0.1:"+port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := func(where string, resp *kmsg.DescribeQuorumResponse) {
		t.Helper()
		if len(resp.Nodes) != 1 || resp.Nodes[0].NodeID != 1 || len(resp.Nodes[0].Listeners) != 1 {
			t.Fatalf("%s: nodes %+v, want node 1 with one listener", where, resp.Nodes)
		}
		listener := resp.Nodes[0].Listeners[0]
		if listener.Name != "CONTROLLER" || listener.Host != "127.0.0.1" || strconv.Itoa(int(listener.Port)) != port {
			t.Fatalf("%s: listener %+v, want CONTROLLER 127.0.0.1:%s", where, listener, port)
		}
	}

	req := describeQuorumRequest()
	req.Version = 2
	resp, err := req.RequestWith(ctx, tn.client())
	if err != nil {
		t.Fatal(err)
	}
	check("client listener", resp)

	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rc := &rawConn{t: t, conn: conn}
	rc.request(describeQuorumRequest(), 2)
	onController := kmsg.NewPtrDescribeQuorumResponse()
	rc.response(onController, 2)
	check("controller listener", onController)
}
