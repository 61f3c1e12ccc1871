package server

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/metrics"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/tier"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// openTierStore opens the bucket of the tiered-storage keys and its store,
// whose calls retry as remote.log.manager.task.retry.backoff.* says; the
// caller closes the bucket.
func openTierStore(ctx context.Context, cfg config.TierConfig) (blob.Bucket, *tier.Store, error) {
	bucket, err := blob.Open(ctx, cfg.BucketURL)
	if err != nil {
		return nil, nil, err
	}
	retrying := blob.Retrying(bucket, blob.RetryPolicy{Attempts: 5,
		BackoffMs: cfg.TaskRetryBackoffMs, BackoffMaxMs: cfg.TaskRetryBackoffMaxMs})
	return bucket, tier.NewStore(tier.StoreConfig{Bucket: retrying, Prefix: cfg.BucketPrefix}), nil
}

// startTier starts the remote log manager when remote.log.storage.system.enable
// is on; with it off nothing is opened and no goroutine runs, so produce and
// fetch pay nothing for tiered storage.
//
// Every remote.log.manager.task.interval.ms the loop runs one task for each
// partition this node leads of a topic with remote.storage.enable=true: it
// copies closed segments below the LSO and expires remote segments by total
// retention, then records the remote state for the remote reader and moves
// the log start offset up to the remote start once remote segments expired.
// Local segments are deleted by local.retention.* once copied (internal/log).
// For partitions this node follows, the loop lists the remote state so
// local retention of a follower deletes only copied segments too.
//
// Consumer fetches below the local log start are served by the remote
// reader (tier.Reader) through api.Broker.Remote.
func (n *Node) startTier(ctx context.Context, fsys vfs.FS) error {
	cfg := n.broker.StaticConfig.Tier
	if !cfg.RemoteLogStorageSystemEnable {
		return nil
	}
	bucket, store, err := openTierStore(ctx, cfg)
	if err != nil {
		return err
	}
	manager := tier.NewManager(tier.ManagerConfig{Store: store, BrokerID: n.broker.StaticConfig.NodeID,
		CopierThreads: int(cfg.CopierThreadPoolSize), OrphanGraceMs: 10 * cfg.TaskIntervalMs, CopyMaxBytesPerSecond: cfg.CopyMaxBytesPerSecond,
		KeepUnreferenced: cfg.RestoreEnable})
	cache, err := tier.NewCache(fsys, filepath.Join(n.broker.StaticConfig.LogDirs[0], remoteIndexCacheDir), cfg.IndexFileCacheTotalSizeBytes)
	if err != nil {
		bucket.Close()
		return err
	}
	reader := tier.NewReader(tier.ReaderConfig{Store: store, Cache: cache, Threads: int(cfg.ReaderThreads),
		MaxPendingTasks: int(cfg.ReaderMaxPendingTasks), FetchMaxBytesPerSecond: cfg.FetchMaxBytesPerSecond})
	n.broker.Remote = reader
	n.tier.reader.Store(reader)
	tierMetrics := n.metrics.TierMetrics()
	n.metrics.RegisterRemoteReader(func() metrics.RemoteReadStats {
		r := reader.Stats()
		size, entries, hits, misses := cache.Stats()
		return metrics.RemoteReadStats{QueueSize: r.QueueSize, FetchedBytes: r.FetchedBytes, ServedBytes: r.ServedBytes,
			Requests: r.Requests, Failures: r.Failures, CacheBytes: size, CacheEntries: entries, CacheHits: hits, CacheMisses: misses}
	})
	logger := n.logger.With("component", "tier")
	logger.Info("tiered storage enabled", "bucket", blob.Redact(cfg.BucketURL))
	n.goBackground(ctx, func(ctx context.Context) {
		defer bucket.Close()
		defer reader.Close()
		ticker := time.NewTicker(time.Duration(cfg.TaskIntervalMs) * time.Millisecond)
		defer ticker.Stop()
		tiered := map[metadata.UUID]*tieredTopic{}
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			n.applyDynamicTier(manager, cache, reader)
			n.runTierTasks(ctx, manager, store, reader, tierMetrics, tiered, logger)
		}
	})
	return nil
}

