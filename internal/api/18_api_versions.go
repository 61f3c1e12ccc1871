package api

// ApiVersions (key 18), versions 0-4.
//
// Behavior:
//   - The supported ranges come from the same table that dispatches requests:
//     the client listeners' or the controller listener's.
//   - A request at a version above 4 is answered in v0 with UNSUPPORTED_VERSION
//     and the supported ranges, so the client can retry at a version we serve
//     (Kafka's fallback; the response header is always v0).
//   - v3+ carries the client software name and version; they are not checked.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const apiVersionsKey = 18

func init() {
	register(apiVersionsKey, 0, 4, handleAPIVersions)
	registerController(apiVersionsKey, 0, 4, handleAPIVersions)
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

func handleAPIVersions(b *Broker, c *call, _ kmsg.Request) {
	resp := apiVersionsResponse(b.tableFor(c.req.Conn.Listener))
	b.addFeatures(resp, c.version)
	c.reply(resp)
}

func unsupportedAPIVersionsResponse(table handlerTable) []byte {
	resp := apiVersionsResponse(table)
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.SetVersion(0)
	return resp.AppendTo(nil)
}
