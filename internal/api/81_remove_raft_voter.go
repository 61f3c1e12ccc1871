package api

// RemoveRaftVoter (key 81), version 0 (KIP-853): remove a controller from
// the metadata quorum's voters, as kafka-metadata-quorum remove-controller
// does.
//
// Behavior:
//   - On the controller listener the quorum leader decides; another
//     controller answers NOT_LEADER_OR_FOLLOWER. On a broker listener the
//     request is forwarded to the active controller.
//   - A cluster id other than this cluster's answers INCONSISTENT_CLUSTER_ID.
//   - kraft.version 0 answers UNSUPPORTED_VERSION.
//   - A voter id that is not in the voter set, or whose directory id differs
//     from the one given (the voters of controller.quorum.voters have the
//     zero id), answers VOTER_NOT_FOUND; removing the last voter answers INVALID_REQUEST.
//   - An uncommitted voter change answers REQUEST_TIMED_OUT.
//   - The answer follows the commit. A leader that removed itself steps down
//     once the change commits, and the remaining voters elect a leader.
//   - A learner left by a failed AddRaftVoter can be removed the same way.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	register(81, 0, 0, handleRemoveRaftVoterOnBroker)
	registerController(81, 0, 0, handleRemoveRaftVoter)
}

func handleRemoveRaftVoter(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.RemoveRaftVoterRequest)
	resp := kmsg.NewPtrRemoveRaftVoterResponse()
	if !b.authorizeCluster(c, opAlter) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		c.reply(resp)
		return
	}
	if resp.ErrorCode, resp.ErrorMessage = b.raftVoterPrecheck(req.ClusterID); resp.ErrorCode != 0 {
		c.reply(resp)
		return
	}
	go func() {
		ctx, cancel := raftVoterContext(0)
		defer cancel()
		err := b.Quorum.RemoveVoter(ctx, req.VoterID, req.VoterDirectoryID)
		resp.ErrorCode, resp.ErrorMessage = raftVoterError(err)
		c.reply(resp)
	}()
}

// handleRemoveRaftVoterOnBroker forwards to the active controller unless this node
// is it.
func handleRemoveRaftVoterOnBroker(b *Broker, c *call, r kmsg.Request) {
	if b.forwarded(c, r) {
		return
	}
	handleRemoveRaftVoter(b, c, r)
}
