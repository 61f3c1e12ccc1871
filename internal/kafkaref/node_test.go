package kafkaref

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startForTest starts a node for a test, skipping where Kafka cannot run
// unless SAMSA_REQUIRE_KAFKA is set.
func startForTest(t *testing.T) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	classpath, err := Classpath(ctx)
	if errors.Is(err, ErrUnavailable) && os.Getenv("SAMSA_REQUIRE_KAFKA") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	node, err := Start(ctx, Config{Classpath: classpath, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := node.Stop(); err != nil {
			t.Error(err)
		}
	})
	return node
}

func TestNodeServesClients(t *testing.T) {
	node := startForTest(t)
	// No auto-creation: the consumer's metadata requests would otherwise
	// race the explicit CreateTopics.
	client, err := kgo.NewClient(kgo.SeedBrokers(node.Addr), kgo.ConsumeTopics("reference"))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := kadm.NewClient(client)
	created, err := admin.CreateTopic(ctx, 3, 1, nil, "reference")
	if err != nil || created.Err != nil {
		t.Fatalf("create topic: %v %v", err, created.Err)
	}
	want := []string{"one", "two", "three"}
	for _, value := range want {
		if err := client.ProduceSync(ctx, &kgo.Record{Topic: "reference", Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	for len(got) < len(want) {
		fetches := client.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(got), len(want), err)
		}
		fetches.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
	}
	metadata, err := admin.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if metadata.Cluster != node.ClusterID {
		t.Errorf("cluster id %q, formatted with %q", metadata.Cluster, node.ClusterID)
	}
}
