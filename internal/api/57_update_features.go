package api

// UpdateFeatures (key 57), versions 0-2.
//
// Behavior:
//   - Decided by the active controller (forwarded there from other nodes),
//     which finalizes the levels as FeatureLevelRecords; ApiVersions then
//     lists them (features.go).
//   - All updates of a request pass or none is applied. A refused level
//     answers INVALID_UPDATE_VERSION with Kafka's message: a negative level,
//     one outside the supported range, a downgrade without a downgrade
//     upgrade type (or an upgrade with one), a metadata.version downgrade
//     across a level that changed the metadata format.
//   - v0 has no upgrade type: allow_downgrade means a safe downgrade. v1+
//     upgrade_type 1 upgrades, 2 downgrades safely, 3 unsafely; v1+
//     validate_only checks without writing.
//   - kraft.version is the quorum's (KIP-853): an upgrade to 1 first writes
//     the voter set into the metadata log, then the feature level; it
//     cannot be downgraded (INVALID_UPDATE_VERSION).
//   - The outcome is the top-level error; v0-1 repeat it for every feature
//     requested, v2 has no per-feature results.

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/quorum"
)

func init() {
	register(57, 0, 2, handleUpdateFeatures)
	registerController(57, 0, 2, handleUpdateFeatures)
}

func handleUpdateFeatures(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.UpdateFeaturesRequest)
	if b.forwarded(c, req) {
		return
	}
	if !b.authorizeCluster(c, opAlter) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	updates := make([]controller.FeatureUpdate, 0, len(req.FeatureUpdates))
	for _, u := range req.FeatureUpdates {
		upgradeType := u.UpgradeType
		if c.version == 0 {
			upgradeType = controller.UpgradeTypeUpgrade
			if u.AllowDowngrade {
				upgradeType = controller.UpgradeTypeSafeDowngrade
			}
		}
		updates = append(updates, controller.FeatureUpdate{Name: u.Feature, Level: u.MaxVersionLevel, UpgradeType: upgradeType})
	}
	validateOnly := c.version >= 1 && req.ValidateOnly
	code, message, err := b.Controller.UpdateFeatures(updates, true)
	if err == nil && code == 0 && !validateOnly {
		if code, message, err = b.upgradeKRaftVersion(updates); err == nil && code == 0 {
			code, message, err = b.Controller.UpdateFeatures(updates, false)
		}
	}
	switch {
	case errors.Is(err, controller.ErrNotActive):
		code, message = kerr.NotController.Code, err.Error()
	case err != nil:
		code, message = kerr.UnknownServerError.Code, err.Error()
	}
	resp := kmsg.NewPtrUpdateFeaturesResponse()
	resp.ErrorCode = code
	if code != 0 {
		resp.ErrorMessage = &message
	}
	if c.version < 2 {
		for _, u := range req.FeatureUpdates {
			res := kmsg.NewUpdateFeaturesResponseResult()
			res.Feature, res.ErrorCode, res.ErrorMessage = u.Feature, resp.ErrorCode, resp.ErrorMessage
			resp.Results = append(resp.Results, res)
		}
	}
	c.reply(resp)
}

// upgradeKRaftVersion makes the quorum run the kraft.version an update asks
// for, before the feature level is written; a downgrade is refused.
func (b *Broker) upgradeKRaftVersion(updates []controller.FeatureUpdate) (int16, string, error) {
	for _, u := range updates {
		if u.Name != metadata.KRaftVersionFeature || b.Quorum == nil {
			continue
		}
		current := b.Quorum.KRaftVersion()
		if u.Level < current {
			return kerr.InvalidUpdateVersion.Code, fmt.Sprintf("Invalid update version %d for feature %s. Can't downgrade the kraft.version from %d.", u.Level, u.Name, current), nil
		}
		if u.Level == current {
			continue
		}
		ctx, cancel := raftVoterContext(0)
		err := b.Quorum.SetKRaftVersion(ctx, u.Level)
		cancel()
		if errors.Is(err, quorum.ErrNotLeader) {
			return 0, "", fmt.Errorf("%w: %v", controller.ErrNotActive, err)
		}
		if err != nil {
			code, msg := raftVoterError(err)
			return code, *msg, nil
		}
	}
	return 0, "", nil
}
