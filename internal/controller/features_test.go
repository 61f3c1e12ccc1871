package controller

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

func TestUpdateFeatures(t *testing.T) {
	j := &memJournal{}
	c := newTestController(t, j, 1)
	up, safe, unsafe := UpgradeTypeUpgrade, UpgradeTypeSafeDowngrade, UpgradeTypeUnsafeDowngrade
	refusals := []struct {
		update FeatureUpdate
		reason string
	}{
		{FeatureUpdate{"metadata.version", 26, up}, "only supports versions 7-25"},
		{FeatureUpdate{"metadata.version", 6, safe}, "only supports versions 7-25"},
		{FeatureUpdate{"metadata.version", 0, safe}, "only supports versions 7-25"},
		{FeatureUpdate{"transaction.version", -1, safe}, "cannot be less than 0"},
		{FeatureUpdate{"transaction.version", 3, up}, "only supports versions 0-2"},
		{FeatureUpdate{"transaction.version", 1, up}, "without setting the upgrade type"},
		{FeatureUpdate{"transaction.version", 1, 4}, "does not support the given upgrade type"},
		{FeatureUpdate{"transaction.version", 1, 0}, "does not support the given upgrade type"},
		{FeatureUpdate{"kraft.version", 2, up}, "only supports versions 0-1"},
		{FeatureUpdate{"no.such.feature", 1, up}, "does not support this feature"},
		// 25 -> 22 crosses 23 (4.0-IV1), which changed the metadata.
		{FeatureUpdate{"metadata.version", 22, safe}, "Refusing to perform the requested downgrade"},
		{FeatureUpdate{"metadata.version", 22, unsafe}, "Unsafe metadata downgrade is not supported"},
	}
	for _, r := range refusals {
		code, msg, err := c.UpdateFeatures([]FeatureUpdate{r.update}, false)
		if err != nil || code != kerr.InvalidUpdateVersion.Code || !strings.Contains(msg, r.reason) {
			t.Errorf("%+v: code %d %q err %v, want INVALID_UPDATE_VERSION with %q", r.update, code, msg, err, r.reason)
		}
	}
	if got := c.Image().FinalizedFeatures(); got["metadata.version"] != 25 || got["transaction.version"] != 2 || got["group.version"] != 1 {
		t.Fatalf("refused updates changed the levels: %v", got)
	}

	// Validate-only writes nothing; one bad update fails the whole request.
	entries := len(j.entries)
	if code, _, _ := c.UpdateFeatures([]FeatureUpdate{{"metadata.version", 24, safe}}, true); code != 0 || len(j.entries) != entries {
		t.Fatalf("validate only: code %d, %d entries written", code, len(j.entries)-entries)
	}
	if code, _, _ := c.UpdateFeatures([]FeatureUpdate{{"group.version", 0, safe}, {"transaction.version", 5, up}}, false); code == 0 || c.Image().FeatureLevel("group.version") != 1 {
		t.Fatalf("half of a refused request applied: code %d", code)
	}

	// 25 -> 24 changes no metadata format: a safe downgrade passes; so do
	// feature downgrades and upgrades with the right upgrade type.
	ok := [][]FeatureUpdate{
		{{"metadata.version", 24, safe}, {"transaction.version", 0, unsafe}, {"group.version", 0, safe}},
		{{"transaction.version", 2, up}},
		{{"metadata.version", 25, up}, {"no.such.feature", 0, up}},
	}
	for _, updates := range ok {
		if code, msg, err := c.UpdateFeatures(updates, false); code != 0 || err != nil {
			t.Fatalf("%+v: code %d %q err %v", updates, code, msg, err)
		}
	}
	img := c.Image()
	if img.FeatureLevel("metadata.version") != 25 || img.FeatureLevel("transaction.version") != 2 || img.FeatureLevel("group.version") != 0 {
		t.Fatalf("levels %v", img.FinalizedFeatures())
	}
	// The levels survive a replay of the journal.
	again := New(Config{NodeID: 1}, j)
	j.replay(t, again)
	if again.Image().FeatureLevel("group.version") != 0 || again.Image().FeatureLevel(metadata.TransactionVersionFeature) != 2 {
		t.Fatalf("after replay: %v", again.Image().FinalizedFeatures())
	}
}
