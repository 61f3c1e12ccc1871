package controller

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// TestRestoreTopics restores topics under their old ids with the given
// leader epochs and configs, waits while too few brokers are live, leaves
// existing topics alone, and replays to the same image.
func TestRestoreTopics(t *testing.T) {
	ctx := context.Background()
	j := &memJournal{}
	c := newTestController(t, j, 2)
	if res := c.CreateTopics(ctx, []CreateTopic{{Name: "kept", NumPartitions: 1, ReplicationFactor: 1}}, false); res[0].ErrorCode != 0 {
		t.Fatalf("create: %+v", res[0])
	}
	orders := RestoreTopic{Name: "orders", ID: metadata.UUID{0xa1}, ReplicationFactor: 2, LeaderEpochs: []int32{5, 0, 9},
		Configs: map[string]string{"remote.storage.enable": "true", "retention.ms": "-1"}}
	kept := RestoreTopic{Name: "kept", ID: metadata.UUID{0xa2}, ReplicationFactor: 1, LeaderEpochs: []int32{1}}
	wide := RestoreTopic{Name: "wide", ID: metadata.UUID{0xa3}, ReplicationFactor: 3, LeaderEpochs: []int32{1}}

	entries := len(j.entries)
	if _, err := c.RestoreTopics(ctx, []RestoreTopic{orders, wide}); !errors.Is(err, ErrRestoreWaiting) {
		t.Fatalf("replication factor 3 on 2 brokers: %v", err)
	}
	if len(j.entries) != entries || c.Image().Topic("orders") != nil {
		t.Fatal("a restore that waits wrote records")
	}

	results, err := c.RestoreTopics(ctx, []RestoreTopic{orders, kept})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].ErrorCode != 0 || results[0].TopicID != orders.ID || results[0].NumPartitions != 3 {
		t.Fatalf("orders: %+v", results[0])
	}
	if results[1].ErrorCode != kerr.TopicAlreadyExists.Code {
		t.Fatalf("kept: %+v", results[1])
	}
	check := func(img *metadata.Image) {
		t.Helper()
		topic := img.Topic("orders")
		if topic == nil || topic.ID != orders.ID || len(topic.Partitions) != 3 {
			t.Fatalf("restored topic %+v", topic)
		}
		for i, p := range topic.Partitions {
			if p.LeaderEpoch != orders.LeaderEpochs[i] || len(p.Replicas) != 2 || p.Leader != p.Replicas[0] {
				t.Fatalf("partition %d: %+v", i, p)
			}
		}
		if cfg := img.Configs(metadata.ResourceTopic, "orders"); cfg["retention.ms"] != "-1" || cfg["remote.storage.enable"] != "true" {
			t.Fatalf("configs %v", cfg)
		}
		if img.Topic("kept").ID == kept.ID {
			t.Fatal("an existing topic was replaced")
		}
	}
	check(c.Image())
	again, err := c.RestoreTopics(ctx, []RestoreTopic{orders})
	if err != nil || again[0].ErrorCode != kerr.TopicAlreadyExists.Code {
		t.Fatalf("second restore: %+v %v", again, err)
	}
	replayed := New(Config{NodeID: 1}, j)
	j.replay(t, replayed)
	check(replayed.Image())
}
