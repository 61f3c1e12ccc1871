package console

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var templateFuncs = template.FuncMap{
	"bytes": humanBytes,
	"join": func(values []int32) string {
		out := ""
		for i, v := range values {
			if i > 0 {
				out += ","
			}
			out += strconv.Itoa(int(v))
		}
		return out
	},
	"time":  formatMillis,
	"int64": func(n int) int64 { return int64(n) },
	"add":   func(a, b int) int { return a + b },
	"sub":   func(a, b int) int { return a - b },
	"path":  url.PathEscape,
}

// formatMillis shows milliseconds since the epoch as UTC.
func formatMillis(ms int64) string {
	if ms < 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000Z")
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	value, exponent := float64(n), 0
	for value >= unit && exponent < 5 {
		value /= unit
		exponent++
	}
	return fmt.Sprintf("%.1f %ciB", value, "KMGTP"[exponent-1])
}

type brokerRow struct {
	NodeID           int32
	Host             string
	Port             int32
	Rack             string
	Roles            string
	Fenced           bool
	ActiveController bool
}

type quorumReplica struct {
	ReplicaID    int32
	LogEndOffset int64
	Lag          int64
	Observer     bool
	Leader       bool
}

type overviewData struct {
	ClusterID           string
	Brokers             []brokerRow
	QuorumLeader        int32
	QuorumEpoch         int32
	QuorumHighWatermark int64
	Quorum              []quorumReplica
	QuorumError         string
	Topics              int
	Partitions          int
	UnderReplicated     []string
	Offline             []string
	UnderMinISR         []string
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	data := overviewData{}

	cluster := kmsg.NewPtrDescribeClusterRequest()
	cluster.IncludeFencedBrokers = true
	clusterResponse, err := cluster.RequestWith(ctx, s.client)
	if err == nil {
		err = kerr.ErrorForCode(clusterResponse.ErrorCode)
	}
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, fmt.Errorf("describe cluster: %w", err))
		return
	}
	data.ClusterID = clusterResponse.ClusterID
	for _, b := range clusterResponse.Brokers {
		row := brokerRow{NodeID: b.NodeID, Host: b.Host, Port: b.Port, Fenced: b.IsFenced, Roles: "broker",
			ActiveController: b.NodeID == clusterResponse.ControllerID}
		if b.Rack != nil {
			row.Rack = *b.Rack
		}
		data.Brokers = append(data.Brokers, row)
	}

	quorum := kmsg.NewPtrDescribeQuorumRequest()
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = "__cluster_metadata"
	partition := kmsg.NewDescribeQuorumRequestTopicPartition()
	topic.Partitions = append(topic.Partitions, partition)
	quorum.Topics = append(quorum.Topics, topic)
	quorumResponse, err := quorum.RequestWith(ctx, s.client)
	if err == nil {
		err = kerr.ErrorForCode(quorumResponse.ErrorCode)
	}
	switch {
	case err != nil:
		data.QuorumError = err.Error()
	case len(quorumResponse.Topics) == 1 && len(quorumResponse.Topics[0].Partitions) == 1:
		p := quorumResponse.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			data.QuorumError = err.Error()
			break
		}
		data.QuorumLeader, data.QuorumEpoch, data.QuorumHighWatermark = p.LeaderID, p.LeaderEpoch, p.HighWatermark
		add := func(replicas []kmsg.DescribeQuorumResponseTopicPartitionReplicaState, observer bool) {
			for _, v := range replicas {
				data.Quorum = append(data.Quorum, quorumReplica{ReplicaID: v.ReplicaID, LogEndOffset: v.LogEndOffset,
					Lag: max(p.HighWatermark-v.LogEndOffset, 0), Observer: observer, Leader: v.ReplicaID == p.LeaderID})
			}
		}
		add(p.CurrentVoters, false)
		add(p.Observers, true)
		for i := range data.Brokers {
			for _, v := range p.CurrentVoters {
				if v.ReplicaID == data.Brokers[i].NodeID {
					data.Brokers[i].Roles = "broker,controller"
				}
			}
		}
	}

	metadata, err := s.admin.Metadata(ctx)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, fmt.Errorf("metadata: %w", err))
		return
	}
	var shrunk []string
	for _, t := range metadata.Topics.Sorted() {
		data.Topics++
		for _, p := range t.Partitions.Sorted() {
			data.Partitions++
			name := fmt.Sprintf("%s-%d", t.Topic, p.Partition)
			if p.Leader < 0 {
				data.Offline = append(data.Offline, name)
			}
			if len(p.ISR) < len(p.Replicas) {
				data.UnderReplicated = append(data.UnderReplicated, name)
				if !slices.Contains(shrunk, t.Topic) {
					shrunk = append(shrunk, t.Topic)
				}
			}
		}
	}
	if len(shrunk) > 0 {
		// Only topics with a shrunk ISR can be under min ISR.
		configs, err := s.admin.DescribeTopicConfigs(ctx, shrunk...)
		if err == nil {
			for _, rc := range configs {
				minISR := 1
				for _, config := range rc.Configs {
					if config.Key == "min.insync.replicas" && config.Value != nil {
						minISR, _ = strconv.Atoi(*config.Value)
					}
				}
				for _, p := range metadata.Topics[rc.Name].Partitions.Sorted() {
					if len(p.ISR) < minISR {
						data.UnderMinISR = append(data.UnderMinISR, fmt.Sprintf("%s-%d", rc.Name, p.Partition))
					}
				}
			}
		}
	}
	c.render(w, r, http.StatusOK, "overview", page{Title: "Overview", Nav: "overview", Data: data})
}

// metricsJSON answers the plots' samples.
func (c *Console) metricsJSON(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	samples := c.sampler.Samples()
	if samples == nil {
		samples = []Sample{}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"interval_ms": c.config.MetricsIntervalMs, "samples": samples})
}

// groupLagJSON answers a group's lag-over-time samples.
func (c *Console) groupLagJSON(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"interval_ms": c.config.MetricsIntervalMs, "samples": c.sampler.GroupLag(r.PathValue("group"))})
}
