package api

// ApiVersions (key 18), versions 0-5.
//
// Behavior:
//   - The supported ranges come from the same table that dispatches requests:
//     the client listeners' or the controller listener's.
//   - A request at a version above 5 is answered in v0 with UNSUPPORTED_VERSION
//     and the supported ranges, so the client can retry at a version we serve
//     (Kafka's fallback; the response header is always v0).
//   - v3+ carries the client software name and version; they are not
//     checked, and kept for client telemetry's match patterns.
//   - v5 (KIP-1242) carries the cluster id and node id the client believes
//     it reached: both set and either not this node's answers
//     REBOOTSTRAP_REQUIRED (with the supported ranges), one set without the
//     other INVALID_REQUEST; neither set (bootstrapping) is not checked.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const apiVersionsKey = 18

func init() {
	register(apiVersionsKey, 0, 5, handleAPIVersions)
	registerController(apiVersionsKey, 0, 5, handleAPIVersions)
}

// apiVersionsResponse lists the APIs of one listener's table.
func apiVersionsResponse(table handlerTable) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	for _, h := range table.supported() {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = h.key, h.minVersion, h.maxVersion
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	return resp
}

func handleAPIVersions(b *Broker, c *call, r kmsg.Request) {
	resp := apiVersionsResponse(b.tableFor(c.req.Conn.Listener))
	b.addFeatures(resp, c.version)
	if req, ok := r.(*kmsg.ApiVersionsRequest); ok && c.version >= 5 {
		resp.ErrorCode = b.checkAPIVersionsTarget(req)
	}
	if req, ok := r.(*kmsg.ApiVersionsRequest); ok && c.version >= 3 && c.req.Conn != nil {
		// For client telemetry's match patterns (KIP-714).
		c.req.Conn.Software.Set(req.ClientSoftwareName, req.ClientSoftwareVersion)
	}
	c.reply(resp)
}

// checkAPIVersionsTarget is KIP-1242's check that a v5 client reached the
// cluster and node it meant to.
func (b *Broker) checkAPIVersionsTarget(req *kmsg.ApiVersionsRequest) int16 {
	hasCluster, hasNode := req.ClusterID != nil, req.NodeID >= 0
	switch {
	case !hasCluster && !hasNode:
		return 0
	case hasCluster != hasNode:
		return kerr.InvalidRequest.Code
	case *req.ClusterID != b.Image().ClusterID || req.NodeID != b.NodeID:
		return kerr.RebootstrapRequired.Code
	}
	return 0
}

func unsupportedAPIVersionsResponse(table handlerTable) []byte {
	resp := apiVersionsResponse(table)
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.SetVersion(0)
	return resp.AppendTo(nil)
}
