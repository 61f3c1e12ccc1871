package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/api"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/group"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/txn"
)

// setupTransactions creates the transaction coordinator and hands it to
// the API handlers. Call it after the group coordinator exists.
func (n *Node) setupTransactions(logger *slog.Logger) {
	cfg := n.cfg
	n.txnPeers = newBrokerClients(n.controller.Image, int64(cfg.RequestTimeoutMs))
	n.txnPeers.clientOptions = mustClientOptions(interBrokerClientOptions(cfg))
	n.txn = txn.NewCoordinator(txn.Config{
		NumPartitions: func() int32 {
			if t := n.controller.Image().Topic(controller.TransactionStateTopic); t != nil {
				return int32(len(t.Partitions))
			}
			return cfg.TransactionStateLogNumPartitions
		},
		PartitionFor: group.PartitionFor,
		MaxTimeoutMs: cfg.TransactionMaxTimeoutMs,
		// The finalized transaction.version (2, KIP-890 transactions v2,
		// unless UpdateFeatures changed it), which clients opt into.
		TransactionVersion: func() int8 {
			return int8(n.controller.Image().FeatureLevel(metadata.TransactionVersionFeature))
		},
		TransactionalIDExpirationMs: int64(cfg.TransactionalIDExpirationMs),
		AbortTimedOutIntervalMs:     int64(cfg.TransactionAbortTimedOutTransactionCleanupIntervalMs),
		RemoveExpiredIntervalMs:     int64(cfg.TransactionRemoveExpiredTransactionCleanupIntervalMs),
		NewProducerID:               n.broker.NextProducerID,
		Logger:                      logger,
	}, txnStateStorage{partitions: n.partitions, timeoutMs: cfg.RequestTimeoutMs}, newMarkerSender(cfg.NodeID, n.broker, n.controller.Image, n.txnPeers.Request, logger))
	n.broker.Txn = n.txn
	n.broker.SendToBroker = n.txnPeers.Request
	n.txnElections = &txnElections{nodeID: cfg.NodeID, txn: n.txn}
}

// startTransactionTimers runs the coordinator's timers and the producer-id
// expiration check (producer.id.expiration.check.interval.ms).
func (n *Node) startTransactionTimers(ctx context.Context) {
	n.txn.Start()
	interval := time.Duration(n.cfg.ProducerIDExpirationCheckIntervalMs) * time.Millisecond
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				if expired := n.partitions.ExpireProducers(now.UnixMilli(), int64(n.broker.Config().ProducerIDExpirationMs)); expired > 0 {
					n.logger.Debug("expired idle producer ids", "count", expired)
				}
			}
		}
	}()
}

// stopTransactions stops the transaction coordinator; call it once no
// request can arrive and before the logs close.
func (n *Node) stopTransactions() {
	if n.txn != nil {
		n.txn.Close()
	}
	if n.txnPeers != nil {
		n.txnPeers.close()
	}
}

// txnStateStorage is the transaction coordinator's view of
// __transaction_state: appends go through the partition like the group
// coordinator's, with the coordinator's origin, and with acks=-1 as
// Kafka's coordinator writes them: an append returns once every in-sync
// replica has the record, so what the coordinator answered survives its
// node (bounded by request.timeout.ms).
type txnStateStorage struct {
	partitions *partition.Manager
	timeoutMs  int32
}

func (s txnStateStorage) partition(p int32) (*partition.Partition, error) {
	part := s.partitions.Get(controller.TransactionStateTopic, p)
	if part == nil {
		return nil, kerr.NotLeaderForPartition
	}
	return part, nil
}

// Append implements txn.Storage.
func (s txnStateStorage) Append(p int32, key, value []byte) error {
	part, err := s.partition(p)
	if err != nil {
		return err
	}
	batch, err := buildBatch([]record.Record{{Key: key, Value: value}})
	if err != nil {
		return err
	}
	_, err = appendReplicated(part, batch, s.timeoutMs)
	return err
}

// awaitReplicated blocks until every in-sync replica of part has the
// record at lastOffset, or returns the Kafka error that stopped it.
func awaitReplicated(part *partition.Partition, lastOffset int64, timeoutMs int32) error {
	var code int16
	done := make(chan struct{})
	api.AwaitReplicated([]api.ReplicaWait{api.NewReplicaWait(part, lastOffset, &code)},
		time.Duration(timeoutMs)*time.Millisecond, func() { close(done) })
	<-done
	if code != 0 {
		return kerr.ErrorForCode(code)
	}
	return nil
}

// Load implements txn.Storage.
func (s txnStateStorage) Load(p int32, fn func(key, value []byte) error) error {
	part, err := s.partition(p)
	if err != nil {
		return err
	}
	// To the log end, not the high watermark, as Kafka loads a
	// coordinator partition: a new leader's high watermark lags until
	// its followers fetch again, and the records past it were replicated
	// to it, possibly acknowledged by the coordinator it replaces.
	return replayLog(part.Log, part.Log.LogEndOffset(), func(_ int64, r record.Record) error {
		return fn(r.Key, r.Value)
	})
}

