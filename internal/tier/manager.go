package tier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// PartitionLog is what the remote log manager needs of a local partition
// log. internal/server adapts internal/log and internal/partition to it.
type PartitionLog interface {
	// ClosedSegments returns the closed local segments, oldest first.
	ClosedSegments() []LocalSegment
	// LastStableOffset is the partition's LSO: nothing at or above it is
	// copied.
	LastStableOffset() int64
	// LogStartOffset is the partition's log start offset, which
	// DeleteRecords moves: remote segments wholly below it expire.
	LogStartOffset() int64
	// LocalSizeBytes is the size of every local segment, the active one
	// included.
	LocalSizeBytes() int64
	// LeaderEpochs is the leader-epoch cache.
	LeaderEpochs() []EpochEntry
	// ProducerSnapshotPath returns the producer snapshot file taken at
	// offset (a segment's end + 1), or "" when there is none.
	ProducerSnapshotPath(offset int64) string
}

// TopicSettings are a topic's tiered-storage configs as one task sees them.
type TopicSettings struct {
	RetentionMs    int64 // retention.ms, -1 unlimited
	RetentionBytes int64 // retention.bytes, -1 unlimited
	CopyDisable    bool  // remote.log.copy.disable
}

// Task is one run of the leader's remote log manager task for a partition,
// Kafka's RLMCopyTask and RLMExpirationTask in one.
type Task struct {
	Partition   Partition
	Log         PartitionLog
	LeaderEpoch int32
	Settings    TopicSettings
}

// TaskResult is what a task did.
type TaskResult struct {
	Copied    []SegmentMetadata
	Expired   []SegmentMetadata
	Collected int
	// View is the remote state after the task.
	View RemoteView
	// CopiedOffset is the highest offset copied (-1 for none): local
	// retention may delete local segments ending at or below it.
	CopiedOffset int64
	// CopyThrottled is set when the copy quota stopped the task's copies.
	CopyThrottled bool
	// ManifestErr is why the partition manifest could not be written; the
	// next task writes it again. The task's other work stands.
	ManifestErr error
}

