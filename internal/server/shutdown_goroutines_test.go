package server

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// nodeLoops returns the stacks of goroutines running one of a node's loops
// (runLiveness, runTelemetryExpiry, runISRChecks, ...).
func nodeLoops() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var loops []string
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("internal/server.(*Node).run")) {
			loops = append(loops, string(g))
		}
	}
	return loops
}

// TestShutdownStopsTheNodesLoops: when Shutdown returns, none of the
// node's background loops (the telemetry expiry timer among them) is
// running, as a goroutine leak check after a broker shutdown expects.
// Client telemetry itself (internal/telemetry) is a deterministic core with
// no goroutine or timer of its own: its instances expire from the node's
// runTelemetryExpiry loop.
func TestShutdownStopsTheNodesLoops(t *testing.T) {
	tn := startTestNode(t)
	// Some work for the loops: a topic created and produced to.
	cl := tn.client(kgo.DefaultProduceTopic("loops"), kgo.AllowAutoTopicCreation())
	if err := cl.ProduceSync(testContext(t), &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if len(nodeLoops()) == 0 {
		t.Fatal("no node loop is running on a started node: the check finds nothing")
	}
	cl.Close()
	tn.stop()
	if loops := nodeLoops(); len(loops) > 0 {
		t.Fatalf("%d node loops still run after Shutdown returned:\n%s", len(loops), loops[0])
	}
}
