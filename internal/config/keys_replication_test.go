package config

import "testing"

func TestThrottledReplicaListed(t *testing.T) {
	cfg := &TopicConfig{
		LeaderReplicationThrottledReplicas:   []string{"0:1", " 0:2", "3:1"},
		FollowerReplicationThrottledReplicas: []string{"*"},
	}
	for _, tc := range []struct {
		partition, broker int32
		want              bool
	}{{0, 1, true}, {0, 2, true}, {3, 1, true}, {0, 3, false}, {1, 1, false}, {3, 2, false}} {
		if got := cfg.LeaderThrottled(tc.partition, tc.broker); got != tc.want {
			t.Errorf("LeaderThrottled(%d, %d) = %v, want %v", tc.partition, tc.broker, got, tc.want)
		}
		if !cfg.FollowerThrottled(tc.partition, tc.broker) {
			t.Errorf("* does not name %d:%d", tc.partition, tc.broker)
		}
	}
	if (&TopicConfig{}).LeaderThrottled(0, 1) {
		t.Error("an empty list throttles")
	}
}
