package server

import (
	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/group"
)

// streamsGroupConfig maps the group.streams.* keys onto the group
// coordinator's streams group settings. Whether streams groups are served
// at all (the streams.version feature, the rebalance protocols) the API
// handlers decide per request.
func streamsGroupConfig(cfg *config.Broker) group.StreamsGroupConfig {
	c := group.DefaultStreamsGroupConfig()
	c.SessionTimeoutMs = cfg.StreamsGroup.SessionTimeoutMs
	c.HeartbeatIntervalMs = cfg.StreamsGroup.HeartbeatIntervalMs
	c.MaxSize = cfg.StreamsGroup.MaxSize
	c.NumStandbyReplicas = cfg.StreamsGroup.NumStandbyReplicas
	c.NumWarmupReplicas = cfg.StreamsGroup.NumWarmupReplicas
	c.InitialRebalanceDelayMs = cfg.StreamsGroup.InitialRebalanceDelayMs
	c.TaskOffsetIntervalMs = cfg.StreamsGroup.TaskOffsetIntervalMs
	return c
}
