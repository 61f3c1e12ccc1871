package api

// ApiVersions (key 18), versions 0-4.
//
// Behavior:
//   - The supported ranges come from the same table that dispatches requests.
//   - A request at a version above 4 is answered in v0 with UNSUPPORTED_VERSION
//     and the supported ranges, so the client can retry at a version we serve
//     (Kafka's fallback; the response header is always v0).
//   - v3+ carries the client software name and version; they are not checked.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const apiVersionsKey = 18

func init() { register(apiVersionsKey, 0, 4, handleAPIVersions) }

func apiVersionsResponse() *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	for _, h := range supportedAPIs() {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = h.key, h.minVersion, h.maxVersion
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	return resp
}

func handleAPIVersions(b *Broker, c *call, _ kmsg.Request) {
	resp := apiVersionsResponse()
	b.addFeatures(resp, c.version)
	c.reply(resp)
}

func unsupportedAPIVersionsResponse() []byte {
	resp := apiVersionsResponse()
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.SetVersion(0)
	return resp.AppendTo(nil)
}
