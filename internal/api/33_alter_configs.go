package api

// AlterConfigs (key 33), versions 0-2.
//
// Behavior:
//   - The legacy, non-incremental form: the configs given replace every
//     override of the resource (configs not listed revert to defaults).
//   - Otherwise as IncrementalAlterConfigs: topic and broker resources,
//     INVALID_CONFIG for unknown keys or bad values, validate_only; a broker
//     resource is checked and validated on the node that receives it, then
//     stored by the active controller (config_broker_resources.go). Broker
//     logger resources are not served (INVALID_REQUEST), as in Kafka. A
//     resource named twice answers INVALID_REQUEST for both.

import (
	"errors"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/telemetry"
)

func init() {
	register(33, 0, 2, handleAlterConfigs)
	registerController(33, 0, 2, handleAlterConfigs)
}

func handleAlterConfigs(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.AlterConfigsRequest)
	forwarding := b.forwards(c)
	b.authorizeAlterConfigsHere(c, req, forwarding)
	onController := b.onControllerListener(c)
	changes := make([]func(map[string]string) (map[string]string, error), len(req.Resources))
	results := make([]*resourceResult, len(req.Resources))
	keys := make([]configResourceKey, len(req.Resources))
	for i, rr := range req.Resources {
		keys[i] = configResourceKey{rr.ResourceType, rr.ResourceName}
	}
	duplicateResources(keys, results)
	for i, rr := range req.Resources {
		changes[i] = func(map[string]string) (map[string]string, error) {
			next := map[string]string{}
			for _, cfg := range rr.Configs {
				if _, dup := next[cfg.Name]; dup {
					return nil, &config.Error{Kind: config.ErrInvalidRequest, Key: cfg.Name, Message: "Error due to duplicate config keys"}
				}
				if cfg.Value == nil {
					return nil, &config.Error{Kind: config.ErrInvalidRequest, Key: cfg.Name, Message: "Null value not supported for : " + cfg.Name}
				}
				next[cfg.Name] = *cfg.Value
			}
			return next, nil
		}
		if results[i] == nil && rr.ResourceType == kmsg.ConfigResourceTypeBroker && !onController {
			results[i] = b.preprocessBroker(rr.ResourceName, changes[i])
		}
	}
	reply := func(decided func(i int) resourceResult) {
		resp := kmsg.NewPtrAlterConfigsResponse()
		for i, rr := range req.Resources {
			result := results[i]
			if result == nil {
				r := decided(i)
				result = &r
			}
			sr := kmsg.NewAlterConfigsResponseResource()
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
		forward := kmsg.NewPtrAlterConfigsRequest()
		forward.ValidateOnly = req.ValidateOnly
		for _, i := range remaining {
			forward.Resources = append(forward.Resources, req.Resources[i])
		}
		b.forwardThen(c, forward, func(resp kmsg.Response) {
			answers := forwardedResults{}
			for _, sr := range resp.(*kmsg.AlterConfigsResponse).Resources {
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

// alterConfigs computes a resource's new overrides with change, validates
// them and, unless validateOnly, commits them to the metadata log. It
// returns a Kafka error code and message.
func (b *Broker) alterConfigs(resourceType kmsg.ConfigResourceType, name string, validateOnly bool,
	change func(current map[string]string) (map[string]string, error)) (int16, string) {
	img := b.Image()
	var metaType int8
	switch resourceType {
	case kmsg.ConfigResourceTypeTopic:
		if img.Topic(name) == nil {
			return kerr.UnknownTopicOrPartition.Code, "Topic " + name + " does not exist."
		}
		metaType = metadata.ResourceTopic
	case kmsg.ConfigResourceTypeBroker:
		// The node that received the request checked that the resource
		// names it (config_broker_resources.go); the controller stores the
		// change for whichever broker it names.
		if code, msg := checkBrokerName(name); code != 0 {
			return code, msg
		}
		metaType = metadata.ResourceBroker
	case kmsg.ConfigResourceTypeClientMetrics:
		metaType = metadata.ResourceClientMetrics
	case kmsg.ConfigResourceTypeGroupConfig:
		if name == "" {
			return kerr.InvalidRequest.Code, "Group name must not be empty."
		}
		metaType = metadata.ResourceGroup
	default:
		return kerr.InvalidRequest.Code, "unsupported resource type " + strconv.Itoa(int(resourceType))
	}
	next, err := change(img.Configs(metaType, name))
	if err == nil {
		err = b.validateOverrides(metaType, name, next)
	}
	if err != nil {
		return configErrorCode(err), err.Error()
	}
	if validateOnly {
		return 0, ""
	}
	if err := b.Controller.SetConfigs(metaType, name, next); err != nil {
		return kerr.UnknownServerError.Code, err.Error()
	}
	return 0, ""
}

// validateOverrides checks a resource's complete new overrides.
func (b *Broker) validateOverrides(metaType int8, name string, next map[string]string) error {
	if metaType == metadata.ResourceClientMetrics {
		_, err := telemetry.ParseSubscription(name, next)
		return err
	}
	if metaType == metadata.ResourceGroup {
		return b.Config().ValidateGroupConfigs(next)
	}
	if metaType == metadata.ResourceTopic {
		m := make(map[string]*string, len(next))
		for k, v := range next {
			m[k] = &v
		}
		return b.Config().ValidateTopicConfigs(m)
	}
	img := b.Image()
	perBroker := img.Configs(metadata.ResourceBroker, strconv.Itoa(int(b.NodeID)))
	defaults := img.Configs(metadata.ResourceBroker, "")
	if name == "" {
		defaults = next
	} else {
		perBroker = next
	}
	_, err := b.StaticConfig.WithDynamic(perBroker, defaults)
	return err
}

func configErrorCode(err error) int16 {
	if errors.Is(err, config.ErrInvalidRequest) || errors.Is(err, telemetry.ErrInvalidRequest) {
		return kerr.InvalidRequest.Code
	}
	return kerr.InvalidConfig.Code
}
