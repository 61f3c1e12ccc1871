package clustertest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The security issue's cluster acceptance: three nodes whose only
// listeners, inter-broker and controller included, are SASL_SSL with
// SCRAM-SHA-512 pass the replication fault test and the transaction test
// that plaintext clusters pass.

// TestSASLSSLClusterReplicationUnderFaults is TestReplicationUnderFaults on
// a SASL_SSL-only cluster, shorter (30 s, 10 faults; SAMSA_SOAK=1 runs the
// plaintext one for 10 minutes): every acknowledged record survives nodes
// SIGKILLed, SIGSTOPped and restarted, exactly once and in order, with
// followers and the quorum authenticating over TLS.
func TestSASLSSLClusterReplicationUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartSASLSSLCluster(t, 3, replicationOverrides()...)
	replicationUnderFaults(t, c, 30*time.Second, 10)
}

// TestSASLSSLClusterTransactions is TestTransactionsAcrossBrokers on a
// SASL_SSL-only cluster: the coordinator's markers and its writes to
// __transaction_state go to the other brokers over SASL_SSL.
func TestSASLSSLClusterTransactions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := logTransactionsOnFailure(t, StartSASLSSLCluster(t, 3, txnOverrides()...))
	transactionsOn(t, c)
}

// TestSASLSSLClusterRefusesOthers: on the same kind of cluster a client
// without credentials, or with TLS but no SASL, gets nowhere.
func TestSASLSSLClusterRefusesOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartSASLSSLCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.client(t).Ping(ctx); err != nil {
		t.Fatalf("with the cluster's credentials: %v", err)
	}
	// Plaintext: the TLS handshake never completes.
	plain := newClient(t, c.Addrs(), kgo.RequestRetries(0), kgo.DialTimeout(3*time.Second))
	if err := plain.Ping(ctx); err == nil {
		t.Fatal("a plaintext client reached a SASL_SSL-only cluster")
	}
	// TLS without SASL: anything but ApiVersions and SaslHandshake closes the
	// connection.
	tlsOnly := newClient(t, c.Addrs(), c.ClientOpts[0], kgo.RequestRetries(0))
	if err := tlsOnly.Ping(ctx); err == nil {
		t.Fatal("a client without SASL reached a SASL_SSL-only cluster")
	}
}