// appendInternal appends a batch the broker built itself and returns the
// offset of its last record.
func appendInternal(part *partition.Partition, batch []byte) (int64, error) {
	h, err := record.ParseHeader(batch)
	if err != nil {
		return 0, err
	}
	res, kafkaErr, err := part.AppendWith(batch, h, partition.AppendOptions{LogAppendTime: -1, Origin: partition.OriginCoordinator})
	if kafkaErr != nil {
		if err != nil {
			return 0, fmt.Errorf("%w: %v", kafkaErr, err)
		}
		return 0, kafkaErr
	}
	return res.BaseOffset + int64(h.LastOffsetDelta), nil
}

// txnElections tells the transaction coordinator which __transaction_state
// partitions this node leads, and at which leader epoch (the coordinator
// epoch), as the metadata image changes.
type txnElections struct {
	nodeID int32
	txn    *txn.Coordinator

	mu  sync.Mutex
	led map[int32]int32 // partition -> leader epoch
}

func (e *txnElections) apply(img *metadata.Image) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := map[int32]int32{}
	if t := img.Topic(controller.TransactionStateTopic); t != nil {
		for _, p := range t.Partitions {
			if p != nil && p.Leader == e.nodeID {
				now[p.Partition] = p.LeaderEpoch
			}
		}
	}
	for p := range e.led {
		if _, ok := now[p]; !ok {
			e.txn.OnResigned(p)
		}
	}
	for p, epoch := range now {
		if old, ok := e.led[p]; !ok || old != epoch {
			e.txn.OnElected(p, epoch)
		}
	}
	e.led = now
}

// txnOffsetsStorage adds to offsetsStorage what transactional offset
// commits need: transactional appends (acks=-1 like the rest), and loading
// by batch so that transactions are told apart.
type txnOffsetsStorage struct {
	offsetsStorage
}

// AppendTxn implements group.TxnStorage.
func (s txnOffsetsStorage) AppendTxn(p int32, producerID int64, epoch int16, kvs []group.KV) (int64, error) {
	part, err := s.partition(p)
	if err != nil {
		return 0, err
	}
	recs := make([]record.Record, len(kvs))
	for i, kv := range kvs {
		recs[i] = record.Record{Key: kv.Key, Value: kv.Value}
	}
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = time.Now().UnixMilli()
	opts.ProducerID, opts.ProducerEpoch, opts.Transactional = producerID, epoch, true
	batch, err := record.Build(opts, recs)
	if err != nil {
		return 0, err
	}
	return appendReplicated(part, batch, s.timeoutMs)
}

// LoadBatches implements group.TxnStorage.
func (s txnOffsetsStorage) LoadBatches(p int32, fn func(b group.LoadedBatch) error) error {
	part, err := s.partition(p)
	if err != nil {
		return err
	}
	// To the log end, as txnStateStorage.Load explains.
	return replayBatches(part.Log, part.Log.LogEndOffset(), func(h record.Header, batch []byte) error {
		b := group.LoadedBatch{ProducerID: h.ProducerID, Transactional: h.IsTransactional(), Control: h.IsControl()}
		recs, err := record.ReadRecords(batch, maxInternalReadBytes)
		if err != nil {
			return err
		}
		if b.Control {
			if len(recs) == 0 {
				return nil
			}
			typ, err := record.ParseControlRecordType(recs[0].Key)
			if err != nil {
				return err
			}
			if typ != record.ControlCommit && typ != record.ControlAbort {
				return nil
			}
			b.Commit = typ == record.ControlCommit
			return fn(b)
		}
		for _, r := range recs {
			b.Records = append(b.Records, group.KV{Key: r.Key, Value: r.Value})
		}
		return fn(b)
	})
}

// replayBatches calls fn with every batch of l below end, from the log
// start, in offset order (control batches included).
func replayBatches(l *log.Log, end int64, fn func(h record.Header, batch []byte) error) error {
	offset := l.LogStartOffset()
	for offset < end {
		data, _, err := l.ReadBytes(offset, maxInternalReadBytes, end, true)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return fmt.Errorf("replay %s: no progress at offset %d", l.Dir(), offset)
		}
		for len(data) > 0 {
			h, err := record.Verify(data)
			if err != nil {
				return fmt.Errorf("replay %s at offset %d: %w", l.Dir(), offset, err)
			}
			batch := data[:h.Size()]
			data = data[h.Size():]
			offset = h.LastOffset() + 1
			if err := fn(h, batch); err != nil {
				return err
			}
		}
	}
	return nil
}
