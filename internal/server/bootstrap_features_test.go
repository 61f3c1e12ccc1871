package server

import (
	"maps"
	"testing"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// TestNewClusterFinalizesItsFeatureLevels: a new cluster's metadata log
// holds a FeatureLevelRecord for each feature at the level it starts at,
// as Kafka's bootstrap metadata does, so the finalized levels are pinned in
// the log rather than taken from the running build's defaults, and a
// restart replays them.
func TestNewClusterFinalizesItsFeatureLevels(t *testing.T) {
	tn := startTestNode(t)
	want := map[string]int16{
		metadata.MetadataVersionFeature:    metadata.MetadataVersionLatest,
		metadata.GroupVersionFeature:       1,
		metadata.StreamsVersionFeature:     1,
		metadata.TransactionVersionFeature: 2,
		metadata.ShareVersionFeature:       1,
	}
	written := func() map[string]int16 {
		got := map[string]int16{}
		for _, r := range tn.node.controller.Image().Records() {
			if f, ok := r.(*metadata.FeatureLevelRecord); ok {
				got[f.Name] = f.FeatureLevel
			}
		}
		return got
	}
	if got := written(); !maps.Equal(got, want) {
		t.Fatalf("feature levels in the metadata log: %v, want %v", got, want)
	}
	tn.restart()
	if got := written(); !maps.Equal(got, want) {
		t.Fatalf("after a restart: %v, want %v", got, want)
	}
}
