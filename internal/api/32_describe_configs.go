package api

// DescribeConfigs (key 32), versions 1-4.
//
// Behavior:
//   - Topic resources list every topic config with its effective value and
//     source (DYNAMIC_TOPIC_CONFIG for overrides, then the broker synonyms,
//     DEFAULT_CONFIG); an unknown topic answers UNKNOWN_TOPIC_OR_PARTITION.
//   - Broker resources name this node's id, or "" for the cluster-wide
//     defaults; another broker's id or a non-numeric name answers
//     INVALID_REQUEST. Broker logger resources (this node's id) list this
//     node's loggers ("root" and each component) with their levels, source
//     DYNAMIC_BROKER_LOGGER_CONFIG.
//   - Client-metrics resources (KIP-714) list the subscription's stored
//     configs only, source CLIENT_METRICS_CONFIG, with their types (LIST,
//     INT), as Kafka 4.4 does;
//     an unknown subscription lists none, an empty name answers
//     INVALID_REQUEST.
//   - A null config_names asks for every config; synonyms (v1+) and
//     documentation (v3+) only when asked.

import (
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/telemetry"
)

func init() { register(32, 1, 4, handleDescribeConfigs) }

func handleDescribeConfigs(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeConfigsRequest)
	resp := kmsg.NewPtrDescribeConfigsResponse()
	img := b.Image()
	for _, rr := range req.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType = rr.ResourceType
		sr.ResourceName = rr.ResourceName
		var entries []config.ConfigEntry
		if code := b.authorizeConfigResource(c, opDescribeConfigs, rr.ResourceType, rr.ResourceName); code != nil {
			sr.ErrorCode, sr.ErrorMessage = code.Code, strptr(code.Message)
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		switch rr.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			if img.Topic(rr.ResourceName) == nil {
				sr.ErrorCode = kerr.UnknownTopicOrPartition.Code
				sr.ErrorMessage = strptr("Topic " + rr.ResourceName + " does not exist.")
				break
			}
			entries = b.Config().DescribeTopic(img.Configs(metadata.ResourceTopic, rr.ResourceName), req.IncludeSynonyms)
		case kmsg.ConfigResourceTypeBroker:
			if code, msg := b.checkDescribeBroker(rr.ResourceName); code != 0 {
				sr.ErrorCode, sr.ErrorMessage = code, strptr(msg)
				break
			}
			if rr.ResourceName == "" {
				entries = b.Config().DescribeBrokerDefaults(req.IncludeSynonyms)
			} else {
				entries = b.Config().DescribeBroker(req.IncludeSynonyms)
			}
		case kmsg.ConfigResourceTypeBrokerLogger:
			if code, msg := b.checkDescribeBrokerLogger(rr.ResourceName); code != 0 {
				sr.ErrorCode, sr.ErrorMessage = code, strptr(msg)
				break
			}
			entries = b.describeBrokerLoggers()
		case kmsg.ConfigResourceTypeClientMetrics:
			if rr.ResourceName == "" {
				sr.ErrorCode = kerr.InvalidRequest.Code
				sr.ErrorMessage = strptr("Client metrics subscription name must not be empty")
				break
			}
			entries = describeClientMetrics(img.Configs(metadata.ResourceClientMetrics, rr.ResourceName))
		default:
			sr.ErrorCode = kerr.InvalidRequest.Code
			sr.ErrorMessage = strptr("unsupported resource type " + strconv.Itoa(int(rr.ResourceType)))
		}
		if rr.ConfigNames != nil {
			entries = config.FilterEntries(entries, rr.ConfigNames)
		}
		for _, e := range entries {
			sc := kmsg.NewDescribeConfigsResponseResourceConfig()
			sc.Name = e.Name
			sc.Value = e.Value
			sc.ReadOnly = e.ReadOnly
			sc.Source = e.Source
			sc.IsDefault = e.Source == kmsg.ConfigSourceDefaultConfig
			sc.IsSensitive = e.Sensitive
			sc.ConfigType = e.Type
			if req.IncludeDocumentation {
				sc.Documentation = strptr(e.Doc)
			}
			for _, s := range e.Synonyms {
				ss := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				ss.Name, ss.Value, ss.Source = s.Name, s.Value, s.Source
				sc.ConfigSynonyms = append(sc.ConfigSynonyms, ss)
			}
			sr.Configs = append(sr.Configs, sc)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	c.reply(resp)
}

// describeClientMetrics lists a subscription's stored configs, by name.
func describeClientMetrics(configs map[string]string) []config.ConfigEntry {
	names := make([]string, 0, len(configs))
	for name := range configs {
		names = append(names, name)
	}
	sort.Strings(names)
	entries := make([]config.ConfigEntry, 0, len(names))
	for _, name := range names {
		v := configs[name]
		typ := kmsg.ConfigTypeList // metrics, match
		if name == telemetry.IntervalMsConfig {
			typ = kmsg.ConfigTypeInt
		}
		entries = append(entries, config.ConfigEntry{Name: name, Value: &v, Source: kmsg.ConfigSourceClientMetricsConfig, Type: typ})
	}
	return entries
}
