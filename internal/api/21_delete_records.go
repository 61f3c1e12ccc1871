package api

// DeleteRecords (key 21), versions 0-2.
//
// Behavior:
//   - Moves the log start offset up to the given offset (-1 = the high
//     watermark) and deletes whole segments below it. An offset above the
//     high watermark answers OFFSET_OUT_OF_RANGE. The answer is the new low
//     watermark (log start offset).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(21, 0, 2, handleDeleteRecords) }

func handleDeleteRecords(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DeleteRecordsRequest)
	resp := kmsg.NewPtrDeleteRecordsResponse()
	deletable := b.topicChecker(c, opDelete)
	for _, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LowWatermark = -1
			p := b.Partitions.Get(rt.Topic, rp.Partition)
			if !deletable.allowed(rt.Topic) {
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			} else if p == nil {
				sp.ErrorCode = notHostedError(b, rt.Topic, rp.Partition).Code
			} else if low, kerrCode := p.DeleteRecordsBefore(rp.Offset); kerrCode != nil {
				sp.ErrorCode = kerrCode.Code
			} else {
				sp.LowWatermark = low
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.reply(resp)
}
