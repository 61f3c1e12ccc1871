package api

// ListConfigResources (key 74), versions 0-1 (KIP-1000, renamed from
// ListClientMetricsResources by KIP-1142).
//
// Behavior:
//   - Authorized as DESCRIBE_CONFIGS on the CLUSTER; denied,
//     CLUSTER_AUTHORIZATION_FAILED.
//   - v0 lists the client-metrics subscriptions (resource type 16).
//   - v1 lists the resource types asked for, every supported one when
//     none is: topics (2), the registered brokers (4) and their loggers
//     (8), client-metrics subscriptions (16) and groups with configs (32).
//     A type outside those answers UNSUPPORTED_VERSION, as Kafka does.

import (
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

func init() { register(74, 0, 1, handleListConfigResources) }

// The config resource types, by id.
const (
	configTypeTopic         int8 = 2
	configTypeBroker        int8 = 4
	configTypeBrokerLogger  int8 = 8
	configTypeClientMetrics int8 = 16
	configTypeGroup         int8 = 32
)

func handleListConfigResources(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ListConfigResourcesRequest)
	resp := kmsg.NewPtrListConfigResourcesResponse()
	if !b.authorizeCluster(c, opDescribeConfigs) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		c.reply(resp)
		return
	}
	supported := []int8{configTypeTopic, configTypeBroker, configTypeBrokerLogger, configTypeClientMetrics, configTypeGroup}
	types := req.ResourceTypes
	if c.version == 0 {
		supported, types = []int8{configTypeClientMetrics}, nil
	}
	if len(types) == 0 {
		types = supported
	}
	for _, t := range types {
		if !slices.Contains(supported, t) {
			resp.ErrorCode = kerr.UnsupportedVersion.Code
			c.reply(resp)
			return
		}
	}
	img := b.Image()
	add := func(resourceType int8, name string) {
		cr := kmsg.NewListConfigResourcesResponseConfigResource()
		cr.Name, cr.Type = name, resourceType
		resp.ConfigResources = append(resp.ConfigResources, cr)
	}
	if slices.Contains(types, configTypeGroup) {
		for _, name := range img.ConfigResourceNames(configTypeGroup) {
			add(configTypeGroup, name)
		}
	}
	if slices.Contains(types, configTypeClientMetrics) {
		for _, name := range img.ConfigResourceNames(metadata.ResourceClientMetrics) {
			add(configTypeClientMetrics, name)
		}
	}
	for _, t := range []int8{configTypeBrokerLogger, configTypeBroker} {
		if !slices.Contains(types, t) {
			continue
		}
		for _, br := range img.Brokers() {
			if !br.Fenced {
				add(t, strconv.Itoa(int(br.ID)))
			}
		}
	}
	if slices.Contains(types, configTypeTopic) {
		for _, name := range img.TopicNames() {
			add(configTypeTopic, name)
		}
	}
	c.reply(resp)
}
