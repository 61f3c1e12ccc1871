package diffcheck

import "github.com/twmb/franz-go/pkg/kmsg"

// clientMetricsCases compare client-metrics config resources (KIP-714):
// setting them with IncrementalAlterConfigs, describing them, and listing
// them with ListConfigResources. GetTelemetrySubscriptions and
// PushTelemetry are left out: Kafka serves them only with a telemetry
// receiver plugin, which the reference node has not.
func clientMetricsCases() []Case {
	return []Case{
		{Key: 44, Name: "client metrics subscription", Request: func(s *Side, v int16) kmsg.Request {
			return clientMetricsAlter(versionedName("metrics", v), false, map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "1000"})
		}},
		{Key: 44, Name: "client metrics interval out of range, validate only", Request: func(s *Side, v int16) kmsg.Request {
			return clientMetricsAlter("diffcheck-metrics", true, map[string]string{"interval.ms": "10"})
		}},
		{Key: 44, Name: "client metrics unknown config, validate only", Request: func(s *Side, v int16) kmsg.Request {
			return clientMetricsAlter("diffcheck-metrics", true, map[string]string{"retention.ms": "10"})
		}},
		{Key: 44, Name: "client metrics bad match pattern, validate only", Request: func(s *Side, v int16) kmsg.Request {
			return clientMetricsAlter("diffcheck-metrics", true, map[string]string{"match": "client_rack=a"})
		}},
		{Key: 32, Name: "client metrics subscription", Setup: clientMetricsSetup("described"), Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrDescribeConfigsRequest()
			r := kmsg.NewDescribeConfigsRequestResource()
			r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeClientMetrics, versionedName("described", v)
			req.Resources = append(req.Resources, r)
			return req
		}},
		{Key: 74, Name: "client metrics subscriptions", Setup: clientMetricsSetup("listed"), Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrListConfigResourcesRequest()
			if v >= 1 {
				req.ResourceTypes = []int8{int8(kmsg.ConfigResourceTypeClientMetrics)}
			}
			return req
		}},
		{Key: 74, Name: "unsupported resource type", MinVersion: 1, Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrListConfigResourcesRequest()
			req.ResourceTypes = []int8{3}
			return req
		}},
	}
}

func clientMetricsSetup(prefix string) func(int16) []kmsg.Request {
	return func(v int16) []kmsg.Request {
		return []kmsg.Request{clientMetricsAlter(versionedName(prefix, v), false, map[string]string{"metrics": "*", "interval.ms": "60000",
			"match": "client_software_name=apache-kafka-java"})}
	}
}

func clientMetricsAlter(name string, validateOnly bool, configs map[string]string) kmsg.Request {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
	for key, value := range configs {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = key, kmsg.StringPtr(value), kmsg.IncrementalAlterConfigOpSet
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	return req
}
