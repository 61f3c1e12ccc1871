package cli

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// startTestBroker starts a cluster for one test and returns its bootstrap
// servers. It is the only place the CLI tests choose their broker: today a
// franz-go kfake cluster, later a real Samsa node.
func startTestBroker(t *testing.T) (bootstrap string) {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatalf("start kfake cluster: %v", err)
	}
	t.Cleanup(cluster.Close)
	return strings.Join(cluster.ListenAddrs(), ",")
}
