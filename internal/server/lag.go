package server

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// groupLagSeriesMax bounds the committed offsets one scrape reports, so a
// node coordinating very many groups cannot produce an unbounded response.
// Past it, samsa_group_lag_truncated is 1.
const groupLagSeriesMax = 10000

var (
	descGroupCommitted = prometheus.NewDesc("samsa_group_committed_offset",
		"Committed offset of a consumer group on a partition, for the groups this node coordinates.",
		[]string{"group", "topic", "partition"}, nil)
	descGroupLag = prometheus.NewDesc("samsa_group_lag_records",
		"High watermark minus the committed offset of a consumer group on a partition this node leads: records the group has yet to consume (what kafka-consumer-groups.sh shows as LAG).",
		[]string{"group", "topic", "partition"}, nil)
	descGroupLagTruncated = prometheus.NewDesc("samsa_group_lag_truncated",
		"1 when this node coordinates more committed offsets than one scrape reports (10000), else 0.", nil, nil)
	descMetadataEnd = prometheus.NewDesc("samsa_metadata_log_end_offset",
		"Next offset of the __cluster_metadata log (the last committed metadata record is one less).", nil, nil)
	descMetadataLag = prometheus.NewDesc("samsa_metadata_lag_records",
		"Metadata records committed to the __cluster_metadata log but not yet applied to this node's metadata image.", nil, nil)
)

// lagCollector reports consumer group lag and metadata log lag at scrape
// time, from the group coordinator's committed offsets and the logs' ends.
type lagCollector struct{ n *Node }

func (c lagCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descGroupCommitted, descGroupLag, descGroupLagTruncated, descMetadataEnd, descMetadataLag} {
		ch <- d
	}
}

func (c lagCollector) Collect(ch chan<- prometheus.Metric) {
	offsets, truncated := c.n.groups.CommittedOffsets(groupLagSeriesMax)
	for _, o := range offsets {
		labels := []string{o.Group, o.Topic, strconv.Itoa(int(o.Partition))}
		ch <- prometheus.MustNewConstMetric(descGroupCommitted, prometheus.GaugeValue, float64(o.Offset), labels...)
		p := c.n.partitions.Get(o.Topic, o.Partition)
		if p == nil || o.Offset < 0 {
			// Not led here: the leader's node knows its high watermark.
			continue
		}
		lag := max(p.HighWatermark()-o.Offset, 0)
		ch <- prometheus.MustNewConstMetric(descGroupLag, prometheus.GaugeValue, float64(lag), labels...)
	}
	var truncatedValue float64
	if truncated {
		truncatedValue = 1
	}
	ch <- prometheus.MustNewConstMetric(descGroupLagTruncated, prometheus.GaugeValue, truncatedValue)

	// The quorum's log holds entries that carry no records (a new leader's
	// first entry), so the lag counts offsets, not records, and reads 0 or 1
	// on a node that is caught up.
	// A broker-only node knows the committed end from its last fetch.
	var end, highWatermark int64
	if c.n.quorum != nil {
		st := c.n.quorum.Status()
		end, highWatermark = st.LogEndOffset, st.HighWatermark
	} else {
		highWatermark = c.n.follower.highWatermark.Load()
		end = highWatermark
	}
	applied := c.n.controller.Image().Offset
	ch <- prometheus.MustNewConstMetric(descMetadataEnd, prometheus.GaugeValue, float64(end))
	ch <- prometheus.MustNewConstMetric(descMetadataLag, prometheus.GaugeValue, float64(max(highWatermark-1-applied, 0)))
}
