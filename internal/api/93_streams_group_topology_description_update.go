package api

// StreamsGroupTopologyDescriptionUpdate (key 93), version 0 (KIP-1331):
// a streams client pushes its topology description to the broker's
// topology description plugin.
//
// Behavior:
//   - No plugin is configured, so every request answers
//     UNSUPPORTED_VERSION "The broker has no streams group topology
//     description plugin configured.", as a Kafka 4.4 broker without one;
//     StreamsGroupHeartbeat never asks a client to push (its
//     TopologyDescriptionRequired stays false).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(93, 0, 0, handleStreamsGroupTopologyDescriptionUpdate) }

func handleStreamsGroupTopologyDescriptionUpdate(b *Broker, c *call, r kmsg.Request) {
	resp := r.(*kmsg.StreamsGroupTopologyDescriptionUpdateRequest).ResponseKind().(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ErrorMessage = strptr("The broker has no streams group topology description plugin configured.")
	c.reply(resp)
}
