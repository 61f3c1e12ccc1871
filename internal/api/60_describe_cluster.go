package api

// DescribeCluster (key 60), versions 0-1.
//
// Behavior:
//   - Lists the live brokers with the endpoint of the request's listener, the
//     cluster id and the active controller. v1 endpoint_type 2 (controllers)
//     lists the nodes of the controller quorum; on a combined node that is
//     this node.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(60, 0, 1, handleDescribeCluster) }

func handleDescribeCluster(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeClusterRequest)
	img := b.Image()
	resp := kmsg.NewPtrDescribeClusterResponse()
	resp.ClusterID = img.ClusterID
	resp.ControllerID = b.controllerIDForClients()
	resp.EndpointType = 1
	if c.version >= 1 {
		resp.EndpointType = req.EndpointType
		if req.EndpointType != 1 && req.EndpointType != 2 {
			resp.ErrorCode = kerr.UnsupportedEndpointType.Code
			c.reply(resp)
			return
		}
	}
	resp.ClusterAuthorizedOperations = authorizedOperationsOmitted
	for _, mb := range brokerList(img, c.req.Conn.Listener) {
		br := kmsg.NewDescribeClusterResponseBroker()
		br.NodeID, br.Host, br.Port, br.Rack = mb.NodeID, mb.Host, mb.Port, mb.Rack
		resp.Brokers = append(resp.Brokers, br)
	}
	c.reply(resp)
}
