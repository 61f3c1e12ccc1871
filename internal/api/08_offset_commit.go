package api

// OffsetCommit (key 8), versions 2-10, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - Group commits check the generation and member id (ILLEGAL_GENERATION,
//     UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS); simple
//     commits (generation -1) are accepted for groups without members.
//   - Metadata longer than offset.metadata.max.bytes answers
//     OFFSET_METADATA_TOO_LARGE; a topic or partition the metadata does not have answers
//     UNKNOWN_TOPIC_OR_PARTITION for that partition (v10: an unknown topic
//     id UNKNOWN_TOPIC_ID) and the rest of the request is committed, as
//     Kafka 4.x checks before the group coordinator.
//   - v10 names topics by id.
//   - Commits are records in __consumer_offsets, in Kafka's schema,
//     appended with acks=-1: answered once every in-sync replica has them;
//     COORDINATOR_NOT_AVAILABLE when the ISR is below min.insync.replicas
//     or the replicas do not confirm within request.timeout.ms.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(8, 2, 10, handleOffsetCommit) }

func handleOffsetCommit(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.OffsetCommitRequest)
	// Authorization first, then existence, as in Kafka.
	if !b.authorizeOffsetCommit(c, req) {
		return
	}
	rejected := splitUnknownCommitPartitions(b.Image(), req)
	if len(req.Topics) == 0 && len(rejected) > 0 {
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		mergeCommitAnswers(resp, rejected)
		c.reply(resp)
		return
	}
	offHandler(func() {
		b.Groups.OffsetCommit(req, func(resp *kmsg.OffsetCommitResponse) {
			mergeCommitAnswers(resp, rejected)
			c.reply(resp)
		})
	})
}
