package server

import (
	"github.com/samsa-streaming/samsa/internal/api"
	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/group"
)

// shareGroupConfig is the group coordinator's share-group configuration:
// the group.share.* keys, and the broker's share-partitions told when a
// member leaves (its records are released at once) or a group is deleted.
func shareGroupConfig(cfg *config.Broker, broker *api.Broker) group.ShareGroupConfig {
	out := group.DefaultShareGroupConfig()
	out.Enabled = cfg.Share.Enable
	out.SessionTimeoutMs = cfg.Share.SessionTimeoutMs
	out.HeartbeatIntervalMs = cfg.Share.HeartbeatIntervalMs
	out.MaxSize = cfg.Share.MaxSize
	out.OnMemberLeft = broker.ReleaseShareMember
	out.OnDeleted = broker.ForgetShareGroup
	return out
}
