package cli

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// silentBroker accepts connections and never answers, like a hung broker or
// a port behind a firewall that swallows packets.
func silentBroker(t *testing.T) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		listener.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return listener.Addr().String()
}

// clusterCommands is one invocation of every command that talks to a
// cluster, for the unreachable-cluster tests.
var clusterCommands = [][]string{
	{"topics", "list"},
	{"topics", "create", "t"},
	{"topics", "describe", "t"},
	{"topics", "alter", "t", "--partitions", "2"},
	{"topics", "delete", "t"},
	{"produce", "t"},
	{"consume", "t"},
	{"groups", "list"},
	{"groups", "describe", "g"},
	{"groups", "delete", "g"},
	{"groups", "reset-offsets", "g", "--topic", "t", "--to-earliest"},
	{"configs", "describe", "--topic", "t"},
	{"configs", "alter", "--topic", "t", "--set", "retention.ms=1"},
	{"cluster", "describe"},
	{"cluster", "quorum"},
}

func TestUnreachableClusterTimesOut(t *testing.T) {
	t.Parallel()
	address := silentBroker(t)
	for _, command := range clusterCommands {
		t.Run(strings.Join(command[:2], "-"), func(t *testing.T) {
			t.Parallel()
			// consume's --timeout is its idle timeout, which also
			// bounds its first contact with the cluster.
			args := append([]string{"--timeout", "500ms"}, command...)
			if command[0] == "consume" {
				args = append(command, "--timeout", "500ms")
			}
			start := time.Now()
			mustFail(t, address, "record\n", args,
				"timed out after 500ms waiting for the cluster at "+address, "--bootstrap-server or SAMSA_BROKERS")
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("took %s to give up, want about 500ms", elapsed)
			}
		})
	}
}

func TestUnreachableClusterRefused(t *testing.T) {
	t.Parallel()
	address := closedAddress(t)
	for _, command := range clusterCommands {
		t.Run(strings.Join(command[:2], "-"), func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--timeout", "5s"}, command...)
			if command[0] == "consume" {
				args = append(command, "--timeout", "5s")
			}
			line := mustFail(t, address, "record\n", args, address, "--bootstrap-server or SAMSA_BROKERS")
			if !strings.Contains(line, "cannot reach the cluster") && !strings.Contains(line, "timed out after") {
				t.Errorf("error line does not say the cluster is unreachable: %q", line)
			}
		})
	}
}
