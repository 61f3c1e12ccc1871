package tier

import "sort"

// This file is the deterministic core of the remote log manager: what to
// copy, which local segments local retention may delete, which remote
// uploads total retention, DeleteRecords or fencing expire. It takes the
// partition's state and the time as arguments and does no I/O.

// LocalSegmentInfo describes one closed local segment to the planner.
type LocalSegmentInfo struct {
	BaseOffset     int64
	EndOffset      int64 // last offset, inclusive
	SizeBytes      int64
	MaxTimestampMs int64
}

// RemoteView is the readable remote state of a partition, built from a
// listing by BuildView.
//
// Invariant: Segments are finished, not being deleted, within the lineage
// of the epochs BuildView was given, ascending and not overlapping. A
// segment's EndOffset may be below its upload's, where a later upload
// serves the rest of its offsets; its object holds them all, so a read may
// return batches past EndOffset, which equal the later upload's (both
// were copied below the high watermark).
type RemoteView struct {
	Segments []SegmentMetadata
	// Unreferenced are finished uploads no reader may use: outside the
	// leader-epoch lineage, or overlapped by an upload of a higher epoch.
	Unreferenced []Upload
	// Orphans are uploads never finished (a leader died or was deposed
	// mid-upload), and Deleting are deletions to finish.
	Orphans  []Upload
	Deleting []Upload
}

// appendCopied adds a segment this leader has just uploaded, which ends
// past every served segment: segments it overlaps serve only the offsets
// before it, as BuildView would decide on the next listing.
func (v *RemoteView) appendCopied(m SegmentMetadata) {
	segments := make([]SegmentMetadata, 0, len(v.Segments)+1)
	for _, s := range v.Segments {
		if s.BaseOffset >= m.BaseOffset {
			continue // covered: unreferenced on the next listing
		}
		s.EndOffset = min(s.EndOffset, m.BaseOffset-1)
		segments = append(segments, s)
	}
	v.Segments = append(segments, m)
}

// StartOffset is the first offset of the remote tier, or -1 when it is
// empty.
func (v *RemoteView) StartOffset() int64 {
	if len(v.Segments) == 0 {
		return -1
	}
	return v.Segments[0].BaseOffset
}

// EndOffset is the last offset of the remote tier (Kafka's highest offset
// copied, the -5 latest-tiered answer minus one), or -1 when it is empty.
func (v *RemoteView) EndOffset() int64 {
	if len(v.Segments) == 0 {
		return -1
	}
	return v.Segments[len(v.Segments)-1].EndOffset
}

// SizeBytes is the total size of the readable remote segments.
func (v *RemoteView) SizeBytes() int64 {
	var total int64
	for _, m := range v.Segments {
		total += m.SegmentSizeBytes
	}
	return total
}

// Find returns the remote segment holding offset, if any.
func (v *RemoteView) Find(offset int64) (SegmentMetadata, bool) {
	i := sort.Search(len(v.Segments), func(i int) bool { return v.Segments[i].EndOffset >= offset })
	if i < len(v.Segments) && v.Segments[i].BaseOffset <= offset {
		return v.Segments[i], true
	}
	return SegmentMetadata{}, false
}

// BuildView sorts a partition's uploads into what may be read and what is
// to be collected. epochs is the current leader's epoch cache; nil accepts
// every lineage (a broker restoring from the bucket has no cache yet).
func BuildView(uploads []Upload, epochs []EpochEntry) RemoteView {
	var v RemoteView
	var candidates []Upload
	for _, u := range uploads {
		switch {
		case u.DeleteStarted:
			v.Deleting = append(v.Deleting, u)
		case !u.Finished:
			v.Orphans = append(v.Orphans, u)
		case epochs != nil && !withinLineage(&u.Metadata, epochs):
			v.Unreferenced = append(v.Unreferenced, u)
		default:
			candidates = append(candidates, u)
		}
	}
	// Of overlapping uploads the higher leader epoch wins, then the later.
	sort.SliceStable(candidates, func(i, j int) bool {
		a, b := &candidates[i].Metadata, &candidates[j].Metadata
		if a.LeaderEpoch != b.LeaderEpoch {
			return a.LeaderEpoch > b.LeaderEpoch
		}
		return a.EventTimestampMs > b.EventTimestampMs
	})
	// A losing upload still serves the offsets before the first winner it
	// overlaps: a leader copies a closed segment that ends past the remote
	// end even when it starts inside it (its segments rolled elsewhere
	// than the old leader's), and the offsets before that segment are
	// served only by the older upload. Only an upload whose first offset
	// is covered is unreferenced, as Kafka keeps a segment while an epoch's
	// offsets still map to it.
	var chosen []SegmentMetadata
	for _, u := range candidates {
		m, served := u.Metadata, true
		for _, c := range chosen {
			if m.BaseOffset <= c.EndOffset && c.BaseOffset <= m.EndOffset {
				if c.BaseOffset <= m.BaseOffset {
					served = false
					break
				}
				m.EndOffset = c.BaseOffset - 1
			}
		}
		if !served {
			v.Unreferenced = append(v.Unreferenced, u)
			continue
		}
		chosen = append(chosen, m)
	}
	sort.Slice(chosen, func(i, j int) bool { return chosen[i].BaseOffset < chosen[j].BaseOffset })
	v.Segments = chosen
	return v
}

