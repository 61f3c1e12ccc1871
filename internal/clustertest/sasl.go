package clustertest

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// StartSecuredCluster is StartClusterEach for a cluster whose listeners
// need clientOptions (SASL credentials) to connect: the readiness checks
// use them, and so should the test's clients (Cluster.ClientOptions).
func StartSecuredCluster(t testing.TB, n int, clientOptions []kgo.Opt, overrides ...string) *Cluster {
	t.Helper()
	return startCluster(t, &Cluster{ClientOptions: clientOptions}, n, nil, overrides...)
}
