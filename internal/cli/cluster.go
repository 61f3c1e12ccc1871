package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataTopic is the KRaft metadata log, the only partition DescribeQuorum
// knows about.
const metadataTopic = "__cluster_metadata"

func newClusterCommand(opts *globalOptions) *cobra.Command {
	cmd := newParentCommand("cluster", "Describe the cluster and its metadata quorum",
		`  samsa cluster describe
  samsa cluster quorum
  samsa cluster quorum add --id 4 --controller ctrl4:9093
  samsa cluster features upgrade --feature kraft.version=1`)
	cmd.AddCommand(newClusterDescribeCommand(opts), newClusterQuorumCommand(opts), newClusterFeaturesCommand(opts))
	return cmd
}

// describedCluster is the JSON shape of "cluster describe".
type describedCluster struct {
	ClusterID  string          `json:"cluster_id"`
	Controller int32           `json:"controller"`
	Brokers    []clusterBroker `json:"brokers"`
}

type clusterBroker struct {
	NodeID int32  `json:"node_id"`
	Host   string `json:"host"`
	Port   int32  `json:"port"`
	Rack   string `json:"rack,omitempty"`
}

func newClusterDescribeCommand(opts *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "describe",
		Short: "Show the cluster id, the controller and the brokers",
		Example: `  samsa cluster describe
  samsa -b broker1:9092 cluster describe -o json`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			metadata, err := admin.BrokerMetadata(ctx)
			if err != nil {
				return fmt.Errorf("describe cluster: %w", err)
			}
			result := describedCluster{
				ClusterID:  metadata.Cluster,
				Controller: metadata.Controller,
				Brokers:    make([]clusterBroker, 0, len(metadata.Brokers)),
			}
			for _, b := range metadata.Brokers {
				broker := clusterBroker{NodeID: b.NodeID, Host: b.Host, Port: b.Port}
				if b.Rack != nil {
					broker.Rack = *b.Rack
				}
				result.Brokers = append(result.Brokers, broker)
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, result)
			}
			header := newTable(out)
			header.row("Cluster ID:", orDash(result.ClusterID))
			controller := fmt.Sprint(result.Controller)
			if result.Controller < 0 {
				controller = "none"
			}
			header.row("Controller:", controller)
			header.row("Brokers:", len(result.Brokers))
			if err := header.flush(); err != nil {
				return err
			}
			fmt.Fprintln(out)
			brokers := newTable(out, "NODE", "HOST", "PORT", "RACK")
			for _, b := range result.Brokers {
				brokers.row(b.NodeID, b.Host, b.Port, orDash(b.Rack))
			}
			return brokers.flush()
		},
	}
}

// describedQuorum is the JSON shape of "cluster quorum".
type describedQuorum struct {
	LeaderID      int32           `json:"leader_id"`
	LeaderEpoch   int32           `json:"leader_epoch"`
	HighWatermark int64           `json:"high_watermark"`
	Replicas      []quorumReplica `json:"replicas"`
}

// quorumReplica is one voter or observer; timestamps are the leader's wall
// clock in ms, -1 when unknown.
type quorumReplica struct {
	ReplicaID             int32  `json:"replica_id"`
	Role                  string `json:"role"`
	LogEndOffset          int64  `json:"log_end_offset"`
	Lag                   int64  `json:"lag"`
	LastFetchTimestamp    int64  `json:"last_fetch_timestamp"`
	LastCaughtUpTimestamp int64  `json:"last_caught_up_timestamp"`
}

// errQuorumNotSupported is returned when no broker advertises DescribeQuorum.
var errQuorumNotSupported = errors.New("DescribeQuorum is not supported by this cluster")

func newClusterQuorumCommand(opts *globalOptions) *cobra.Command {
	cmd := newClusterQuorumDescribeCommand(opts)
	cmd.AddCommand(newClusterQuorumAddCommand(opts), newClusterQuorumRemoveCommand(opts))
	return cmd
}