// runTierTasks runs one task per led tiered partition and deletes the
// remote data of tiered topics that no longer exist.
func (n *Node) runTierTasks(ctx context.Context, manager *tier.Manager, store *tier.Store, reader *tier.Reader, tierMetrics *metrics.Tier, tiered map[metadata.UUID]*tieredTopic, logger interface {
	Warn(string, ...any)
}) {
	img := n.broker.Image()
	for _, p := range n.partitions.All() {
		tc := p.Config()
		if tc == nil || p.Closed() {
			continue
		}
		part := tier.Partition{TopicID: p.TopicID, Partition: p.Index}
		if p.LeaderID() != n.broker.StaticConfig.NodeID {
			if tc.RemoteStorageEnable && !tc.RemoteLogCopyDisable {
				n.followTier(ctx, manager, reader, p, part, logger)
			}
			continue
		}
		if !tc.RemoteStorageEnable {
			reader.ForgetView(part)
			if topic := tiered[p.TopicID]; topic != nil && topic.partitions[p.Index] {
				p.Log.ClearRemoteGuard()
			}
			n.disableTiering(ctx, store, tierMetrics, tiered, p, tc.RemoteLogDeleteOnDisable, logger)
			continue
		}
		seen := tiered[p.TopicID]
		if seen == nil || !seen.partitions[p.Index] {
			// Until the first task reads the bucket, retention deletes
			// nothing of this partition.
			p.Log.SetRemoteCopiedOffset(-1)
		}
		if seen == nil {
			seen = &tieredTopic{name: p.Topic, partitions: map[int32]bool{}}
			tiered[p.TopicID] = seen
		}
		seen.partitions[p.Index] = true
		task := tier.Task{Partition: tier.Partition{TopicID: p.TopicID, Partition: p.Index},
			Log: partitionLog{p}, LeaderEpoch: p.LeaderEpoch(),
			Settings: tier.TopicSettings{RetentionMs: tc.RetentionMs, RetentionBytes: tc.RetentionBytes, CopyDisable: tc.RemoteLogCopyDisable}}
		if !tc.Delete() {
			task.Settings.RetentionMs, task.Settings.RetentionBytes = -1, -1
		}
		// A task may take long (a large segment on a slow link) but not
		// forever: a store that hangs gives up the task to the next one.
		taskCtx, cancel := context.WithTimeout(ctx, tierTaskTimeout)
		result, err := manager.Run(taskCtx, task)
		cancel()
		if err == nil {
			// The reader learns of new segments before local retention
			// may delete their local copies.
			reader.SetView(part, result.View)
		}
		switch {
		case tc.RemoteLogCopyDisable:
			// A topic that copies no more is deleted locally by
			// retention.* alone, as Kafka does (KIP-950).
			p.Log.ClearRemoteGuard()
		case err == nil || result.CopiedOffset >= 0:
			// What the bucket holds as far as the task got; a task that
			// could not even list the bucket leaves the guard as it was.
			p.Log.SetRemoteCopiedOffset(result.CopiedOffset)
		}
		if err == nil {
			n.advanceLogStart(p, &result.View, logger)
			n.writeTopicManifest(ctx, manager, img, p, logger)
		}
		if result.ManifestErr != nil && ctx.Err() == nil {
			logger.Warn("writing the partition manifest failed; retrying next interval", "partition", p.String(), "err", result.ManifestErr)
		}
		if err != nil && ctx.Err() == nil {
			logger.Warn("remote log manager task failed; retrying next interval", "partition", p.String(), "err", err)
		}
		tierMetrics.Observe(taskMetrics(p, task, result, err != nil))
	}
	for id, topic := range tiered {
		if img.TopicByID(id) != nil {
			continue
		}
		if err := store.DeleteTopic(ctx, id); err != nil {
			tierMetrics.DeleteFailed(topic.name)
			logger.Warn("deleting remote data of a deleted topic failed; retrying next interval", "err", err)
			continue
		}
		manager.Forget(id)
		for index := range topic.partitions {
			tierMetrics.Forget(topic.name, index)
			reader.ForgetView(tier.Partition{TopicID: id, Partition: index})
		}
		delete(tiered, id)
	}
}

