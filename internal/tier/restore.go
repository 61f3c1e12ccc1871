package tier

import (
	"context"
	"errors"
	"fmt"
)

// Restoring a cluster from its bucket (samsa.tiered.restore.enable) takes
// two steps, one for the controller and one for each broker:
//
//  1. The active controller reads the cluster manifest (TopicsToRestore)
//     and creates every topic in it that the cluster lacks, under its old
//     topic id, so the bucket's keys still name it, with each partition's
//     leader epoch above every epoch the bucket holds for it: a new
//     leader's epoch entry then follows the old lineage instead of
//     clashing with it, and fencing keeps the old segments.
//  2. A broker given a replica of a tiered partition it has no log for
//     seeds the log from the bucket (RestorePoint) before opening it:
//     empty, starting after the last remote segment, with the lineage of
//     leader epochs and the producer snapshot of that segment and the log
//     start offset of the partition's manifest, as a follower rebuilding
//     its state from the remote tier does. Reads below it are remote reads.

// RestoreTopic is one topic of the cluster manifest with, for each
// partition, the highest leader epoch the bucket holds.
type RestoreTopic struct {
	Manifest TopicManifest
	// MaxLeaderEpochs[i] is the highest leader epoch of partition i in
	// the bucket, -1 when it has no data.
	MaxLeaderEpochs []int32
}

// TopicsToRestore reads every topic manifest of the bucket and the highest
// leader epoch of each of their partitions, from the partition manifests
// and the uploads' own metadata (the manifest may lag an upload). A topic
// manifest that does not decode is left out and returned in skipped, so
// one damaged object does not keep every other topic from coming back.
func (s *Store) TopicsToRestore(ctx context.Context) (topics []RestoreTopic, skipped []error, err error) {
	manifests, err := s.topicManifests(ctx, func(err error) { skipped = append(skipped, err) })
	if err != nil {
		return nil, skipped, err
	}
	out := make([]RestoreTopic, 0, len(manifests))
	for _, tm := range manifests {
		rt := RestoreTopic{Manifest: tm, MaxLeaderEpochs: make([]int32, tm.Partitions)}
		for i := range rt.MaxLeaderEpochs {
			top, err := s.maxLeaderEpoch(ctx, Partition{TopicID: tm.TopicID, Partition: int32(i)})
			if err != nil {
				return nil, skipped, err
			}
			rt.MaxLeaderEpochs[i] = top
		}
		out = append(out, rt)
	}
	return out, skipped, nil
}

// maxLeaderEpoch is the highest leader epoch any manifest or upload of p
// names, -1 for none.
func (s *Store) maxLeaderEpoch(ctx context.Context, p Partition) (int32, error) {
	top := int32(-1)
	manifest, ok, err := s.readPartitionManifestLenient(ctx, p)
	if err != nil {
		return 0, err
	}
	if ok {
		top = manifest.MaxLeaderEpoch()
	}
	uploads, err := s.ListUploads(ctx, p)
	if err != nil {
		return 0, err
	}
	for _, u := range uploads {
		top = max(top, u.Metadata.LeaderEpoch)
		for _, e := range u.Metadata.LeaderEpochs {
			top = max(top, e.Epoch)
		}
	}
	return top, nil
}

// RestoredLog is where a log restored from the bucket starts.
type RestoredLog struct {
	// LocalLogStartOffset is one past the last remote segment: the log
	// is empty and its next offset is this.
	LocalLogStartOffset int64
	// LogStartOffset is the partition's log start offset, in the remote
	// tier.
	LogStartOffset int64
	// LeaderEpochs is the last remote segment's leader-epoch checkpoint.
	LeaderEpochs []EpochEntry
	// ProducerSnapshot is the last remote segment's producer snapshot,
	// nil when it had none.
	ProducerSnapshot []byte
	// MaxLeaderEpoch is the highest leader epoch of p in the bucket.
	MaxLeaderEpoch int32
}

// RestorePoint reads where a log of p restored from the bucket starts;
// false when the bucket holds no readable segment of p.
//
// The segments are those of the lineage of the newest segment: the
// readable uploads as no leader yet sees them (BuildView with no epochs)
// give the last segment, its leader-epoch checkpoint is the lineage, and
// the uploads within it are what the restored leader will serve.
func (s *Store) RestorePoint(ctx context.Context, p Partition) (RestoredLog, bool, error) {
	uploads, err := s.ListUploads(ctx, p)
	if err != nil {
		return RestoredLog{}, false, err
	}
	readable := BuildView(uploads, nil)
	if len(readable.Segments) == 0 {
		return RestoredLog{}, false, nil
	}
	last := readable.Segments[len(readable.Segments)-1]
	raw, err := s.ReadFile(ctx, &last, FileLeaderEpochCheckpoint)
	if err != nil {
		return RestoredLog{}, false, fmt.Errorf("tier: leader-epoch checkpoint of %s: %w", s.SegmentDir(&last), err)
	}
	epochs, err := DecodeEpochCheckpoint(raw)
	if err != nil {
		return RestoredLog{}, false, fmt.Errorf("tier: %s: %w", s.SegmentDir(&last), err)
	}
	lineage := BuildView(uploads, epochs)
	if len(lineage.Segments) == 0 || lineage.EndOffset() != last.EndOffset {
		return RestoredLog{}, false, fmt.Errorf("tier: the last remote segment %s is outside its own lineage", s.SegmentDir(&last))
	}
	restored := RestoredLog{LocalLogStartOffset: last.EndOffset + 1, LogStartOffset: lineage.StartOffset(), LeaderEpochs: epochs}
	if restored.MaxLeaderEpoch, err = s.maxLeaderEpoch(ctx, p); err != nil {
		return RestoredLog{}, false, err
	}
	manifest, ok, err := s.readPartitionManifestLenient(ctx, p)
	if err != nil {
		return RestoredLog{}, false, err
	}
	if ok && manifest.LogStartOffset > restored.LogStartOffset && manifest.LogStartOffset <= restored.LocalLogStartOffset {
		// DeleteRecords moved the start inside the remote tier.
		restored.LogStartOffset = manifest.LogStartOffset
	}
	if hasFile(&last, FileProducerSnapshot) {
		if restored.ProducerSnapshot, err = s.ReadFile(ctx, &last, FileProducerSnapshot); err != nil {
			return RestoredLog{}, false, fmt.Errorf("tier: producer snapshot of %s: %w", s.SegmentDir(&last), err)
		}
	}
	return restored, true, nil
}

// readPartitionManifestLenient is ReadPartitionManifest for a restore: a
// manifest that does not decode counts as none, since the uploads' own
// metadata is the truth the manifest summarises; only the log start
// offset a DeleteRecords set inside the remote tier is then lost, and the
// log starts at the first remote segment.
func (s *Store) readPartitionManifestLenient(ctx context.Context, p Partition) (PartitionManifest, bool, error) {
	m, ok, err := s.ReadPartitionManifest(ctx, p)
	if errors.Is(err, ErrCorruptManifest) {
		return PartitionManifest{}, false, nil
	}
	return m, ok, err
}
