package metadata

import "sort"

// ResourceClientMetrics is the config resource type of client-metrics
// subscriptions (KIP-714), as in DescribeConfigs: ConfigRecords of this
// type, named by the subscription, hold its metrics, interval.ms and match.
const ResourceClientMetrics int8 = 16

// ConfigResourceNames lists, sorted, the names of the resources of
// resourceType that have at least one dynamic config.
func (img *Image) ConfigResourceNames(resourceType int8) []string {
	var out []string
	for r, configs := range img.configs {
		if r.Type == resourceType && len(configs) > 0 {
			out = append(out, r.Name)
		}
	}
	sort.Strings(out)
	return out
}
