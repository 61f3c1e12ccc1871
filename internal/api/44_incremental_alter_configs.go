package api

// IncrementalAlterConfigs (key 44), versions 0-1.
//
// Behavior:
//   - Topic resources: SET, DELETE, APPEND and SUBTRACT (LIST keys only) on
//     the topic's overrides, validated as a whole (INVALID_CONFIG for unknown
//     keys or bad values, INVALID_REQUEST for a key twice or a null SET);
//     unknown topics answer UNKNOWN_TOPIC_OR_PARTITION.
//   - Broker resources ("" for the cluster default, or this node's id) change
//     dynamic broker configs; keys that are not dynamic answer INVALID_CONFIG.
//   - validate_only checks without changing anything.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/config"
)

func init() {
	register(44, 0, 1, authorizingIncrementalAlterConfigs(handleIncrementalAlterConfigs))
	registerController(44, 0, 1, authorizingIncrementalAlterConfigs(handleIncrementalAlterConfigs))
}

func handleIncrementalAlterConfigs(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.IncrementalAlterConfigsRequest)
	if b.forwarded(c, req) {
		return
	}
	resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
	for _, rr := range req.Resources {
		ops := make([]config.AlterOp, len(rr.Configs))
		for i, op := range rr.Configs {
			ops[i] = config.AlterOp{Name: op.Name, Op: op.Op, Value: op.Value}
		}
		code, msg := b.alterConfigs(rr.ResourceType, rr.ResourceName, req.ValidateOnly, func(current map[string]string) (map[string]string, error) {
			return config.ApplyIncremental(current, ops)
		})
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName, sr.ErrorCode = rr.ResourceType, rr.ResourceName, code
		if msg != "" {
			sr.ErrorMessage = strptr(msg)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	c.reply(resp)
}