// disableTiering handles a led partition whose topic had tiering on when
// this node last looked and has it off now: with
// remote.log.delete.on.disable=true its remote data is deleted (KIP-950),
// otherwise it is left for an operator to enable tiering again.
func (n *Node) disableTiering(ctx context.Context, store *tier.Store, tierMetrics *metrics.Tier, tiered map[metadata.UUID]*tieredTopic,
	p *partition.Partition, deleteOnDisable bool, logger interface{ Warn(string, ...any) }) {
	topic := tiered[p.TopicID]
	if topic == nil || !topic.partitions[p.Index] || !deleteOnDisable {
		return
	}
	err := store.DeletePartition(ctx, tier.Partition{TopicID: p.TopicID, Partition: p.Index})
	if err == nil && p.Index == 0 {
		// A topic with tiering off and its remote data deleted is not
		// one a restore brings back.
		err = store.DeleteTopicManifest(ctx, p.TopicID)
	}
	if err != nil {
		tierMetrics.DeleteFailed(p.Topic)
		logger.Warn("deleting remote data of a partition with tiering disabled failed; retrying next interval", "partition", p.String(), "err", err)
		return
	}
	tierMetrics.Forget(p.Topic, p.Index)
	delete(topic.partitions, p.Index)
}

// tieredTopic is a tiered topic this node has led partitions of, so its
// remote data can be deleted when the topic is.
type tieredTopic struct {
	name       string
	partitions map[int32]bool
}

// tierTaskTimeout bounds one remote log manager task. Samsa: 15 minutes,
// an upload of a 1 GiB segment at about 1 MB/s.
const tierTaskTimeout = 15 * time.Minute

// taskMetrics summarizes a task for the metrics.
func taskMetrics(p *partition.Partition, task tier.Task, result tier.TaskResult, failed bool) metrics.TierTask {
	m := metrics.TierTask{Topic: p.Topic, Partition: p.Index, Failed: failed,
		CopiedSegments:  int64(len(result.Copied)),
		DeletedSegments: int64(len(result.Expired) + result.Collected),
		RemoteSizeBytes: result.View.SizeBytes(), RemoteCount: int64(len(result.View.Segments))}
	for _, c := range result.Copied {
		m.CopiedBytes += c.SegmentSizeBytes
	}
	for _, s := range task.Log.ClosedSegments() {
		if s.EndOffset > result.CopiedOffset {
			m.CopyLagBytes += s.SizeBytes
			m.CopyLagSegments++
		}
	}
	return m
}

// partitionLog adapts a hosted partition to tier.PartitionLog.
type partitionLog struct{ p *partition.Partition }

func (a partitionLog) ClosedSegments() []tier.LocalSegment {
	closed := a.p.Log.ClosedSegments()
	out := make([]tier.LocalSegment, len(closed))
	for i, s := range closed {
		out[i] = tier.LocalSegment{BaseOffset: s.BaseOffset, EndOffset: s.EndOffset, SizeBytes: s.SizeBytes,
			MaxTimestampMs: s.MaxTimestampMs, Files: map[tier.FileKind]string{
				tier.FileSegment: s.LogPath, tier.FileOffsetIndex: s.IndexPath,
				tier.FileTimeIndex: s.TimeIndexPath, tier.FileTransactionIndex: s.TxnIndexPath}}
	}
	return out
}

func (a partitionLog) LastStableOffset() int64 { return a.p.LastStableOffset() }
func (a partitionLog) LogStartOffset() int64   { return a.p.Log.LogStartOffset() }
func (a partitionLog) LocalSizeBytes() int64   { return a.p.Log.Size() }

func (a partitionLog) LeaderEpochs() []tier.EpochEntry {
	entries := a.p.Log.EpochCache().Entries()
	out := make([]tier.EpochEntry, len(entries))
	for i, e := range entries {
		out[i] = tier.EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset}
	}
	return out
}

// ProducerSnapshotPath names Kafka's <offset %020d>.snapshot in the
// partition's directory when the log has a snapshot at offset.
func (a partitionLog) ProducerSnapshotPath(offset int64) string {
	offsets, err := a.p.Log.ProducerSnapshotOffsets()
	if err != nil || !slices.Contains(offsets, offset) {
		return ""
	}
	return filepath.Join(a.p.Log.Dir(), fmt.Sprintf("%020d.snapshot", offset))
}

// remoteIndexCacheDir is the cache of remote indexes and chunks under the
// first log directory, Kafka's remote-log-index-cache.
const remoteIndexCacheDir = "remote-log-index-cache"

