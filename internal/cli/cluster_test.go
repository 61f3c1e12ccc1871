package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestClusterDescribe(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	out := mustRun(t, bootstrap, "", "cluster", "describe").stdout
	for _, want := range []string{"Cluster ID:", "Controller:", "Brokers:     1", "NODE", "HOST", "PORT"} {
		if !strings.Contains(out, want) {
			t.Errorf("cluster describe lacks %q:\n%s", want, out)
		}
	}
	var cluster describedCluster
	decodeJSON(t, mustRun(t, bootstrap, "", "cluster", "describe", "-o", "json").stdout, &cluster)
	if cluster.ClusterID == "" || len(cluster.Brokers) != 1 || cluster.Controller != cluster.Brokers[0].NodeID {
		t.Errorf("cluster describe -o json: %+v", cluster)
	}
	_, port, _ := strings.Cut(strings.Split(bootstrap, ",")[0], ":")
	if itoa(int(cluster.Brokers[0].Port)) != port {
		t.Errorf("broker port %d, want %s", cluster.Brokers[0].Port, port)
	}
}

// TestClusterQuorum accepts either answer a cluster may give: the quorum,
// or a clear "not supported". The two kfake tests below pin down each.
func TestClusterQuorum(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	result := runCLI(t, bootstrap, "", "cluster", "quorum")
	if result.code == 0 {
		if !strings.Contains(result.stdout, "Leader:") || !strings.Contains(result.stdout, "Leader ") {
			t.Errorf("cluster quorum output:\n%s", result.stdout)
		}
		return
	}
	if !strings.Contains(result.stderr, "not supported by this cluster") {
		t.Errorf("cluster quorum failed without saying it is unsupported: %q", result.stderr)
	}
}

func TestClusterQuorumNotSupported(t *testing.T) {
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	mustFail(t, cluster.ListenAddrs()[0], "", []string{"cluster", "quorum"}, "DescribeQuorum is not supported by this cluster")
}

// TestClusterQuorumOutput makes a kfake cluster advertise and answer
// DescribeQuorum, to check how the CLI presents a quorum.
func TestClusterQuorumOutput(t *testing.T) {
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	bootstrap := cluster.ListenAddrs()[0]

	// Learn kfake's own ApiVersions answer, then serve it with DescribeQuorum added.
	probe, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(t.Context(), probe)
	probe.Close()
	if err != nil {
		t.Fatal(err)
	}
	quorumKey := kmsg.NewApiVersionsResponseApiKey()
	quorumKey.ApiKey, quorumKey.MinVersion, quorumKey.MaxVersion = kmsg.DescribeQuorum.Int16(), 0, 2
	versions.ApiKeys = append(versions.ApiKeys, quorumKey)
	cluster.ControlKey(kmsg.ApiVersions.Int16(), func(request kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		response := *versions
		response.Version = request.GetVersion()
		return &response, nil, true
	})

	now := time.Now().UnixMilli()
	cluster.ControlKey(kmsg.DescribeQuorum.Int16(), func(request kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		response := request.ResponseKind().(*kmsg.DescribeQuorumResponse)
		topic := kmsg.NewDescribeQuorumResponseTopic()
		topic.Topic = metadataTopic
		partition := kmsg.NewDescribeQuorumResponseTopicPartition()
		partition.LeaderID, partition.LeaderEpoch, partition.HighWatermark = 1, 7, 100
		replica := func(id int32, logEndOffset int64) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
			r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
			r.ReplicaID, r.LogEndOffset, r.LastFetchTimestamp, r.LastCaughtUpTimestamp = id, logEndOffset, now, now
			return r
		}
		partition.CurrentVoters = append(partition.CurrentVoters, replica(1, 100), replica(2, 90), replica(3, 100))
		partition.Observers = append(partition.Observers, replica(4, 95))
		topic.Partitions = append(topic.Partitions, partition)
		response.Topics = append(response.Topics, topic)
		return response, nil, true
	})

	out := mustRun(t, bootstrap, "", "cluster", "quorum").stdout
	for _, want := range []string{"Leader:          1", "Leader epoch:    7", "High watermark:  100", "Voters:          3", "Observers:       1"} {
		if !strings.Contains(out, want) {
			t.Errorf("cluster quorum lacks %q:\n%s", want, out)
		}
	}
	for replica, want := range map[string]string{"1": "1 Leader 100 0", "2": "2 Follower 90 10", "4": "4 Observer 95 5"} {
		if rows := tableRows(out, replica); len(rows) != 1 || strings.Join(rows[0][:4], " ") != want {
			t.Errorf("replica %s rows %v, want %q\n%s", replica, rows, want, out)
		}
	}
	var quorum describedQuorum
	decodeJSON(t, mustRun(t, bootstrap, "", "cluster", "quorum", "-o", "json").stdout, &quorum)
	if quorum.LeaderID != 1 || quorum.LeaderEpoch != 7 || len(quorum.Replicas) != 4 || quorum.Replicas[1].Lag != 10 {
		t.Errorf("cluster quorum -o json: %+v", quorum)
	}
}
