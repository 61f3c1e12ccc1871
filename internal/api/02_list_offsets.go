package api

// ListOffsets (key 2), versions 1-8.
//
// Behavior:
//   - Timestamp -2 is the log start offset, -1 the latest offset (the high
//     watermark, or the last stable offset for read_committed v2+), -3 the
//     offset of the record with the largest timestamp (v7+, KIP-734), -4 the
//     earliest local offset (v8+; equal to the log start offset without
//     tiered storage). Any other timestamp finds the first offset whose
//     timestamp is at or after it, or offset -1 when there is none.
//   - v4+ current_leader_epoch is checked as in Fetch.
//   - Unknown partitions answer UNKNOWN_TOPIC_OR_PARTITION.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(2, 1, 8, handleListOffsets) }

const (
	listLatest        = -1
	listEarliest      = -2
	listMaxTimestamp  = -3
	listEarliestLocal = -4
)

func handleListOffsets(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ListOffsetsRequest)
	resp := kmsg.NewPtrListOffsetsResponse()
	readCommitted := c.version >= 2 && req.IsolationLevel == 1
	describable := b.topicChecker(c, opDescribe)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.Timestamp = -1
			sp.Offset = -1
			sp.LeaderEpoch = -1
			if !describable.allowed(rt.Topic) {
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			p := b.Partitions.Get(rt.Topic, rp.Partition)
			if p == nil {
				sp.ErrorCode = notHostedError(b, rt.Topic, rp.Partition).Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			if c.version >= 4 {
				if code := checkLeaderEpoch(p, rp.CurrentLeaderEpoch); code != 0 {
					sp.ErrorCode = code
					st.Partitions = append(st.Partitions, sp)
					continue
				}
			}
			epoch := p.LeaderEpoch()
			switch rp.Timestamp {
			case listLatest:
				sp.Offset = p.HighWatermark()
				if readCommitted {
					sp.Offset = p.LastStableOffset()
				}
				sp.LeaderEpoch = epoch
			case listEarliest, listEarliestLocal:
				sp.Offset = p.Log.LogStartOffset()
				sp.LeaderEpoch = epoch
			case listMaxTimestamp:
				ts, off := p.Log.MaxTimestampOffset()
				if off >= 0 && off < p.HighWatermark() {
					sp.Timestamp, sp.Offset, sp.LeaderEpoch = ts, off, epoch
				}
			default:
				if rp.Timestamp < 0 {
					sp.ErrorCode = kerr.InvalidRequest.Code
					break
				}
				off, ts, found, err := p.Log.OffsetForTimestamp(rp.Timestamp)
				switch {
				case err != nil:
					sp.ErrorCode = kerr.KafkaStorageError.Code
				case found && off < p.HighWatermark():
					sp.Offset, sp.Timestamp, sp.LeaderEpoch = off, ts, epoch
				}
			}
			if c.version == 0 && sp.Offset >= 0 {
				sp.OldStyleOffsets = []int64{sp.Offset}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.reply(resp)
}
