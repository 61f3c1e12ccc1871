package api

// ShareAcknowledge (key 79), versions 1-2, served by the leader of each
// partition: acknowledgements of records a share group member acquired.
//
// Behavior:
//   - v0 was Kafka 4.0's early access and is not served; v2 adds
//     IsRenewAck, with which acknowledgement type 4 (RENEW) extends the
//     acquisition locks (KIP-1222).
//   - The share session must exist: epoch 0 cannot open one
//     (INVALID_SHARE_SESSION_EPOCH), -1 applies the acknowledgements,
//     closes the session and releases what the member still holds, any
//     other epoch must be the session's next (INVALID_SHARE_SESSION_EPOCH,
//     SHARE_SESSION_NOT_FOUND).
//   - Each partition's acknowledgements apply all or none:
//     INVALID_RECORD_STATE for records not acquired by the member or
//     outside the share-partition, INVALID_REQUEST for malformed batches.
//   - GROUP READ on the group, TOPIC READ on each topic.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/share"
)

func init() { register(79, 1, 2, handleShareAcknowledge) }

func handleShareAcknowledge(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ShareAcknowledgeRequest)
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	fail := func(code *kerr.Error, message string) {
		resp.ErrorCode = code.Code
		if message != "" {
			resp.ErrorMessage = strptr(message)
		}
		c.reply(resp)
	}
	group, member := derefString(req.GroupID), derefString(req.MemberID)
	switch {
	case !b.sharesEnabled():
		fail(kerr.UnsupportedVersion, "")
		return
	// Kafka's order: the group is authorized first, then the member id
	// parsed (INVALID_REQUEST when it is not one), then the group id
	// checked.
	case !b.authorize(c, opRead, resGroup, group):
		fail(kerr.GroupAuthorizationFailed, "")
		return
	case member == "":
		fail(kerr.InvalidRequest, "MemberId can't be empty.")
		return
	case group == "":
		fail(kerr.InvalidGroupID, "")
		return
	case req.ShareSessionEpoch == share.InitialEpoch:
		fail(kerr.InvalidShareSessionEpoch, "ShareAcknowledge cannot open a share session.")
		return
	}
	nowMs := b.Now().UnixMilli()
	var closed *share.Session
	code := b.shares().sessions.Use(share.SessionKey{Group: group, Member: member}, req.ShareSessionEpoch, nowMs, func(s *share.Session) {
		if req.ShareSessionEpoch == share.FinalEpoch {
			closed = s
		}
	})
	if code != 0 {
		fail(kerr.ErrorForCode(code).(*kerr.Error), "")
		return
	}
	img := b.Image()
	readable := b.topicChecker(c, opRead)
	leaders := map[int32]bool{}
	for _, t := range req.Topics {
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition = p.Partition
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
			target := b.resolveSharePartition(img, t.TopicID, p.Partition)
			switch {
			case target.topic != "" && !readable.allowed(target.topic):
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			default:
				batches := make([]share.AckBatch, len(p.AcknowledgementBatches))
				for i, a := range p.AcknowledgementBatches {
					batches[i] = shareAckBatch(a.FirstOffset, a.LastOffset, a.AcknowledgeTypes)
				}
				rp.ErrorCode = b.acknowledgeShare(group, member, target, batches, req.IsRenewAck, nowMs)
				if target.code == kerr.NotLeaderForPartition.Code {
					rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = currentLeader(img, target)
					if rp.CurrentLeader.LeaderID >= 0 {
						leaders[rp.CurrentLeader.LeaderID] = true
					}
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if closed != nil {
		b.releaseShareSession(group, member, closed)
	}
	for _, e := range shareNodeEndpoints(c, img, leaders) {
		resp.NodeEndpoints = append(resp.NodeEndpoints, kmsg.ShareAcknowledgeResponseNodeEndpoint{NodeID: e.NodeID, Host: e.Host, Port: e.Port, Rack: e.Rack})
	}
	c.reply(resp)
}
