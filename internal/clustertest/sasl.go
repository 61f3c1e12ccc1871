package clustertest

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// StartSecuredCluster is StartClusterEach for a cluster whose listeners
// need clientOptions (SASL credentials) to connect: the readiness checks
// use them, and so should the test's clients (Cluster.ClientOpts).
func StartSecuredCluster(t testing.TB, n int, clientOptions []kgo.Opt, overrides ...string) *Cluster {
	t.Helper()
	return startClusterEach(t, &Cluster{ClientOpts: clientOptions}, n, nil, overrides...)
}
