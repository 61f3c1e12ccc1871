package cli

import (
	"strings"
	"testing"
)

// TestTopicsReassign drives "topics reassign" and "topics reassignments"
// against one broker: a move to the replicas a partition has succeeds at
// once, bad input gets the broker's error or a usage error, and nothing is
// left in progress. Moves between brokers are tested in clustertest.
func TestTopicsReassign(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	createTopic(t, bootstrap, "moving", 2)

	out := mustRun(t, bootstrap, "", "topics", "reassign", "moving", "--partition", "0,1", "--replicas", "1").stdout
	for _, want := range []string{"Reassigning moving-0 to replicas 1.", "Reassigning moving-1 to replicas 1."} {
		if !strings.Contains(out, want) {
			t.Errorf("reassign output %q lacks %q", out, want)
		}
	}
	var results []reassignedPartition
	decodeJSON(t, mustRun(t, bootstrap, "", "topics", "reassign", "moving", "--partition", "1", "--replicas", "1",
		"--disallow-replication-factor-change", "-o", "json").stdout, &results)
	if len(results) != 1 || results[0].Partition != 1 || len(results[0].Replicas) != 1 || results[0].Cancelled {
		t.Errorf("reassign -o json = %+v", results)
	}

	mustFail(t, bootstrap, "", []string{"topics", "reassign", "moving", "--partition", "0", "--replicas", "1,9"},
		"moving-0", "INVALID_REPLICA_ASSIGNMENT", "broker 9")
	mustFail(t, bootstrap, "", []string{"topics", "reassign", "moving", "--partition", "0", "--cancel"},
		"NO_REASSIGNMENT_IN_PROGRESS")
	mustFail(t, bootstrap, "", []string{"topics", "reassign", "moving", "--partition", "5", "--replicas", "1"},
		"UNKNOWN_TOPIC_OR_PARTITION")
	mustFail(t, bootstrap, "", []string{"topics", "reassign", "moving", "--replicas", "1"}, "--partition")
	mustFail(t, bootstrap, "", []string{"topics", "reassign", "moving", "--partition", "0"}, "--replicas", "--cancel")
	mustFail(t, bootstrap, "", []string{"topics", "reassign", "moving", "--partition", "0", "--replicas", "1,x"}, `"x" is not a broker id`)

	out = mustRun(t, bootstrap, "", "topics", "reassignments").stdout
	if !strings.Contains(out, "No partition reassignments in progress.") {
		t.Errorf("reassignments output %q", out)
	}
	var rows []ongoingReassignment
	decodeJSON(t, mustRun(t, bootstrap, "", "topics", "reassignments", "moving", "-o", "json").stdout, &rows)
	if len(rows) != 0 {
		t.Errorf("reassignments -o json = %+v", rows)
	}
	mustFail(t, bootstrap, "", []string{"topics", "reassignments", "nowhere"}, "nowhere")
}
