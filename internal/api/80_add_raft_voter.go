package api

// AddRaftVoter (key 80), versions 0-1 (KIP-853): add a controller to the
// metadata quorum's voters, as kafka-metadata-quorum add-controller does.
//
// Behavior:
//   - On the controller listener the quorum leader decides; another
//     controller answers NOT_LEADER_OR_FOLLOWER. On a broker listener the
//     request is forwarded to the active controller.
//   - A cluster id other than this cluster's answers INCONSISTENT_CLUSTER_ID.
//   - No listeners, or a listener without name, host or port, answers
//     INVALID_REQUEST.
//   - kraft.version 0 (static controller.quorum.voters) answers
//     UNSUPPORTED_VERSION.
//   - A node that is a voter already answers DUPLICATE_VOTER.
//   - A voter change not yet committed, a leader that has not committed in
//     its epoch, or a new controller that does not catch up within
//     timeout_ms answers REQUEST_TIMED_OUT.
//   - The new controller joins as a raft learner, is caught up (from a
//     snapshot), and is promoted once its log reaches the high watermark;
//     the answer follows the commit of the promotion. v1's
//     ack_when_committed false is answered the same way: after the commit.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/quorum"
)

func init() {
	register(80, 0, 1, handleAddRaftVoterOnBroker)
	registerController(80, 0, 1, handleAddRaftVoter)
}

func handleAddRaftVoter(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.AddRaftVoterRequest)
	resp := kmsg.NewPtrAddRaftVoterResponse()
	if !b.authorizeCluster(c, opAlter) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		c.reply(resp)
		return
	}
	endpoints, ok := voterEndpoints(req.Listeners, func(l kmsg.AddRaftVoterRequestListener) (string, string, uint16) { return l.Name, l.Host, l.Port })
	if !ok || len(endpoints) == 0 || req.VoterID < 0 {
		msg := "AddRaftVoter needs a voter id and listeners with a name, host and port."
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, &msg
		c.reply(resp)
		return
	}
	if resp.ErrorCode, resp.ErrorMessage = b.raftVoterPrecheck(req.ClusterID); resp.ErrorCode != 0 {
		c.reply(resp)
		return
	}
	member := quorum.Member{ID: req.VoterID, DirectoryID: req.VoterDirectoryID, Endpoints: endpoints}
	go func() {
		ctx, cancel := raftVoterContext(req.TimeoutMillis)
		defer cancel()
		err := b.Quorum.AddVoter(ctx, member)
		if err != nil {
			b.Logger.Info("AddRaftVoter refused", "voter", req.VoterID, "err", err)
		}
		resp.ErrorCode, resp.ErrorMessage = raftVoterError(err)
		c.reply(resp)
	}()
}

// handleAddRaftVoterOnBroker forwards to the active controller unless this node
// is it.
func handleAddRaftVoterOnBroker(b *Broker, c *call, r kmsg.Request) {
	if b.forwarded(c, r) {
		return
	}
	handleAddRaftVoter(b, c, r)
}
