package clustertest

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// StartSecuredCluster is StartClusterEach for a cluster whose listeners
// need clientOptions (SASL credentials) to connect: the readiness checks
// use them, and so should the test's clients (Cluster.ClientOpts).
func StartSecuredCluster(t testing.TB, n int, clientOptions []kgo.Opt, overrides ...string) *Cluster {
	t.Helper()
	return startClusterEach(t, &Cluster{ClientOpts: clientOptions}, n, nil, overrides...)
}

// saslSSLClusterPassword is the SCRAM password of the SASL_SSL test
// cluster's one user, admin.
const saslSSLClusterPassword = "cluster-Secret-3a9e"

// StartSASLSSLCluster is StartCluster with every listener, client,
// inter-broker and controller, on SASL_SSL with SCRAM-SHA-512: the TLS
// stores of StartSSLCluster (no client certificates asked for) and the
// SCRAM user admin, written at first start, whom the nodes use for Raft,
// controller RPCs and replica fetches. The cluster's ClientOpts hold the
// CA and admin's credentials.
func StartSASLSSLCluster(t testing.TB, n int, overrides ...string) *Cluster {
	t.Helper()
	c, ssl := sslSetup(t)
	jaas := `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="` + saslSSLClusterPassword + `";`
	c.ClientOpts = append(c.ClientOpts, kgo.SASL(scram.Auth{User: "admin", Pass: saslSSLClusterPassword}.AsSha512Mechanism()))
	secured := append(ssl,
		"listener.security.protocol.map=PLAINTEXT:SASL_SSL,CONTROLLER:SASL_SSL",
		"ssl.client.auth=none",
		"inter.broker.listener.name=PLAINTEXT",
		"sasl.enabled.mechanisms=SCRAM-SHA-512",
		"sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512",
		"sasl.mechanism.controller.protocol=SCRAM-SHA-512",
		"listener.name.plaintext.scram-sha-512.sasl.jaas.config="+jaas,
		"listener.name.controller.scram-sha-512.sasl.jaas.config="+jaas,
		"samsa.scram.bootstrap.users=SCRAM-SHA-512=[name=admin,password="+saslSSLClusterPassword+"]",
	)
	return startClusterEach(t, c, n, nil, append(secured, overrides...)...)
}