// ManagerConfig configures a Manager.
type ManagerConfig struct {
	Store    *Store
	BrokerID int32
	// CopierThreads bounds concurrent uploads across partitions
	// (remote.log.manager.copier.thread.pool.size).
	CopierThreads int
	// OrphanGraceMs is how old an unfinished upload must be before it is
	// collected: longer than any upload takes. Samsa default: ten
	// remote.log.manager.task.interval.ms.
	OrphanGraceMs int64
	// CopyMaxBytesPerSecond is remote.log.manager.copy.max.bytes.per.second
	// (Long.MAX_VALUE, KIP-956): while the rate of bytes copied
	// (RateQuota) is at it, a task copies nothing more and the next task
	// goes on.
	CopyMaxBytesPerSecond int64
	// KeepUnreferenced keeps finished uploads outside the leader's lineage
	// instead of deleting them (samsa.tiered.restore.enable): a log that
	// could not be seeded from the bucket must not make its leader delete
	// the data it was to be restored from.
	KeepUnreferenced bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Manager runs remote log manager tasks.
type Manager struct {
	cfg       ManagerConfig
	copiers   chan struct{}
	copyQuota *RateQuota

	mu struct {
		sync.Mutex
		// written are the manifests last written, without their write
		// times, so a task writes one only when it changed.
		// Invariant: keys are partitions and topics this node leads or
		// led; Forget removes those of a deleted topic.
		partitions map[Partition]string
		topics     map[[16]byte]string
	}
}

// SetCopyMaxBytesPerSecond changes the copy quota (a dynamic update).
func (m *Manager) SetCopyMaxBytesPerSecond(limit int64) { m.copyQuota.SetLimit(limit) }

// NewManager returns a Manager.
func NewManager(cfg ManagerConfig) *Manager {
	if cfg.CopierThreads < 1 {
		cfg.CopierThreads = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m := &Manager{cfg: cfg, copiers: make(chan struct{}, cfg.CopierThreads), copyQuota: NewRateQuota(cfg.CopyMaxBytesPerSecond)}
	m.mu.partitions = map[Partition]string{}
	m.mu.topics = map[[16]byte]string{}
	return m
}

// ErrNotLeaderEpoch is returned when the log's leader epoch moved past the
// task's: the task stops, and a deposed leader copies nothing more.
var ErrNotLeaderEpoch = errors.New("tier: leader epoch changed; task fenced")

// Run performs one task: it reads the partition's remote state, copies the
// closed segments below the LSO the remote tier lacks, expires remote
// segments by total retention, DeleteRecords and fencing, and collects
// orphans. An error leaves everything done so far in place; the next task
// continues from the bucket's state.
func (m *Manager) Run(ctx context.Context, task Task) (TaskResult, error) {
	result := TaskResult{CopiedOffset: -1}
	view, err := m.view(ctx, task)
	if err != nil {
		return result, err
	}
	nowMs := m.cfg.Now().UnixMilli()
	for _, orphan := range OrphansToCollect(&view, m.cfg.OrphanGraceMs, nowMs) {
		if err := m.cfg.Store.DeleteUpload(ctx, orphan); err != nil {
			return result, err
		}
		result.Collected++
	}
	collect := view.Deleting
	if !m.cfg.KeepUnreferenced {
		collect = append(collect, view.Unreferenced...)
	}
	for _, upload := range collect {
		if err := m.cfg.Store.DeleteUpload(ctx, upload); err != nil {
			return result, err
		}
		result.Collected++
	}
	result.View = view
	result.CopiedOffset = view.EndOffset()
	if !task.Settings.CopyDisable {
		if err := m.copy(ctx, task, &result); err != nil {
			return result, err
		}
	}
	if err := m.expire(ctx, task, &result); err != nil {
		return result, err
	}
	manifest := manifestOf(task.Partition, &result.View, task.LeaderEpoch, m.cfg.BrokerID, task.Log.LogStartOffset())
	result.ManifestErr = m.writePartitionManifest(ctx, &manifest)
	return result, nil
}

// writePartitionManifest writes manifest unless the last one written for
// its partition says the same.
func (m *Manager) writePartitionManifest(ctx context.Context, manifest *PartitionManifest) error {
	p := Partition{manifest.TopicID, manifest.Partition}
	content := string(manifest.Encode())
	m.mu.Lock()
	same := m.mu.partitions[p] == content
	m.mu.Unlock()
	if same {
		return nil
	}
	stamped := *manifest
	stamped.WrittenMs = m.cfg.Now().UnixMilli()
	if err := m.cfg.Store.WritePartitionManifest(ctx, &stamped); err != nil {
		return err
	}
	m.mu.Lock()
	m.mu.partitions[p] = content
	m.mu.Unlock()
	return nil
}

// WriteTopicManifest writes a topic's manifest, as the leader of its
// partition 0 does after each task, unless the last one this node wrote
// says the same.
func (m *Manager) WriteTopicManifest(ctx context.Context, manifest TopicManifest) error {
	manifest.BrokerID, manifest.WrittenMs = m.cfg.BrokerID, 0
	content := string(manifest.Encode())
	m.mu.Lock()
	same := m.mu.topics[manifest.TopicID] == content
	m.mu.Unlock()
	if same {
		return nil
	}
	manifest.WrittenMs = m.cfg.Now().UnixMilli()
	if err := m.cfg.Store.WriteTopicManifest(ctx, &manifest); err != nil {
		return err
	}
	m.mu.Lock()
	m.mu.topics[manifest.TopicID] = content
	m.mu.Unlock()
	return nil
}

// Forget drops what the manager remembers of a topic's manifests (the
// topic was deleted, or this node stopped leading it), so the next task
// of a partition of it writes its manifest again.
func (m *Manager) Forget(topicID [16]byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mu.topics, topicID)
	for p := range m.mu.partitions {
		if p.TopicID == topicID {
			delete(m.mu.partitions, p)
		}
	}
}

func (m *Manager) view(ctx context.Context, task Task) (RemoteView, error) {
	uploads, err := m.cfg.Store.ListUploads(ctx, task.Partition)
	if err != nil {
		return RemoteView{}, err
	}
	return BuildView(uploads, task.Log.LeaderEpochs()), nil
}

// copy uploads the segments SegmentsToCopy selects, oldest first, each
// under a copier slot, stopping at the first failure so the remote tier
// never has a gap.
func (m *Manager) copy(ctx context.Context, task Task, result *TaskResult) error {
	local := task.Log.ClosedSegments()
	infos := make([]LocalSegmentInfo, len(local))
	for i, s := range local {
		infos[i] = LocalSegmentInfo{BaseOffset: s.BaseOffset, EndOffset: s.EndOffset, SizeBytes: s.SizeBytes, MaxTimestampMs: s.MaxTimestampMs}
	}
	toCopy := SegmentsToCopy(infos, task.Log.LastStableOffset(), result.CopiedOffset)
	for _, info := range toCopy {
		epochs := task.Log.LeaderEpochs()
		// The log learnt of a newer leader: this task's leader is deposed.
		if n := len(epochs); n > 0 && epochs[n-1].Epoch > task.LeaderEpoch {
			return ErrNotLeaderEpoch
		}
		if m.copyQuota.Exceeded(m.cfg.Now()) {
			result.CopyThrottled = true
			return nil
		}
		var seg LocalSegment
		for _, s := range local {
			if s.BaseOffset == info.BaseOffset {
				seg = s
			}
		}
		if path := task.Log.ProducerSnapshotPath(seg.EndOffset + 1); path != "" {
			seg.Files = withFile(seg.Files, FileProducerSnapshot, path)
		}
		select {
		case m.copiers <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		copied, err := m.cfg.Store.CopySegment(ctx, CopyRequest{Partition: task.Partition, Segment: seg,
			BrokerID: m.cfg.BrokerID, LeaderEpoch: task.LeaderEpoch, LeaderEpochs: epochs})
		<-m.copiers
		if err != nil {
			return fmt.Errorf("tier: copy segment %d: %w", seg.BaseOffset, err)
		}
		m.copyQuota.Record(m.cfg.Now(), copied.SegmentSizeBytes)
		result.Copied = append(result.Copied, copied)
		result.View.appendCopied(copied)
		result.CopiedOffset = copied.EndOffset
	}
	return nil
}

func withFile(files map[FileKind]string, kind FileKind, path string) map[FileKind]string {
	out := make(map[FileKind]string, len(files)+1)
	for k, v := range files {
		out[k] = v
	}
	out[kind] = path
	return out
}

// expire deletes the remote segments total retention no longer keeps.
func (m *Manager) expire(ctx context.Context, task Task, result *TaskResult) error {
	// Bytes not in the remote tier: closed segments past the copied
	// offset, and the active segment.
	var onlyLocal, closedBytes int64
	for _, s := range task.Log.ClosedSegments() {
		closedBytes += s.SizeBytes
		if s.EndOffset > result.CopiedOffset {
			onlyLocal += s.SizeBytes
		}
	}
	onlyLocal += max(0, task.Log.LocalSizeBytes()-closedBytes)
	expired := RemoteRetention(&result.View, onlyLocal, task.Settings.RetentionMs, task.Settings.RetentionBytes,
		task.Log.LogStartOffset(), m.cfg.Now().UnixMilli())
	for _, seg := range expired {
		upload := Upload{Dir: m.cfg.Store.SegmentDir(&seg), Metadata: seg, Finished: true}
		if err := m.cfg.Store.DeleteUpload(ctx, upload); err != nil {
			return err
		}
		result.Expired = append(result.Expired, seg)
	}
	result.View.Segments = result.View.Segments[len(expired):]
	return nil
}

// View returns a partition's readable remote state as the given leader
// epochs see it, without copying or expiring anything (a follower's task).
func (m *Manager) View(ctx context.Context, p Partition, epochs []EpochEntry) (RemoteView, error) {
	uploads, err := m.cfg.Store.ListUploads(ctx, p)
	if err != nil {
		return RemoteView{}, err
	}
	return BuildView(uploads, epochs), nil
}
