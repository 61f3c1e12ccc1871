package api

// ListOffsets (key 2), versions 1-11.
//
// Behavior:
//   - Timestamp -2 is the log start offset, -1 the latest offset (the high
//     watermark, or the last stable offset for read_committed v2+), -3 the
//     offset of the record with the largest timestamp (v7+, KIP-734), -4 the
//     earliest local offset (v8+; equal to the log start offset without
//     tiered storage). -5 (v9+, KIP-1005: the latest offset in remote
//     storage) and -6 (v11+, KIP-1023: the earliest offset pending upload)
//     answer offset -1 and timestamp -1, as Kafka does for a topic without
//     remote storage; tiered partitions: list_offsets_remote.go. Any other
//     timestamp finds the first record whose timestamp is at or after it
//     (decoding its batch), or offset -1 when there is none.
//   - v10 timeout_ms bounds remote-storage lookups (list_offsets_remote.go);
//     without remote storage every answer is immediate.
//   - v4+ current_leader_epoch is checked as in Fetch. A record found by
//     timestamp (or by -3) is answered with the leader epoch of the batch
//     that holds it, as Kafka does; -1 with the current epoch; -2 with the
//     first epoch of the leader-epoch cache when it starts at or before the
//     log start offset (else -1), and -4 with the epoch the log start offset
//     was written in, as Kafka's UnifiedLog answers them.
//   - Unknown partitions answer UNKNOWN_TOPIC_OR_PARTITION.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/log"
)

func init() { register(2, 1, 11, handleListOffsets) }

const (
	listLatest        = -1
	listEarliest      = -2
	listMaxTimestamp  = -3
	listEarliestLocal = -4
	// listLatestTiered (KIP-1005) and listEarliestPendingUpload (KIP-1023)
	// name offsets of remote storage, which Samsa's logs do not have yet.
	listLatestTiered          = -5
	listEarliestPendingUpload = -6
)

func handleListOffsets(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.ListOffsetsRequest)
	resp := kmsg.NewPtrListOffsetsResponse()
	readCommitted := c.version >= 2 && req.IsolationLevel == 1
	describable := b.topicChecker(c, opDescribe)
	var lookups []remoteTimestampLookup
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
			case listEarliest:
				sp.Offset = p.Log.LogStartOffset()
				sp.LeaderEpoch = earliestEpoch(p.Log.EpochCache(), sp.Offset, false)
			case listEarliestLocal:
				sp.Offset = p.Log.LocalLogStartOffset()
				sp.LeaderEpoch = earliestEpoch(p.Log.EpochCache(), sp.Offset, true)
			case listLatestTiered, listEarliestPendingUpload:
				sp.Offset, sp.LeaderEpoch = tieredListOffset(p, rp.Timestamp)
			case listMaxTimestamp:
				rec := p.Log.MaxTimestampRecord()
				if rec.Offset >= 0 && rec.Offset < p.HighWatermark() {
					sp.Timestamp, sp.Offset, sp.LeaderEpoch = rec.Timestamp, rec.Offset, rec.LeaderEpoch
				}
			default:
				if rp.Timestamp < 0 {
					sp.ErrorCode = kerr.InvalidRequest.Code
					break
				}
				if b.needsRemoteTimestampSearch(p, rp.Timestamp) {
					lookups = append(lookups, remoteTimestampLookup{topic: len(resp.Topics), index: len(st.Partitions), p: p, timestamp: rp.Timestamp})
					break
				}
				rec, found, err := p.Log.RecordForTimestamp(rp.Timestamp)
				switch {
				case err != nil:
					sp.ErrorCode = kerr.KafkaStorageError.Code
				case found && rec.Offset < p.HighWatermark():
					sp.Offset, sp.Timestamp, sp.LeaderEpoch = rec.Offset, rec.Timestamp, rec.LeaderEpoch
				}
			}
			if c.version == 0 && sp.Offset >= 0 {
				sp.OldStyleOffsets = []int64{sp.Offset}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if len(lookups) > 0 {
		b.listOffsetsRemote(c, req, resp, lookups)
		return
	}
	c.reply(resp)
}

// earliestEpoch is the leader epoch ListOffsets answers with the log start
// offset: for -2 (earliest) the first cached epoch if it starts at or before
// the log start offset, for -4 (earliest local) the epoch of that offset; -1
// when the cache does not know.
func earliestEpoch(epochs *log.EpochCache, logStartOffset int64, local bool) int32 {
	if epochs == nil {
		return -1
	}
	if local {
		if e, ok := epochs.EpochForOffset(logStartOffset); ok {
			return e
		}
		return -1
	}
	if entries := epochs.Entries(); len(entries) > 0 && entries[0].StartOffset <= logStartOffset {
		return entries[0].Epoch
	}
	return -1
}