// withinLineage reports whether every epoch of the upload is one of the
// leader's, starting where the leader's does (or, for the first, where the
// segment begins inside it), and the upload ends before the leader's next
// epoch begins: Kafka's isRemoteSegmentWithinLeaderEpochs.
func withinLineage(m *SegmentMetadata, epochs []EpochEntry) bool {
	if len(m.LeaderEpochs) == 0 {
		return false
	}
	for i, e := range m.LeaderEpochs {
		j := sort.Search(len(epochs), func(j int) bool { return epochs[j].Epoch >= e.Epoch })
		if j == len(epochs) || epochs[j].Epoch != e.Epoch {
			return false
		}
		if i > 0 && epochs[j].StartOffset != e.StartOffset {
			return false
		}
		if i == len(m.LeaderEpochs)-1 && j+1 < len(epochs) && epochs[j+1].StartOffset <= m.EndOffset {
			return false
		}
	}
	return true
}

// SegmentsToCopy returns the closed local segments to upload, oldest
// first: those past the remote end whose last offset is below the last
// stable offset, so no open transaction's data is tiered before it
// resolves. local must be ascending.
func SegmentsToCopy(local []LocalSegmentInfo, lastStableOffset, remoteEndOffset int64) []LocalSegmentInfo {
	var out []LocalSegmentInfo
	for _, s := range local {
		if s.EndOffset <= remoteEndOffset {
			continue
		}
		if s.EndOffset >= lastStableOffset {
			break
		}
		out = append(out, s)
	}
	return out
}

// LocalRetention returns how many of the oldest closed local segments
// local retention deletes: only segments already in the remote tier
// (EndOffset <= remoteEndOffset), while the local size is above
// localRetentionBytes or the segment is older than localRetentionMs
// (-1 disables either). totalLocalBytes includes the active segment.
func LocalRetention(local []LocalSegmentInfo, remoteEndOffset, totalLocalBytes, localRetentionMs, localRetentionBytes, nowMs int64) int {
	n := 0
	size := totalLocalBytes
	for _, s := range local {
		if s.EndOffset > remoteEndOffset {
			break
		}
		bySize := localRetentionBytes >= 0 && size-s.SizeBytes >= localRetentionBytes
		byTime := localRetentionMs >= 0 && nowMs-s.MaxTimestampMs > localRetentionMs
		if !bySize && !byTime {
			break
		}
		size -= s.SizeBytes
		n++
	}
	return n
}

// RemoteRetention returns the remote segments total retention expires,
// oldest first: older than retentionMs by max timestamp, beyond
// retentionBytes counting the remote segments and the local bytes not yet
// copied (onlyLocalBytes), or wholly below logStartOffset (DeleteRecords).
// -1 disables a limit.
func RemoteRetention(view *RemoteView, onlyLocalBytes, retentionMs, retentionBytes, logStartOffset, nowMs int64) []SegmentMetadata {
	var out []SegmentMetadata
	size := view.SizeBytes() + onlyLocalBytes
	for _, m := range view.Segments {
		bySize := retentionBytes >= 0 && size-m.SegmentSizeBytes >= retentionBytes
		byTime := retentionMs >= 0 && nowMs-m.MaxTimestampMs > retentionMs
		byStart := m.EndOffset < logStartOffset
		if !bySize && !byTime && !byStart {
			break
		}
		size -= m.SegmentSizeBytes
		out = append(out, m)
	}
	return out
}

// OrphansToCollect returns the orphans older than graceMs: uploads whose
// leader had time to finish them and did not.
func OrphansToCollect(view *RemoteView, graceMs, nowMs int64) []Upload {
	var out []Upload
	for _, u := range view.Orphans {
		if nowMs-u.Metadata.EventTimestampMs > graceMs {
			out = append(out, u)
		}
	}
	return out
}
