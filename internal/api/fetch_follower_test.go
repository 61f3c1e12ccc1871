package api

import "testing"

// TestSelectRackAwareReplica checks the choice of Kafka's
// RackAwareReplicaSelector over the leader and its candidate followers.
func TestSelectRackAwareReplica(t *testing.T) {
	leader := readReplicaView{id: 1, rack: "a", logEndOffset: 100}
	cases := []struct {
		name       string
		clientRack string
		leader     readReplicaView
		followers  []readReplicaView
		want       int32
	}{
		{"no client rack", "", leader, []readReplicaView{{id: 2, rack: "b", logEndOffset: 100}}, 1},
		{"leader in the client's rack", "a", leader, []readReplicaView{{id: 2, rack: "a", logEndOffset: 100}}, 1},
		{"no replica in the client's rack", "c", leader, []readReplicaView{{id: 2, rack: "b", logEndOffset: 100}}, 1},
		{"no candidates", "b", leader, nil, 1},
		{"the follower in the client's rack", "b", leader,
			[]readReplicaView{{id: 2, rack: "b", logEndOffset: 90}, {id: 3, rack: "c", logEndOffset: 100}}, 2},
		{"the most caught-up of two", "b", leader,
			[]readReplicaView{{id: 2, rack: "b", logEndOffset: 90}, {id: 3, rack: "b", logEndOffset: 95}}, 3},
		{"equal ends: the most recently caught up", "b", leader,
			[]readReplicaView{{id: 2, rack: "b", logEndOffset: 95, timeSinceCaughtUpMs: 50}, {id: 3, rack: "b", logEndOffset: 95, timeSinceCaughtUpMs: 10}}, 3},
		{"all equal: the lowest id", "b", leader,
			[]readReplicaView{{id: 4, rack: "b", logEndOffset: 95}, {id: 3, rack: "b", logEndOffset: 95}}, 3},
		{"racks compare exactly", "B", leader, []readReplicaView{{id: 2, rack: "b", logEndOffset: 100}}, 1},
		{"a broker without a rack is in none", "b", readReplicaView{id: 1}, []readReplicaView{{id: 2, logEndOffset: 100}}, 1},
	}
	for _, c := range cases {
		if got := selectRackAwareReplica(c.clientRack, c.leader, c.followers); got != c.want {
			t.Errorf("%s: chose %d, want %d", c.name, got, c.want)
		}
	}
}
