package server

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// nodeCollector reports the state of the node's partitions and metadata at
// scrape time, so nothing on the produce or fetch path updates a gauge.
type nodeCollector struct{ n *Node }

var (
	descLogSize = prometheus.NewDesc("samsa_log_size_bytes", "Bytes of a partition's log on disk (kafka.log:Log Size).",
		[]string{"topic", "partition"}, nil)
	descLogSegments = prometheus.NewDesc("samsa_log_segments", "Segments of a partition's log (NumLogSegments).",
		[]string{"topic", "partition"}, nil)
	descLogEnd = prometheus.NewDesc("samsa_log_end_offset", "Next offset of a partition's log (LogEndOffset).",
		[]string{"topic", "partition"}, nil)
	descLogStart = prometheus.NewDesc("samsa_log_start_offset", "First offset of a partition's log (LogStartOffset).",
		[]string{"topic", "partition"}, nil)
	descPartitions      = prometheus.NewDesc("samsa_partitions", "Partitions this node leads (PartitionCount).", nil, nil)
	descUnderReplicated = prometheus.NewDesc("samsa_under_replicated_partitions",
		"Led partitions whose ISR is smaller than their replica set (UnderReplicatedPartitions).", nil, nil)
	descUnderMinISR = prometheus.NewDesc("samsa_under_min_isr_partitions",
		"Led partitions whose ISR is smaller than their topic's min.insync.replicas (UnderMinIsrPartitionCount).", nil, nil)
	descOffline = prometheus.NewDesc("samsa_offline_partitions",
		"Partitions without a leader, reported by the active controller; 0 elsewhere (OfflinePartitionsCount).", nil, nil)
	descActiveController = prometheus.NewDesc("samsa_active_controller_count", "1 on the active controller, 0 elsewhere (ActiveControllerCount).", nil, nil)
	descISRShrinks       = prometheus.NewDesc("samsa_isr_shrinks_total",
		"ISR shrinks this node committed as leader through the controller (IsrShrinksPerSec).", nil, nil)
	descISRExpands = prometheus.NewDesc("samsa_isr_expands_total",
		"ISR expansions this node committed as leader through the controller (IsrExpandsPerSec).", nil, nil)
	descISRFailed = prometheus.NewDesc("samsa_isr_updates_failed_total",
		"ISR changes this node proposed as leader that the controller refused or did not answer (FailedIsrUpdatesPerSec).", nil, nil)
	descMetadataOffset = prometheus.NewDesc("samsa_metadata_log_offset", "Offset of the last metadata record applied.", nil, nil)
	descTopics         = prometheus.NewDesc("samsa_topics", "Topics in the metadata image (GlobalTopicCount).", nil, nil)
	descReassigning    = prometheus.NewDesc("samsa_reassigning_partitions",
		"Led partitions with a reassignment in progress (ReassigningPartitions).", nil, nil)
)

// isActiveController reports whether this node's controller is the active
// one (the metadata quorum's leader).
func (n *Node) isActiveController() bool {
	if n.quorum == nil {
		return false
	}
	leader, _ := n.metadata.Leader()
	return leader == n.cfg.NodeID
}

func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLogSize, descLogSegments, descLogEnd, descLogStart, descPartitions,
		descUnderReplicated, descUnderMinISR, descOffline, descActiveController, descMetadataOffset, descTopics,
		descISRShrinks, descISRExpands, descISRFailed, descReassigning} {
		ch <- d
	}
}

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	parts := c.n.partitions.All()
	for _, p := range parts {
		labels := []string{p.Topic, strconv.Itoa(int(p.Index))}
		ch <- prometheus.MustNewConstMetric(descLogSize, prometheus.GaugeValue, float64(p.Log.Size()), labels...)
		ch <- prometheus.MustNewConstMetric(descLogSegments, prometheus.GaugeValue, float64(p.Log.NumSegments()), labels...)
		ch <- prometheus.MustNewConstMetric(descLogEnd, prometheus.GaugeValue, float64(p.Log.LogEndOffset()), labels...)
		ch <- prometheus.MustNewConstMetric(descLogStart, prometheus.GaugeValue, float64(p.Log.LogStartOffset()), labels...)
	}
	img := c.n.controller.Image()
	active := c.n.isActiveController()
	var under, underMin, offline, reassigning float64
	for _, name := range img.TopicNames() {
		minISR := -1 // resolved once per topic, only if this node leads some of it
		for _, p := range img.Topic(name).Partitions {
			if p.Leader < 0 {
				offline++
				continue
			}
			if p.Leader != c.n.cfg.NodeID {
				continue
			}
			// As in Kafka, a reassignment's adding replicas do not count
			// towards the replication factor until it completes.
			if len(p.ISR) < len(p.Replicas)-len(p.AddingReplicas) {
				under++
			}
			if p.Reassigning() {
				reassigning++
			}
			if minISR < 0 {
				minISR = int(c.n.topicConfig(img, name).MinInsyncReplicas)
			}
			if len(p.ISR) < minISR {
				underMin++
			}
		}
	}
	if !active {
		offline = 0
	}
	activeCount := 0.0
	if active {
		activeCount = 1
	}
	isr := c.n.partitions.ISRChanges()
	ch <- prometheus.MustNewConstMetric(descPartitions, prometheus.GaugeValue, float64(len(parts)))
	ch <- prometheus.MustNewConstMetric(descUnderReplicated, prometheus.GaugeValue, under)
	ch <- prometheus.MustNewConstMetric(descUnderMinISR, prometheus.GaugeValue, underMin)
	ch <- prometheus.MustNewConstMetric(descOffline, prometheus.GaugeValue, offline)
	ch <- prometheus.MustNewConstMetric(descActiveController, prometheus.GaugeValue, activeCount)
	ch <- prometheus.MustNewConstMetric(descISRShrinks, prometheus.CounterValue, float64(isr.Shrinks.Load()))
	ch <- prometheus.MustNewConstMetric(descISRExpands, prometheus.CounterValue, float64(isr.Expands.Load()))
	ch <- prometheus.MustNewConstMetric(descISRFailed, prometheus.CounterValue, float64(isr.Failed.Load()))
	ch <- prometheus.MustNewConstMetric(descMetadataOffset, prometheus.GaugeValue, float64(img.Offset))
	ch <- prometheus.MustNewConstMetric(descTopics, prometheus.GaugeValue, float64(img.NumTopics()))
	ch <- prometheus.MustNewConstMetric(descReassigning, prometheus.GaugeValue, reassigning)
}
