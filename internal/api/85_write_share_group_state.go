package api

// WriteShareGroupState (key 85), versions 0-1, served by the share
// coordinator to share-partition leaders.
//
// Behavior:
//   - Merges each write into the stored state: the start offset (unless
//     -1) and the state batches given replace what they cover; offsets
//     below the start offset are dropped. The answer waits for the
//     snapshot record to be appended to __share_group_state.
//   - FENCED_STATE_EPOCH / FENCED_LEADER_EPOCH when the stored state has
//     newer epochs.
//   - v1 adds DeliveryCompleteCount (KIP-1226), accepted and not stored:
//     ReadShareGroupStateSummary v1 answers -1 (unknown).
//   - NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS and CLUSTER_ACTION as
//     InitializeShareGroupState.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/share"
)

func init() { register(85, 0, 1, handleWriteShareGroupState) }

func handleWriteShareGroupState(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.WriteShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
	allowed := b.authorizeShareState(c)
	offHandler(func() {
		for _, t := range req.Topics {
			rt := kmsg.NewWriteShareGroupStateResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
				rp.Partition = p.Partition
				key := share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition}
				switch part, code := b.shareStatePartition(key); {
				case !allowed:
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				case code != 0:
					rp.ErrorCode = code
				default:
					batches, ok := shareStateBatches(p.StateBatches)
					if !ok {
						rp.ErrorCode = kerr.InvalidRequest.Code
						break
					}
					rp.ErrorCode = b.ShareStates.Write(part, key, p.StateEpoch, p.LeaderEpoch, p.StartOffset, batches)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		c.reply(resp)
	})
}

// shareStateBatches converts and validates written state batches: each
// first <= last, in order without overlaps, states 0, 2 or 4.
func shareStateBatches(in []kmsg.WriteShareGroupStateRequestTopicPartitionStateBatch) ([]share.StateBatch, bool) {
	out := make([]share.StateBatch, 0, len(in))
	for i, sb := range in {
		state := share.RecordState(sb.DeliveryState)
		if sb.FirstOffset > sb.LastOffset || sb.FirstOffset < 0 || (i > 0 && sb.FirstOffset <= in[i-1].LastOffset) ||
			(state != share.Available && state != share.Acknowledged && state != share.Archived) || sb.DeliveryCount < 0 {
			return nil, false
		}
		out = append(out, share.StateBatch{FirstOffset: sb.FirstOffset, LastOffset: sb.LastOffset, State: state, DeliveryCount: sb.DeliveryCount})
	}
	return out, true
}
