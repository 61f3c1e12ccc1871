package api

// UpdateRaftVoter (key 82), version 0 (KIP-853): a voter tells the leader
// its current endpoints and supported kraft.version range.
//
// Behavior:
//   - On the controller listener only. A controller that is not the leader
//     answers NOT_LEADER_OR_FOLLOWER with the leader it knows in
//     current_leader (id, epoch and controller listener).
//   - A cluster id other than this cluster's answers INCONSISTENT_CLUSTER_ID.
//   - No listeners, a malformed listener, or a supported kraft.version range
//     that excludes the finalized level answers INVALID_REQUEST.
//   - kraft.version 0 answers UNSUPPORTED_VERSION.
//   - A voter id not in the voter set, or a directory id that differs,
//     answers VOTER_NOT_FOUND; an uncommitted voter change answers
//     REQUEST_TIMED_OUT.
//   - The new endpoints are committed in the voter set before the answer.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/quorum"
)

func init() { registerController(82, 0, 0, handleUpdateRaftVoter) }

func handleUpdateRaftVoter(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.UpdateRaftVoterRequest)
	resp := kmsg.NewPtrUpdateRaftVoterResponse()
	if !b.authorizeCluster(c, opClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		c.reply(resp)
		return
	}
	endpoints, ok := voterEndpoints(req.Listeners, func(l kmsg.UpdateRaftVoterRequestListener) (string, string, uint16) { return l.Name, l.Host, l.Port })
	feature := req.KRaftVersionFeature
	if !ok || len(endpoints) == 0 || feature.MinSupportedVersion > feature.MaxSupportedVersion {
		resp.ErrorCode = kerr.InvalidRequest.Code
		c.reply(resp)
		return
	}
	code, _ := b.raftVoterPrecheck(req.ClusterID)
	if code == kerr.NotLeaderForPartition.Code {
		resp.ErrorCode = code
		resp.CurrentLeader = b.currentRaftLeader()
		c.reply(resp)
		return
	}
	if code != 0 {
		resp.ErrorCode = code
		c.reply(resp)
		return
	}
	if v := b.Quorum.KRaftVersion(); v < feature.MinSupportedVersion || v > feature.MaxSupportedVersion {
		resp.ErrorCode = kerr.InvalidRequest.Code
		c.reply(resp)
		return
	}
	member := quorum.Member{ID: req.VoterID, DirectoryID: req.VoterDirectoryID, Endpoints: endpoints}
	go func() {
		ctx, cancel := raftVoterContext(0)
		defer cancel()
		resp.ErrorCode, _ = raftVoterError(b.Quorum.UpdateVoter(ctx, member))
		if resp.ErrorCode == kerr.NotLeaderForPartition.Code {
			resp.CurrentLeader = b.currentRaftLeader()
		}
		c.reply(resp)
	}()
}

// currentRaftLeader is the quorum leader as UpdateRaftVoter's
// current_leader names it: -1 and no address when unknown.
func (b *Broker) currentRaftLeader() kmsg.UpdateRaftVoterResponseCurrentLeader {
	cl := kmsg.NewUpdateRaftVoterResponseCurrentLeader()
	cl.LeaderID, cl.LeaderEpoch, cl.Port = -1, -1, -1
	if b.Quorum == nil {
		return cl
	}
	st := b.Quorum.Status()
	cl.LeaderID, cl.LeaderEpoch = st.LeaderID, int32(st.Epoch)
	for _, v := range st.Voters {
		if v.ID == st.LeaderID && len(v.Endpoints) > 0 {
			cl.Host, cl.Port = v.Endpoints[0].Host, int32(v.Endpoints[0].Port)
		}
	}
	return cl
}
