package controller

import (
	"errors"
	"testing"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// TestBootstrapClusterBeforeAnyBroker: the active controller writes the
// cluster id and the bootstrap records into a new metadata log with no
// broker registration, once; a broker registering later finds them and
// writes only its registration, and a broker of another cluster is
// refused.
func TestBootstrapClusterBeforeAnyBroker(t *testing.T) {
	j := &memJournal{}
	user := &metadata.UserScramCredentialRecord{Name: "alice", Mechanism: 2, Salt: []byte("salt"),
		StoredKey: []byte("stored"), ServerKey: []byte("server"), Iterations: 4096}
	c := New(Config{NodeID: 1, BootstrapRecords: []metadata.Record{user}}, j)
	if err := c.BootstrapCluster("the-cluster"); err != nil {
		t.Fatal(err)
	}
	img := c.Image()
	if img.ClusterID != "the-cluster" || len(img.Brokers()) != 0 {
		t.Fatalf("after bootstrap: cluster id %q, %d brokers", img.ClusterID, len(img.Brokers()))
	}
	if _, ok := img.ScramCredential("alice", 2); !ok {
		t.Fatal("the bootstrap SCRAM user is not in the image")
	}
	if len(j.entries) != 1 || len(j.entries[0]) != 2 {
		t.Fatalf("journal after bootstrap: %d entries", len(j.entries))
	}

	// Again (a new leader, a restart): nothing more is written.
	if err := c.BootstrapCluster("the-cluster"); err != nil {
		t.Fatal(err)
	}
	if len(j.entries) != 1 {
		t.Fatalf("a second bootstrap wrote %d more entries", len(j.entries)-1)
	}

	if err := c.RegisterBroker("the-cluster", metadata.RegisterBrokerRecord{BrokerID: 2}); err != nil {
		t.Fatal(err)
	}
	if len(j.entries) != 2 || len(j.entries[1]) != 1 {
		t.Fatalf("the registration wrote %v records, want the registration alone", len(j.entries[1]))
	}
	err := c.RegisterBroker("another-cluster", metadata.RegisterBrokerRecord{BrokerID: 3})
	if !errors.Is(err, ErrClusterMismatch) {
		t.Fatalf("a broker of another cluster: %v, want ErrClusterMismatch", err)
	}

	// A controller replaying the log has the same image.
	replayed := New(Config{NodeID: 2}, &memJournal{})
	j.replay(t, replayed)
	if got := replayed.Image(); got.ClusterID != "the-cluster" || len(got.Brokers()) != 1 {
		t.Fatalf("replayed: cluster id %q, %d brokers", got.ClusterID, len(got.Brokers()))
	}
}