// advanceLogStart moves a tiered partition's log start offset up to where
// its data begins once total retention expired remote segments: the remote
// start, or the local start when the remote tier is empty.
func (n *Node) advanceLogStart(p *partition.Partition, view *tier.RemoteView, logger interface{ Warn(string, ...any) }) {
	start := p.Log.LocalLogStartOffset()
	if remoteStart := view.StartOffset(); remoteStart >= 0 && remoteStart < start {
		start = remoteStart
	}
	if err := p.Log.AdvanceLogStartOffset(start); err != nil {
		logger.Warn("advancing the log start offset to the remote start failed", "partition", p.String(), "err", err)
	}
}

// followTier reads the remote state of a tiered partition this node
// follows, Kafka's follower task: the highest copied offset guards local
// retention, and the view serves reads if this node becomes leader.
func (n *Node) followTier(ctx context.Context, manager *tier.Manager, reader *tier.Reader, p *partition.Partition, part tier.Partition, logger interface{ Warn(string, ...any) }) {
	view, err := manager.View(ctx, part, partitionLog{p}.LeaderEpochs())
	if err != nil {
		if ctx.Err() == nil {
			logger.Warn("reading the remote state of a followed partition failed; retrying next interval", "partition", p.String(), "err", err)
		}
		return
	}
	reader.SetView(part, view)
	p.Log.SetRemoteCopiedOffset(view.EndOffset())
}

// writeTopicManifest writes, on the leader of partition 0 of a tiered
// topic, the topic's manifest: its id, partition count, replication factor
// and config overrides, what restoring the cluster from the bucket needs.
func (n *Node) writeTopicManifest(ctx context.Context, manager *tier.Manager, img *metadata.Image, p *partition.Partition, logger interface{ Warn(string, ...any) }) {
	if p.Index != 0 {
		return
	}
	t := img.TopicByID(p.TopicID)
	if t == nil || len(t.Partitions) == 0 || t.Partitions[0] == nil {
		return
	}
	manifest := tier.TopicManifest{Name: t.Name, TopicID: t.ID, Partitions: int32(len(t.Partitions)),
		ReplicationFactor: int16(len(t.Partitions[0].TargetReplicas())),
		Configs:           img.Configs(metadata.ResourceTopic, t.Name), LeaderEpoch: p.LeaderEpoch()}
	if err := manager.WriteTopicManifest(ctx, manifest); err != nil && ctx.Err() == nil {
		logger.Warn("writing the topic manifest failed; retrying next interval", "topic", t.Name, "err", err)
	}
}

// applyDynamicTier applies the dynamic tiered-storage broker configs.
func (n *Node) applyDynamicTier(manager *tier.Manager, cache *tier.Cache, reader *tier.Reader) {
	cfg := n.broker.Config().Tier
	manager.SetCopyMaxBytesPerSecond(cfg.CopyMaxBytesPerSecond)
	cache.SetMaxBytes(cfg.IndexFileCacheTotalSizeBytes)
	reader.SetFetchMaxBytesPerSecond(cfg.FetchMaxBytesPerSecond)
}

// tierState is what other layers of the node reach of tiered storage once
// it started: nil until then, and always when it is off.
type tierState struct {
	reader atomic.Pointer[tier.Reader]
	// restore is the bucket to restore from while
	// samsa.tiered.restore.enable is on, nil otherwise; set before the
	// broker starts, read by the metadata listener (tier_restore.go).
	restore *tier.Store
}

// remoteAuxState reads from the bucket what a follower needs to start its
// log at the leader's local log start (replication's
// OFFSET_MOVED_TO_TIERED_STORAGE handling).
func (n *Node) remoteAuxState(ctx context.Context, p *partition.Partition, localLogStartOffset, logStartOffset int64) (partition.RemoteAuxState, error) {
	reader := n.tier.reader.Load()
	if reader == nil {
		return partition.RemoteAuxState{}, fmt.Errorf("tiered storage is not running on this node")
	}
	aux, err := reader.AuxStateBefore(ctx, tier.Partition{TopicID: p.TopicID, Partition: p.Index}, localLogStartOffset)
	if err != nil {
		return partition.RemoteAuxState{}, err
	}
	state := partition.RemoteAuxState{LocalLogStartOffset: localLogStartOffset, LogStartOffset: logStartOffset, ProducerSnapshot: aux.ProducerSnapshot}
	for _, e := range aux.LeaderEpochs {
		state.LeaderEpochs = append(state.LeaderEpochs, log.EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset})
	}
	return state, nil
}
