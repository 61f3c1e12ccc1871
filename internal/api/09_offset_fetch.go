package api

// OffsetFetch (key 9), versions 1-10, served by the group coordinator
// (internal/group).
//
// Behavior:
//   - A null topic list returns every committed offset of the group.
//   - An unknown group, or a partition without a commit, answers offset -1
//     with no error, as Kafka does.
//   - v8+ batches groups.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(9, 1, 10, handleOffsetFetch) }

func handleOffsetFetch(b *Broker, c *call, r kmsg.Request) {
	b.authorizeOffsetFetch(c, r.(*kmsg.OffsetFetchRequest))
	offHandler(func() {
		b.Groups.OffsetFetch(r.(*kmsg.OffsetFetchRequest), func(resp *kmsg.OffsetFetchResponse) { c.reply(resp) })
	})
}
