package api

// DescribeCluster (key 60), versions 0-2, on both kinds of listener
// (KIP-919).
//
// Behavior:
//   - On a client listener: the live brokers with the endpoint of the
//     request's listener, the cluster id and a controller id clients can
//     reach (forward.go). v1 endpoint_type must be 1 (brokers).
//   - On the controller listener: the voters of the quorum's latest voter
//     set on that listener (controller.quorum.voters until kraft.version 1)
//     and the active controller. v1 endpoint_type must be 2
//     (controllers).
//   - Another endpoint_type answers UNSUPPORTED_ENDPOINT_TYPE, as Kafka does.
//   - v2 (KIP-1073): include_fenced_brokers also lists the registered but
//     fenced brokers, with is_fenced set; without it (and below v2) only
//     unfenced brokers are listed.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	endpointTypeBrokers     = 1
	endpointTypeControllers = 2
)

func init() {
	register(60, 0, 2, func(b *Broker, c *call, r kmsg.Request) { describeCluster(b, c, r, endpointTypeBrokers) })
	registerController(60, 0, 2, func(b *Broker, c *call, r kmsg.Request) { describeCluster(b, c, r, endpointTypeControllers) })
}

func describeCluster(b *Broker, c *call, r kmsg.Request, served int8) {
	req := r.(*kmsg.DescribeClusterRequest)
	img := b.Image()
	resp := kmsg.NewPtrDescribeClusterResponse()
	resp.ClusterID = img.ClusterID
	resp.EndpointType = served
	wanted := int8(endpointTypeBrokers)
	if c.version >= 1 {
		wanted = req.EndpointType
	}
	if wanted != served {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		resp.ErrorMessage = strptr(fmt.Sprintf("The request was sent to an endpoint of type %d, but we wanted an endpoint of type %d", served, wanted))
		c.reply(resp)
		return
	}
	resp.ClusterAuthorizedOperations = authorizedOperationsOmitted
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = b.clusterAuthorizedOperations(c)
	}
	if served == endpointTypeControllers {
		resp.ControllerID = b.activeControllerID()
		if b.Quorum == nil {
			for _, v := range b.StaticConfig.ControllerQuorumVoters {
				br := kmsg.NewDescribeClusterResponseBroker()
				br.NodeID, br.Host, br.Port = v.NodeID, v.Host, int32(v.Port)
				resp.Brokers = append(resp.Brokers, br)
			}
			c.reply(resp)
			return
		}
		for _, v := range b.Quorum.Status().Voters {
			if len(v.Endpoints) == 0 {
				continue
			}
			ep := v.Endpoints[0]
			for _, e := range v.Endpoints {
				if e.Name == c.req.Conn.Listener {
					ep = e
				}
			}
			br := kmsg.NewDescribeClusterResponseBroker()
			br.NodeID, br.Host, br.Port = v.ID, ep.Host, int32(ep.Port)
			resp.Brokers = append(resp.Brokers, br)
		}
		c.reply(resp)
		return
	}
	resp.ControllerID = b.controllerIDForClients()
	for _, mb := range brokerList(img, c.req.Conn.Listener) {
		br := kmsg.NewDescribeClusterResponseBroker()
		br.NodeID, br.Host, br.Port, br.Rack = mb.NodeID, mb.Host, mb.Port, mb.Rack
		resp.Brokers = append(resp.Brokers, br)
	}
	if c.version >= 2 && req.IncludeFencedBrokers {
		for _, registered := range img.Brokers() {
			if !registered.Fenced || len(registered.Endpoints) == 0 {
				continue
			}
			ep := registered.Endpoints[0]
			for _, e := range registered.Endpoints {
				if e.Name == c.req.Conn.Listener {
					ep = e
					break
				}
			}
			br := kmsg.NewDescribeClusterResponseBroker()
			br.NodeID, br.Host, br.Port, br.Rack, br.IsFenced = registered.ID, ep.Host, ep.Port, registered.Rack, true
			resp.Brokers = append(resp.Brokers, br)
		}
	}
	c.reply(resp)
}
