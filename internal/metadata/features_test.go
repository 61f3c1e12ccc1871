package metadata

import (
	"maps"
	"testing"
)

func TestFeatureLevels(t *testing.T) {
	img := EmptyImage()
	want := map[string]int16{MetadataVersionFeature: 25, GroupVersionFeature: 1, StreamsVersionFeature: 1, TransactionVersionFeature: 2, ShareVersionFeature: 1}
	if got := img.FinalizedFeatures(); !maps.Equal(got, want) {
		t.Fatalf("defaults: %v, want %v", got, want)
	}
	next := img.Apply(3, []Record{
		&FeatureLevelRecord{Name: MetadataVersionFeature, FeatureLevel: 24},
		&FeatureLevelRecord{Name: GroupVersionFeature, FeatureLevel: 0},
	})
	want = map[string]int16{MetadataVersionFeature: 24, StreamsVersionFeature: 1, TransactionVersionFeature: 2, ShareVersionFeature: 1}
	if got := next.FinalizedFeatures(); !maps.Equal(got, want) {
		t.Fatalf("after updates: %v, want %v", got, want)
	}
	if img.FeatureLevel(MetadataVersionFeature) != 25 || img.FeatureLevel(GroupVersionFeature) != 1 {
		t.Fatal("applying to the next image changed the old one")
	}
	if next.FeatureLevel("no.such.feature") != 0 {
		t.Fatal("an unknown feature has a level")
	}
	// A snapshot keeps the finalized levels, explicit zeros too.
	b, err := EncodeSnapshot(next)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSnapshot(b, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.FinalizedFeatures(); !maps.Equal(got, want) || back.FeatureLevel(GroupVersionFeature) != 0 {
		t.Fatalf("from the snapshot: %v, want %v", got, want)
	}
}
