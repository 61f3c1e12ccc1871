package api

// BrokerRegistration (key 62), versions 0-4: a broker joining the cluster
// registers its endpoints with the active controller.
//
// Behavior:
//   - Only the active controller (the metadata quorum leader) answers; others
//     answer NOT_CONTROLLER.
//   - A broker of another cluster id answers INCONSISTENT_CLUSTER_ID.
//   - The registration is committed to the metadata log before the answer.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

func init() { registerController(62, 0, 4, handleBrokerRegistration) }

func handleBrokerRegistration(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.BrokerRegistrationRequest)
	if !b.authorizeCluster(c, opClusterAction) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	resp := kmsg.NewPtrBrokerRegistrationResponse()
	reg := metadata.RegisterBrokerRecord{BrokerID: req.BrokerID, Rack: req.Rack}
	for _, l := range req.Listeners {
		reg.Endpoints = append(reg.Endpoints, metadata.Endpoint{Name: l.Name, Host: l.Host, Port: int32(l.Port)})
	}
	err := b.Controller.RegisterBroker(req.ClusterID, reg)
	switch {
	case err == nil:
		resp.BrokerEpoch = b.Image().Offset
	case errors.Is(err, controller.ErrNotActive):
		resp.ErrorCode = kerr.NotController.Code
	case errors.Is(err, controller.ErrClusterMismatch):
		resp.ErrorCode = kerr.InconsistentClusterID.Code
	default:
		b.Logger.Error("broker registration", "broker", req.BrokerID, "err", err)
		resp.ErrorCode = kerr.UnknownServerError.Code
	}
	c.reply(resp)
}
