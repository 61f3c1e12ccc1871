package api

// AllocateProducerIds (key 67), version 0: a broker asks the active
// controller for a block of producer ids.
//
// Behavior:
//   - Only the active controller answers; others answer NOT_CONTROLLER.
//   - Blocks are committed to the metadata log before the answer, so an id
//     is never handed out twice, across restarts and controller failovers.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
)

func init() { registerController(67, 0, 0, handleAllocateProducerIDs) }

func handleAllocateProducerIDs(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.AllocateProducerIDsRequest)
	if !b.authorizeCluster(c, opClusterAction) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	resp := kmsg.NewPtrAllocateProducerIDsResponse()
	first, size, err := b.Controller.AllocateProducerIDs(req.BrokerID)
	switch {
	case err == nil:
		resp.ProducerIDStart, resp.ProducerIDLen = first, int32(size)
	case errors.Is(err, controller.ErrNotActive):
		resp.ErrorCode = kerr.NotController.Code
	default:
		resp.ErrorCode = kerr.UnknownServerError.Code
	}
	c.reply(resp)
}
