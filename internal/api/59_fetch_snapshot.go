package api

// FetchSnapshot (key 59), versions 0-1, on the controller listener: an
// observer too far behind for the entries a voter keeps in memory fetches a
// snapshot of the metadata image (KIP-630), then fetches the log after it.
//
// Behavior:
//   - The snapshot is the voter's image when a fetch first needed one
//     (01_fetch_metadata.go), named by SnapshotID: EndOffset is the offset
//     after the last entry it holds, Epoch the quorum epoch when it was
//     taken. A newer
//     one replaces it; asking for any other answers SNAPSHOT_NOT_FOUND.
//   - The bytes are the image in the metadata snapshot format (package
//     metadata), sent from Position on, at most MaxBytes at a time; Size is
//     the whole. A Position outside it answers POSITION_OUT_OF_RANGE.
//   - Only __cluster_metadata partition 0; others answer
//     UNKNOWN_TOPIC_OR_PARTITION.

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
)

func init() { registerController(59, 0, 1, handleFetchSnapshot) }

func handleFetchSnapshot(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.FetchSnapshotRequest)
	if !b.authorizeCluster(c, opClusterAction) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	resp := kmsg.NewPtrFetchSnapshotResponse()
	snap := b.snapshots.current()
	for _, rt := range req.Topics {
		st := kmsg.NewFetchSnapshotResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchSnapshotResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.SnapshotID.EndOffset, sp.SnapshotID.Epoch = rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch
			if b.Quorum != nil {
				leader, epoch := b.Quorum.Leader()
				sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = leader, int32(epoch)
			}
			switch {
			case rt.Topic != controller.MetadataTopic || rp.Partition != 0 || b.Quorum == nil:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case snap == nil || snap.endOffset != rp.SnapshotID.EndOffset || snap.epoch != rp.SnapshotID.Epoch:
				sp.ErrorCode = kerr.SnapshotNotFound.Code
			case rp.Position < 0 || rp.Position > int64(len(snap.data)):
				sp.ErrorCode = kerr.PositionOutOfRange.Code
			default:
				end := min(int64(len(snap.data)), rp.Position+int64(max(req.MaxBytes, 1)))
				sp.Size, sp.Position = int64(len(snap.data)), rp.Position
				sp.Bytes = snap.data[rp.Position:end]
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.reply(resp)
}

// metadataSnapshot is an image snapshot served to observers.
type metadataSnapshot struct {
	endOffset int64
	epoch     int32
	data      []byte
}

// snapshotCache holds the latest snapshot taken for observers, so that the
// chunks of one transfer come from the same snapshot.
type snapshotCache struct {
	mu   sync.Mutex
	snap *metadataSnapshot
}

// latest returns a snapshot of the controller's image now, reusing the
// cached one while the image has not moved.
func (s *snapshotCache) latest(c *controller.Controller, epoch int32) (*metadataSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	img := c.Image()
	if s.snap != nil && s.snap.endOffset == img.Offset+1 {
		return s.snap, nil
	}
	data, offset, err := c.Snapshot()
	if err != nil {
		return nil, err
	}
	s.snap = &metadataSnapshot{endOffset: offset + 1, epoch: epoch, data: data}
	return s.snap, nil
}

func (s *snapshotCache) current() *metadataSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}
