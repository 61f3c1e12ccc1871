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
//     The receiving node checks that the resource names it (INVALID_REQUEST
//     "Unexpected broker id, ..." otherwise) and validates the change, then
//     the active controller stores it (config_broker_resources.go).
//   - Broker logger resources (this node's id) set (SET) or unset (DELETE)
//     the level of this node's loggers at once, until restart; they are
//     never forwarded. An unknown logger or level answers INVALID_CONFIG,
//     APPEND/SUBTRACT or unsetting "root" INVALID_REQUEST.
//   - Client-metrics resources (KIP-714, named by the subscription) take
//     metrics, interval.ms and match (APPEND and SUBTRACT on the LIST keys
//     metrics and match), validated as Kafka's ClientMetricsConfigs does:
//     INVALID_REQUEST for an empty name, an unknown key or an interval out
//     of 100-3600000, INVALID_CONFIG for a bad value or match pattern.
//     Removing every config removes the subscription.
//   - A resource named twice answers INVALID_REQUEST for both.
//   - validate_only checks without changing anything.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/telemetry"
)

func init() {
	register(44, 0, 1, handleIncrementalAlterConfigs)
	registerController(44, 0, 1, handleIncrementalAlterConfigs)
}

func handleIncrementalAlterConfigs(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.IncrementalAlterConfigsRequest)
	forwarding := b.forwards(c)
	b.authorizeIncrementalAlterConfigsHere(c, req, forwarding)
	onController := b.onControllerListener(c)
	changes := make([]func(map[string]string) (map[string]string, error), len(req.Resources))
	results := make([]*resourceResult, len(req.Resources))
	keys := make([]configResourceKey, len(req.Resources))
	for i, rr := range req.Resources {
		keys[i] = configResourceKey{rr.ResourceType, rr.ResourceName}
	}
	duplicateResources(keys, results)
	for i, rr := range req.Resources {
		ops := make([]config.AlterOp, len(rr.Configs))
		for j, op := range rr.Configs {
			ops[j] = config.AlterOp{Name: op.Name, Op: op.Op, Value: op.Value}
		}
		changes[i] = func(current map[string]string) (map[string]string, error) {
			return config.ApplyIncremental(current, ops)
		}
		if rr.ResourceType == kmsg.ConfigResourceTypeClientMetrics {
			changes[i] = clientMetricsChange(rr.Configs)
		}
		switch {
		case results[i] != nil: // named twice
		case rr.ResourceType == kmsg.ConfigResourceTypeBrokerLogger:
			result := b.alterBrokerLogger(rr, req.ValidateOnly)
			results[i] = &result
		case rr.ResourceType == kmsg.ConfigResourceTypeBroker && !onController:
			if refused := brokerListOpRefusal(rr.Configs); refused != nil {
				results[i] = refused
				break
			}
			results[i] = b.preprocessBroker(rr.ResourceName, changes[i])
		}
	}
	reply := func(decided func(i int) resourceResult) {
		resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
		for i, rr := range req.Resources {
			result := results[i]
			if result == nil {
				r := decided(i)
				result = &r
			}
			sr := kmsg.NewIncrementalAlterConfigsResponseResource()
			sr.ResourceType, sr.ResourceName, sr.ErrorCode = rr.ResourceType, rr.ResourceName, result.code
			if result.message != "" {
				sr.ErrorMessage = strptr(result.message)
			}
			resp.Resources = append(resp.Resources, sr)
		}
		c.reply(resp)
	}
	remaining := undecided(results)
	if len(remaining) > 0 && forwarding {
		forward := kmsg.NewPtrIncrementalAlterConfigsRequest()
		forward.ValidateOnly = req.ValidateOnly
		for _, i := range remaining {
			forward.Resources = append(forward.Resources, req.Resources[i])
		}
		b.forwardThen(c, forward, func(resp kmsg.Response) {
			answers := forwardedResults{}
			for _, sr := range resp.(*kmsg.IncrementalAlterConfigsResponse).Resources {
				answers[configResourceKey{sr.ResourceType, sr.ResourceName}] = resourceResult{sr.ErrorCode, derefString(sr.ErrorMessage)}
			}
			reply(func(i int) resourceResult {
				return answers.get(req.Resources[i].ResourceType, req.Resources[i].ResourceName)
			})
		})
		return
	}
	reply(func(i int) resourceResult {
		rr := req.Resources[i]
		code, msg := b.alterConfigs(rr.ResourceType, rr.ResourceName, req.ValidateOnly, changes[i])
		return resourceResult{code, msg}
	})
}

// clientMetricsChange applies IncrementalAlterConfigs operations to a
// client-metrics subscription's configs.
func clientMetricsChange(configs []kmsg.IncrementalAlterConfigsRequestResourceConfig) func(map[string]string) (map[string]string, error) {
	ops := make([]config.AlterOp, len(configs))
	for j, op := range configs {
		ops[j] = config.AlterOp{Name: op.Name, Op: op.Op, Value: op.Value}
	}
	return func(current map[string]string) (map[string]string, error) {
		return config.ApplyIncrementalFor(current, ops, telemetry.ListKey)
	}
}
