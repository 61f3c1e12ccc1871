package api

// ListOffsets (key 2) on tiered partitions (KIP-405, KIP-1005, KIP-1023,
// KIP-1075).
//
// Behavior:
//   - -2 (earliest) is the log start offset, which on a tiered partition
//     lies in the remote tier; -4 (earliest local) the first offset of the
//     local segments.
//   - -5 (latest tiered) is the highest offset copied to the remote tier,
//     -1 when none is, with the leader epoch of that offset.
//   - -6 (earliest pending upload) is the offset after the highest copied
//     one (at least the log start offset); with nothing copied the log
//     start offset when the local log starts there, else -1 (this leader
//     has not read the remote state yet); -1 on an untiered topic.
//   - A timestamp whose first record may be in the remote tier (a remote
//     segment's max timestamp reaches it) is looked up there on the remote
//     reader pool, never on a request handler: its time index, then its
//     batches. When the remote tier has no record that late the local log
//     is searched. The response waits up to the request's timeout_ms (v10+)
//     or remote.list.offsets.request.timeout.ms and then answers the
//     partitions still looking REQUEST_TIMED_OUT, as Kafka's
//     DelayedRemoteListOffsets.

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/tier"
)

// tieredListOffset answers -5 and -6.
func tieredListOffset(p *partition.Partition, timestamp int64) (offset int64, epoch int32) {
	tc := p.Config()
	if tc == nil || !tc.RemoteStorageEnable {
		return -1, -1
	}
	copied := p.Log.RemoteCopiedOffset()
	epochAt := func(offset int64) int32 {
		if e, ok := p.Log.EpochCache().EpochForOffset(offset); ok {
			return e
		}
		return -1
	}
	if timestamp == listLatestTiered {
		if copied < 0 {
			return -1, -1
		}
		return copied, epochAt(copied)
	}
	if tc.RemoteLogCopyDisable {
		return -1, -1
	}
	if copied < 0 {
		if start := p.Log.LogStartOffset(); p.Log.LocalLogStartOffset() == start {
			return start, earliestEpoch(p.Log.EpochCache(), start, false)
		}
		return -1, -1
	}
	pending := max(copied+1, p.Log.LogStartOffset())
	return pending, epochAt(pending)
}

// needsRemoteTimestampSearch reports whether a timestamp lookup of p must
// go to the remote tier.
func (b *Broker) needsRemoteTimestampSearch(p *partition.Partition, timestamp int64) bool {
	tc := p.Config()
	if b.Remote == nil || tc == nil || !tc.RemoteStorageEnable || p.Log.LogStartOffset() >= p.Log.LocalLogStartOffset() {
		return false
	}
	return b.Remote.NeedsRemoteTimestampSearch(tier.Partition{TopicID: p.TopicID, Partition: p.Index}, timestamp, p.Log.LogStartOffset())
}

// remoteTimestampLookup is one partition of a ListOffsets response waiting
// for the remote tier: resp.Topics[topic].Partitions[index].
type remoteTimestampLookup struct {
	topic, index int
	p            *partition.Partition
	timestamp    int64
}

// listOffsetsRemote answers resp once every lookup is done or the timeout
// passes.
func (b *Broker) listOffsetsRemote(c *call, req *kmsg.ListOffsetsRequest, resp *kmsg.ListOffsetsResponse, lookups []remoteTimestampLookup) {
	timeoutMs := b.Config().Tier.ListOffsetsRequestTimeoutMs
	if c.version >= 10 && req.TimeoutMillis > 0 {
		timeoutMs = int64(req.TimeoutMillis)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeoutMs)*time.Millisecond)
	var mu sync.Mutex
	finished := make([]bool, len(lookups))
	pending := len(lookups)
	answered := false
	answer := func() {
		answered = true
		cancel()
		c.reply(resp)
	}
	var timer *time.Timer
	finish := func(i int, fill func(sp *kmsg.ListOffsetsResponseTopicPartition)) {
		mu.Lock()
		defer mu.Unlock()
		if answered || finished[i] {
			return
		}
		l := lookups[i]
		fill(&resp.Topics[l.topic].Partitions[l.index])
		finished[i] = true
		if pending--; pending == 0 {
			timer.Stop()
			answer()
		}
	}
	mu.Lock()
	timer = time.AfterFunc(time.Duration(timeoutMs)*time.Millisecond, func() {
		mu.Lock()
		defer mu.Unlock()
		if answered {
			return
		}
		for i, l := range lookups {
			if !finished[i] {
				resp.Topics[l.topic].Partitions[l.index].ErrorCode = kerr.RequestTimedOut.Code
			}
		}
		answer()
	})
	mu.Unlock()
	for i, l := range lookups {
		part := tier.Partition{TopicID: l.p.TopicID, Partition: l.p.Index}
		err := b.Remote.Go(ctx, func(ctx context.Context, err error) {
			var found tier.TimestampedOffset
			ok := false
			if err == nil {
				found, ok, err = b.Remote.OffsetForTimestamp(ctx, part, l.timestamp, l.p.Log.LogStartOffset())
			}
			finish(i, func(sp *kmsg.ListOffsetsResponseTopicPartition) { fillTimestampResult(sp, l, found, ok, err) })
		})
		if err != nil {
			finish(i, func(sp *kmsg.ListOffsetsResponseTopicPartition) { sp.ErrorCode = kerr.UnknownServerError.Code })
		}
	}
}

func fillTimestampResult(sp *kmsg.ListOffsetsResponseTopicPartition, l remoteTimestampLookup, found tier.TimestampedOffset, ok bool, err error) {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		sp.ErrorCode = kerr.RequestTimedOut.Code
	case err != nil:
		sp.ErrorCode = kerr.KafkaStorageError.Code
	case ok && found.Offset < l.p.HighWatermark():
		sp.Offset, sp.Timestamp, sp.LeaderEpoch = found.Offset, found.TimestampMs, found.LeaderEpoch
	case !ok:
		// Nothing that late remotely: the local log.
		rec, localFound, err := l.p.Log.RecordForTimestamp(l.timestamp)
		switch {
		case err != nil:
			sp.ErrorCode = kerr.KafkaStorageError.Code
		case localFound && rec.Offset < l.p.HighWatermark():
			sp.Offset, sp.Timestamp, sp.LeaderEpoch = rec.Offset, rec.Timestamp, rec.LeaderEpoch
		}
	}
}