func newClusterQuorumDescribeCommand(opts *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "quorum",
		Short: "Show the Raft metadata quorum: leader, epoch, voters and observers",
		Long: `Show the state of the metadata quorum (the __cluster_metadata log) with
DescribeQuorum: the leader, its epoch and high watermark, and for every voter
and observer how far its log is behind.`,
		Example: `  samsa cluster quorum
  samsa cluster quorum -o json
  samsa cluster quorum add --id 4 --controller ctrl4:9093
  samsa cluster quorum remove --id 4`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			client, ctx, done, err := opts.clientSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()

			versions, err := kadm.NewClient(client).ApiVersions(ctx)
			if err != nil {
				return fmt.Errorf("describe quorum: %w", err)
			}
			supported, answered := false, false
			var brokerErr error
			versions.Each(func(v kadm.BrokerApiVersions) {
				if v.Err != nil {
					brokerErr = v.Err
					return
				}
				answered = true
				if _, ok := v.KeyMaxVersion(kmsg.DescribeQuorum.Int16()); ok {
					supported = true
				}
			})
			if !answered && brokerErr != nil {
				return fmt.Errorf("describe quorum: %w", brokerErr)
			}
			if !supported {
				return withHint(fmt.Errorf("describe quorum: %w", errQuorumNotSupported),
					"the cluster may use ZooKeeper or not expose its quorum; 'samsa cluster describe' still works")
			}

			request := kmsg.NewPtrDescribeQuorumRequest()
			topic := kmsg.NewDescribeQuorumRequestTopic()
			topic.Topic = metadataTopic
			partition := kmsg.NewDescribeQuorumRequestTopicPartition()
			partition.Partition = 0
			topic.Partitions = append(topic.Partitions, partition)
			request.Topics = append(request.Topics, topic)
			response, err := request.RequestWith(ctx, client)
			if err != nil {
				return fmt.Errorf("describe quorum: %w", err)
			}
			quorum, err := quorumFromResponse(response)
			if err != nil {
				return fmt.Errorf("describe quorum: %w", err)
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, quorum)
			}
			return printQuorum(out, quorum, time.Now())
		},
	}
}

func quorumFromResponse(response *kmsg.DescribeQuorumResponse) (describedQuorum, error) {
	var quorum describedQuorum
	if err := kerr.ErrorForCode(response.ErrorCode); err != nil {
		return quorum, kafkaError(err, stringOrEmpty(response.ErrorMessage))
	}
	for _, topic := range response.Topics {
		for _, p := range topic.Partitions {
			if topic.Topic != metadataTopic || p.Partition != 0 {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return quorum, kafkaError(err, stringOrEmpty(p.ErrorMessage))
			}
			quorum.LeaderID = p.LeaderID
			quorum.LeaderEpoch = p.LeaderEpoch
			quorum.HighWatermark = p.HighWatermark
			quorum.Replicas = []quorumReplica{}
			add := func(states []kmsg.DescribeQuorumResponseTopicPartitionReplicaState, voter bool) {
				for _, s := range states {
					role := "Observer"
					switch {
					case s.ReplicaID == p.LeaderID:
						role = "Leader"
					case voter:
						role = "Follower"
					}
					lag := int64(-1)
					if s.LogEndOffset >= 0 {
						lag = max(p.HighWatermark-s.LogEndOffset, 0)
					}
					quorum.Replicas = append(quorum.Replicas, quorumReplica{
						ReplicaID:             s.ReplicaID,
						Role:                  role,
						LogEndOffset:          s.LogEndOffset,
						Lag:                   lag,
						LastFetchTimestamp:    s.LastFetchTimestamp,
						LastCaughtUpTimestamp: s.LastCaughtUpTimestamp,
					})
				}
			}
			add(p.CurrentVoters, true)
			add(p.Observers, false)
			return quorum, nil
		}
	}
	return quorum, fmt.Errorf("the response has no %s-0 partition", metadataTopic)
}

func printQuorum(out io.Writer, q describedQuorum, now time.Time) error {
	header := newTable(out)
	header.row("Leader:", q.LeaderID)
	header.row("Leader epoch:", q.LeaderEpoch)
	header.row("High watermark:", q.HighWatermark)
	voters := 0
	for _, r := range q.Replicas {
		if r.Role != "Observer" {
			voters++
		}
	}
	header.row("Voters:", voters)
	header.row("Observers:", len(q.Replicas)-voters)
	if err := header.flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	replicas := newTable(out, "REPLICA", "ROLE", "LOG-END-OFFSET", "LAG", "LAST-FETCH", "LAST-CAUGHT-UP")
	for _, r := range q.Replicas {
		replicas.row(r.ReplicaID, r.Role, offsetOrDash(r.LogEndOffset), offsetOrDash(r.Lag),
			millisAgo(r.LastFetchTimestamp, now), millisAgo(r.LastCaughtUpTimestamp, now))
	}
	return replicas.flush()
}

// millisAgo renders a leader timestamp as "1234ms ago", as Kafka's
// kafka-metadata-quorum tool does, or "-" when unknown.
func millisAgo(timestampMs int64, now time.Time) string {
	if timestampMs < 0 {
		return "-"
	}
	return fmt.Sprintf("%dms ago", max(now.UnixMilli()-timestampMs, 0))
}

func stringOrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
