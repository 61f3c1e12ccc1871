package api

// BrokerHeartbeat (key 63), versions 0-2: a broker tells the active
// controller it is alive.
//
// Behavior:
//   - Only the active controller answers; others answer NOT_CONTROLLER.
//   - A heartbeat from an unregistered broker answers
//     BROKER_ID_NOT_REGISTERED (the broker registers again).
//   - A fenced broker's heartbeat unfences it; is_fenced in the answer tells
//     the broker whether it may serve.
//   - Brokers silent for broker.session.timeout.ms are fenced by the active
//     controller (controller/liveness.go).
//   - want_shutdown starts a controlled shutdown: the broker is fenced and its
//     leaderships move to other in-sync replicas before should_shut_down.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
)

func init() { registerController(63, 0, 2, handleBrokerHeartbeat) }

func handleBrokerHeartbeat(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.BrokerHeartbeatRequest)
	if !b.authorizeCluster(c, opClusterAction) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	resp := kmsg.NewPtrBrokerHeartbeatResponse()
	var err error
	if req.WantShutdown {
		err = b.Controller.ControlledShutdown(req.BrokerID)
	} else {
		err = b.Controller.Heartbeat(req.BrokerID, b.Now())
	}
	switch {
	case err == nil:
		if br := b.Image().Broker(req.BrokerID); br != nil {
			resp.IsFenced = br.Fenced
		}
		resp.IsCaughtUp = true
		resp.ShouldShutdown = req.WantShutdown
	case errors.Is(err, controller.ErrNotActive):
		resp.ErrorCode = kerr.NotController.Code
	case errors.Is(err, controller.ErrUnknownBroker):
		resp.ErrorCode = kerr.BrokerIDNotRegistered.Code
	default:
		resp.ErrorCode = kerr.UnknownServerError.Code
	}
	c.reply(resp)
}
