package controller

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// Finalized features (UpdateFeatures, KIP-584/778), decided as Kafka's
// FeatureControlManager does: every update in a request must pass, or none
// is written. A level is refused with INVALID_UPDATE_VERSION when it is
// negative, outside the range this build supports, lower than the current
// one without a downgrade upgrade type (or higher with one), or, for
// metadata.version, a downgrade across a level that changed the metadata
// format.

// Upgrade types of an UpdateFeatures update (v1+; v0's AllowDowngrade maps
// to UpgradeTypeSafeDowngrade).
const (
	UpgradeTypeUpgrade         int8 = 1
	UpgradeTypeSafeDowngrade   int8 = 2
	UpgradeTypeUnsafeDowngrade int8 = 3
)

// FeatureUpdate asks for feature Name at Level.
type FeatureUpdate struct {
	Name        string
	Level       int16
	UpgradeType int8
}

// metadataVersionChangedFormat marks the metadata.version levels from 7
// (3.3-IV3) to 25 (4.0-IV3) that changed the metadata records, Kafka's
// didMetadataChange: a downgrade across one of them could lose metadata.
var metadataVersionChangedFormat = map[int16]bool{
	7: true, 8: true, 11: true, 13: true, 14: true, 15: true, 17: true, 23: true,
}

// metadataChangedBetween reports whether any metadata.version above low and
// at most high changed the metadata format.
func metadataChangedBetween(low, high int16) bool {
	for level := low + 1; level <= high; level++ {
		if metadataVersionChangedFormat[level] {
			return true
		}
	}
	return false
}

// UpdateFeatures validates updates against the current finalized levels and,
// unless validateOnly, finalizes them all in one metadata entry. It returns
// 0, or the Kafka error code and message of the first update refused.
func (c *Controller) UpdateFeatures(updates []FeatureUpdate, validateOnly bool) (int16, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return 0, "", err
	}
	img := c.image.Load()
	var recs []metadata.Record
	for _, u := range updates {
		if reason := c.featureUpdateRefusal(img, u); reason != "" {
			return kerr.InvalidUpdateVersion.Code, reason, nil
		}
		recs = append(recs, &metadata.FeatureLevelRecord{Name: u.Name, FeatureLevel: u.Level})
	}
	if validateOnly {
		return 0, "", nil
	}
	return 0, "", c.commitLocked(context.Background(), recs)
}

// featureUpdateRefusal returns why u cannot be applied to img, in Kafka's
// words, or "".
func (c *Controller) featureUpdateRefusal(img *metadata.Image, u FeatureUpdate) string {
	invalid := func(reason string) string {
		return fmt.Sprintf("Invalid update version %d for feature %s. %s", u.Level, u.Name, reason)
	}
	if u.UpgradeType < UpgradeTypeUpgrade || u.UpgradeType > UpgradeTypeUnsafeDowngrade {
		return invalid("The controller does not support the given upgrade type.")
	}
	if u.Level < 0 {
		return invalid("A feature version cannot be less than 0.")
	}
	// A feature this build does not know supports level 0 only.
	f, _ := metadata.LookupFeature(u.Name)
	if u.Level < f.MinLevel || u.Level > f.MaxLevel {
		if f.MaxLevel == 0 {
			return invalid(fmt.Sprintf("Local controller %d does not support this feature.", c.cfg.NodeID))
		}
		return invalid(fmt.Sprintf("Local controller %d only supports versions %d-%d", c.cfg.NodeID, f.MinLevel, f.MaxLevel))
	}
	current := img.FeatureLevel(u.Name)
	switch {
	case u.Level < current && u.UpgradeType == UpgradeTypeUpgrade:
		return invalid("Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.")
	case u.Level > current && u.UpgradeType != UpgradeTypeUpgrade:
		return invalid("Can't downgrade to a newer version.")
	}
	if u.Name == metadata.MetadataVersionFeature && u.Level < current && metadataChangedBetween(u.Level, current) {
		if u.UpgradeType == UpgradeTypeUnsafeDowngrade {
			return fmt.Sprintf("Invalid metadata.version %d. Unsafe metadata downgrade is not supported in this version.", u.Level)
		}
		return fmt.Sprintf("Invalid metadata.version %d. Refusing to perform the requested downgrade because it might delete metadata information.", u.Level)
	}
	return ""
}
