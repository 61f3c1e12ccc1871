package server

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/tier"
)

// startRestore opens the bucket to restore from when
// samsa.tiered.restore.enable is on (internal/tier's restore.go tells the
// two steps): on a node with the controller role a loop creates the
// bucket's topics once this node is the active controller, and on a broker
// restoreLogs seeds the logs of its replicas of them before they open.
func (n *Node) startRestore(ctx context.Context) error {
	cfg := n.cfg.Tier
	if !cfg.RestoreEnable {
		return nil
	}
	bucket, store, err := openTierStore(ctx, cfg)
	if err != nil {
		return err
	}
	n.tier.restore = store
	logger := n.logger.With("component", "tier-restore")
	logger.Info("restoring tiered topics from the bucket", "bucket", blob.Redact(cfg.BucketURL))
	n.goBackground(ctx, func(ctx context.Context) {
		defer bucket.Close()
		if n.cfg.IsController() {
			n.runRestore(ctx, store, logger)
		}
		<-ctx.Done()
	})
	return nil
}

// runRestore reads the bucket's topics once, then, every
// remote.log.manager.task.interval.ms while this node is the active
// controller, creates those the cluster lacks, until the image holds every
// one of them (by id, or a topic of the same name the cluster had before):
// then the loop ends on every controller, so a topic deleted later is not
// brought back while the key is still on.
func (n *Node) runRestore(ctx context.Context, store *tier.Store, logger *slog.Logger) {
	ticker := time.NewTicker(time.Duration(max(n.cfg.Tier.TaskIntervalMs, 1)) * time.Millisecond)
	defer ticker.Stop()
	var topics []controller.RestoreTopic
	read, waitingLogged := false, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if !read {
			found, skipped, err := store.TopicsToRestore(ctx)
			for _, bad := range skipped {
				logger.Error("a topic manifest in the bucket does not decode; that topic is not restored", "err", bad)
			}
			if err != nil {
				if ctx.Err() == nil {
					logger.Warn("reading the cluster manifest from the bucket failed; retrying next interval", "err", err)
				}
				continue
			}
			topics, read = restoreTopics(found), true
			logger.Info("cluster manifest read from the bucket", "topics", len(topics))
		}
		if restoredAll(n.controller.Image(), topics) {
			logger.Info("every topic of the bucket is in the cluster; restore finished")
			return
		}
		if leader, _ := n.metadata.Leader(); leader != n.cfg.NodeID {
			continue
		}
		results, err := n.controller.RestoreTopics(ctx, topics)
		if errors.Is(err, controller.ErrRestoreWaiting) {
			if !waitingLogged {
				logger.Info("waiting for brokers to restore the bucket's topics", "err", err)
				waitingLogged = true
			}
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				logger.Warn("restoring topics failed; retrying next interval", "err", err)
			}
			continue
		}
		for _, r := range results {
			switch r.ErrorCode {
			case 0:
				logger.Info("topic restored from the bucket", "topic", r.Name, "partitions", r.NumPartitions, "replication.factor", r.ReplicationFactor)
			default:
				logger.Warn("topic of the bucket not restored", "topic", r.Name, "err", r.ErrorMessage)
			}
		}
		// A topic that failed validation is never in the image: the
		// results say why, and nothing more is tried.
		return
	}
}

// restoreTopics turns the bucket's topics into the controller's, each
// partition's leader epoch one above the bucket's highest.
func restoreTopics(found []tier.RestoreTopic) []controller.RestoreTopic {
	out := make([]controller.RestoreTopic, 0, len(found))
	for _, rt := range found {
		t := controller.RestoreTopic{Name: rt.Manifest.Name, ID: metadata.UUID(rt.Manifest.TopicID),
			ReplicationFactor: rt.Manifest.ReplicationFactor, Configs: rt.Manifest.Configs,
			LeaderEpochs: make([]int32, len(rt.MaxLeaderEpochs))}
		for i, top := range rt.MaxLeaderEpochs {
			t.LeaderEpochs[i] = top + 1
		}
		out = append(out, t)
	}
	return out
}

// restoredAll reports whether img has a topic of the id or the name of each
// of topics.
func restoredAll(img *metadata.Image, topics []controller.RestoreTopic) bool {
	for _, t := range topics {
		if img.TopicByID(t.ID) == nil && img.Topic(t.Name) == nil {
			return false
		}
	}
	return true
}

// restoreLogTimeout bounds the bucket reads of seeding one log.
const restoreLogTimeout = 2 * time.Minute

// restoreLogs seeds from the bucket the log of every replica of a tiered
// topic in img this node hosts and has no log of, before Reconcile opens
// it: a partition whose bucket holds segments starts where they end. It
// runs in the metadata listener, ahead of Reconcile, so no partition of a
// restored topic opens at offset 0 first.
func (n *Node) restoreLogs(img *metadata.Image) {
	store := n.tier.restore
	if store == nil {
		return
	}
	for _, name := range img.TopicNames() {
		t := img.Topic(name)
		var cfg *config.TopicConfig
		for _, pm := range t.Partitions {
			if pm == nil || !slices.Contains(pm.Replicas, n.cfg.NodeID) {
				continue
			}
			tp := log.TopicPartition{Topic: name, Partition: pm.Partition}
			if n.logs.Get(tp) != nil {
				continue
			}
			if cfg == nil {
				cfg = n.topicConfig(img, name)
			}
			if !cfg.RemoteStorageEnable {
				break
			}
			n.restoreLog(store, tp, t.ID, cfg)
		}
	}
}

// restoreLog seeds one log from the bucket. On a failure the log is left
// absent, so the partition opens empty; the bucket's segments stay (the
// remote log manager keeps uploads outside its lineage while restore is
// on) for a later restore.
func (n *Node) restoreLog(store *tier.Store, tp log.TopicPartition, id metadata.UUID, cfg *config.TopicConfig) {
	logger := n.logger.With("component", "tier-restore", "partition", tp.String())
	ctx, cancel := context.WithTimeout(context.Background(), restoreLogTimeout)
	defer cancel()
	point, ok, err := store.RestorePoint(ctx, tier.Partition{TopicID: id, Partition: tp.Partition})
	if err != nil {
		logger.Error("reading the partition's restore point from the bucket failed; it opens empty", "err", err)
		return
	}
	if !ok {
		return
	}
	l, err := n.logs.Create(tp, id, partition.LogConfig(cfg))
	if err != nil {
		logger.Error("creating the restored log failed", "err", err)
		return
	}
	aux := partition.RemoteAuxState{LocalLogStartOffset: point.LocalLogStartOffset, LogStartOffset: point.LogStartOffset,
		ProducerSnapshot: point.ProducerSnapshot}
	for _, e := range point.LeaderEpochs {
		aux.LeaderEpochs = append(aux.LeaderEpochs, log.EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset})
	}
	if err := partition.SeedLogFromRemote(l, aux); err != nil {
		logger.Error("seeding the restored log failed; it opens empty", "err", err)
		if err := n.logs.Delete(tp); err != nil {
			logger.Warn("deleting the log that could not be seeded", "err", err)
		}
		return
	}
	logger.Info("partition restored from the bucket", "log.start.offset", point.LogStartOffset,
		"next.offset", point.LocalLogStartOffset, "bucket.max.leader.epoch", point.MaxLeaderEpoch)
}
