package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestNewestVersionBehaviours drives the behaviour of the Kafka 4.4 version
// bumps with franz-go requests against a real node: ApiVersions v5
// (KIP-1242), DescribeGroups v6 (KIP-1043), DescribeCluster v2 (KIP-1073),
// Metadata v13 (KIP-1102), ListOffsets -5/-6 (KIP-1005, KIP-1023),
// DeleteGroups v3 and DescribeLogDirs v5 (KIP-1066).
func TestNewestVersionBehaviours(t *testing.T) {
	tn := startTestNode(t)
	ctx := testContext(t)
	cl := tn.client()
	mustCreateTopic(t, tn.admin(), "newest", 1, nil)
	produceKeyed(t, tn.client(kgo.DefaultProduceTopic("newest")), "newest", 3)

	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Version != 13 || meta.ErrorCode != 0 || meta.ClusterID == nil {
		t.Fatalf("metadata v%d error %d cluster %v", meta.Version, meta.ErrorCode, meta.ClusterID)
	}
	clusterID, nodeID := *meta.ClusterID, meta.Brokers[0].NodeID

	wrongCluster, wrongNode := "another-cluster", nodeID+7
	for _, tc := range []struct {
		name      string
		clusterID *string
		nodeID    int32
		want      int16
	}{
		{"bootstrapping", nil, -1, 0},
		{"this node", &clusterID, nodeID, 0},
		{"another cluster", &wrongCluster, nodeID, kerr.RebootstrapRequired.Code},
		{"another node", &clusterID, wrongNode, kerr.RebootstrapRequired.Code},
		{"cluster without node", &clusterID, -1, kerr.InvalidRequest.Code},
	} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-test", "1.0"
		req.ClusterID, req.NodeID = tc.clusterID, tc.nodeID
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != 5 || resp.ErrorCode != tc.want || len(resp.ApiKeys) == 0 {
			t.Errorf("ApiVersions v%d %s: error %d, %d keys; want error %d", resp.Version, tc.name, resp.ErrorCode, len(resp.ApiKeys), tc.want)
		}
	}

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"no-such-group"}
	groups, err := dg.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if groups.Version != 6 || len(groups.Groups) != 1 || groups.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code ||
		groups.Groups[0].ErrorMessage == nil || *groups.Groups[0].ErrorMessage != "Group no-such-group not found." {
		t.Fatalf("DescribeGroups v%d of an unknown group: %+v", groups.Version, groups.Groups)
	}

	// A consumer-protocol group (KIP-848) is not a classic group.
	member := &rawMember{t: t, cl: cl, group: "newest-848", id: "member-1"}
	if joined := member.join(ctx, "newest"); joined.ErrorCode != 0 {
		t.Fatalf("join a consumer-protocol group: %v", kerr.ErrorForCode(joined.ErrorCode))
	}
	dg = kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"newest-848"}
	groups, err = dg.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups.Groups) != 1 || groups.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code ||
		groups.Groups[0].ErrorMessage == nil || *groups.Groups[0].ErrorMessage != "Group newest-848 is not a classic group." {
		t.Fatalf("DescribeGroups v6 of a consumer-protocol group: %+v", groups.Groups)
	}

	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeFencedBrokers = true
	cluster, err := dc.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if cluster.Version != 2 || cluster.ErrorCode != 0 || len(cluster.Brokers) != 1 || cluster.Brokers[0].IsFenced {
		t.Fatalf("DescribeCluster v%d: %+v", cluster.Version, cluster)
	}

	for _, spec := range []int64{-5, -6} {
		lo := kmsg.NewPtrListOffsetsRequest()
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = "newest"
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp = 0, spec
		lt.Partitions = append(lt.Partitions, lp)
		lo.Topics = append(lo.Topics, lt)
		resp, err := lo.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		got := resp.Topics[0].Partitions[0]
		if resp.Version != 11 || got.ErrorCode != 0 || got.Offset != -1 || got.Timestamp != -1 {
			t.Fatalf("ListOffsets v%d spec %d without remote storage: %+v", resp.Version, spec, got)
		}
	}
	// The earliest offset carries the first cached leader epoch; a leader
	// caches its epoch when it takes the partition, so an empty log has it
	// too, as in Kafka.
	mustCreateTopic(t, tn.admin(), "newest-empty", 1, nil)
	for topic, wantEpoch := range map[string]int32{"newest": 0, "newest-empty": 0} {
		lo := kmsg.NewPtrListOffsetsRequest()
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = topic
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp = 0, -2
		lt.Partitions = append(lt.Partitions, lp)
		lo.Topics = append(lo.Topics, lt)
		resp, err := lo.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Topics[0].Partitions[0]; got.ErrorCode != 0 || got.Offset != 0 || got.LeaderEpoch != wantEpoch {
			t.Fatalf("ListOffsets earliest of %s: %+v, want offset 0 epoch %d", topic, got, wantEpoch)
		}
	}

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"no-such-group"}
	deleted, err := del.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if deleted.Version != 3 || len(deleted.Groups) != 1 || deleted.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("DeleteGroups v%d of an unknown group: %+v", deleted.Version, deleted.Groups)
	}

	dirs, err := kmsg.NewPtrDescribeLogDirsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if dirs.Version != 5 || len(dirs.Dirs) != 1 || dirs.Dirs[0].ErrorCode != 0 || dirs.Dirs[0].IsCordoned {
		t.Fatalf("DescribeLogDirs v%d: %+v", dirs.Version, dirs.Dirs)
	}
	stillServes(t, tn)
}
