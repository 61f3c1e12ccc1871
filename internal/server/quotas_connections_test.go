package server

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsAnswered opens a connection and reports whether it answers an
// ApiVersions request before being closed.
func apiVersionsAnswered(t *testing.T, addr string) bool {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	frame := binary.BigEndian.AppendUint32(nil, 0)
	frame = binary.BigEndian.AppendUint16(frame, 18)
	frame = binary.BigEndian.AppendUint16(frame, 0)
	frame = binary.BigEndian.AppendUint32(frame, 1)
	frame = binary.BigEndian.AppendUint16(frame, 0xffff) // null client id
	frame = req.AppendTo(frame)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	if _, err := conn.Write(frame); err != nil {
		return false
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return false
	}
	return true
}

// TestConnectionCreationRatePerIP: an ip entity's connection_creation_rate
// (KIP-612) refuses the connections over it; Kafka's measurement lets
// 10 windows' worth through at first (1/s over the assumed 10 s span).
func TestConnectionCreationRatePerIP(t *testing.T) {
	tn := startTestNode(t)
	setQuota(t, tn.admin(), kadm.ClientQuotaEntity{{Type: "ip", Name: kadmName("127.0.0.1")}}, "connection_creation_rate", 1)
	// In parallel: a refused connection is held open for its throttle
	// time before it is closed.
	var answeredCount atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if apiVersionsAnswered(t, tn.addr()) {
				answeredCount.Add(1)
			}
		}()
	}
	wg.Wait()
	answered := int(answeredCount.Load())
	limited := tn.node.network.Stats().ConnectionsRateLimited
	t.Logf("%d of 20 connections answered, %d refused for the rate", answered, limited)
	// The admin client's own connection counted too.
	if answered < 8 || answered > 11 || limited == 0 {
		t.Fatalf("%d connections answered, %d refused; want about 10 answered", answered, limited)
	}
}

// TestMaxConnectionsPerIPOverrides: max.connections.per.ip.overrides
// raises the limit of one IP above max.connections.per.ip.
func TestMaxConnectionsPerIPOverrides(t *testing.T) {
	tn := startTestNode(t, "max.connections.per.ip=1", "max.connections.per.ip.overrides=127.0.0.1:3")
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for i := 0; i < 3; i++ {
		conn, err := net.Dial("tcp", tn.addr())
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, conn)
	}
	deadline := time.Now().Add(10 * time.Second)
	for tn.node.network.Stats().ConnectionsActive < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want 3", tn.node.network.Stats().ConnectionsActive)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if apiVersionsAnswered(t, tn.addr()) {
		t.Fatal("a fourth connection from the IP was answered")
	}
	if tn.node.network.Stats().ConnectionsRejected == 0 {
		t.Fatal("no connection rejected")
	}
}

// TestMaxConnectionCreationRateListener: max.connection.creation.rate
// holds the acceptor back; every connection is still served.
func TestMaxConnectionCreationRateListener(t *testing.T) {
	tn := startTestNode(t, "max.connection.creation.rate=10", "quota.window.num=2")
	start := time.Now()
	for i := 0; i < 30; i++ {
		if !apiVersionsAnswered(t, tn.addr()) {
			t.Fatalf("connection %d not answered", i)
		}
	}
	// 2 windows of 1 s allow 10 at once, then 10/s: 30 connections take at
	// least about 2 s however fast the machine.
	if elapsed := time.Since(start); elapsed < 1500*time.Millisecond {
		t.Fatalf("30 connections accepted in %v under 10/s", elapsed)
	}
}
