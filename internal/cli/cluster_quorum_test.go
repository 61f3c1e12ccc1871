package cli

import (
	"strings"
	"testing"
)

// TestClusterQuorumAddRemove drives "cluster features upgrade" and
// "cluster quorum add/remove" against a real node: at kraft.version 0 a
// change is refused with UNSUPPORTED_VERSION; after the upgrade the quorum
// answers Kafka's errors for a duplicate voter and an unknown one, and bad
// flags fail before any request.
func TestClusterQuorumAddRemove(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	mustFail(t, bootstrap, "", []string{"cluster", "quorum", "remove", "--id", "1"}, "UNSUPPORTED_VERSION")

	out := mustRun(t, bootstrap, "", "cluster", "features", "upgrade", "--feature", "kraft.version=1").stdout
	if !strings.Contains(out, "Upgraded kraft.version=1.") {
		t.Fatalf("features upgrade output: %q", out)
	}
	mustFail(t, bootstrap, "", []string{"cluster", "features", "upgrade", "--feature", "kraft.version"}, "is not name=level")

	eventually(t, "the upgrade's snapshot, then DUPLICATE_VOTER for node 1", func() bool {
		r := runCLI(t, bootstrap, "", "cluster", "quorum", "add", "--id", "1", "--controller", "127.0.0.1:1")
		return r.code != 0 && strings.Contains(r.stderr, "DUPLICATE_VOTER")
	})
	mustFail(t, bootstrap, "", []string{"cluster", "quorum", "remove", "--id", "9"}, "VOTER_NOT_FOUND")
	mustFail(t, bootstrap, "", []string{"cluster", "quorum", "remove", "--id", "1"}, "INVALID_REQUEST")
	mustFail(t, bootstrap, "", []string{"cluster", "quorum", "remove", "--id", "1", "--directory-id", "nope"}, "not a base64 UUID")
	mustFail(t, bootstrap, "", []string{"cluster", "quorum", "add", "--id", "2", "--controller", "nohost"}, "--controller")
	// The node keeps one voter.
	var quorum describedQuorum
	decodeJSON(t, mustRun(t, bootstrap, "", "cluster", "quorum", "-o", "json").stdout, &quorum)
	if len(quorum.Replicas) != 1 || quorum.Replicas[0].Role != "Leader" || quorum.Replicas[0].ReplicaID != quorum.LeaderID {
		t.Fatalf("cluster quorum after the refusals: %+v, want the leader alone", quorum)
	}
}
