package server

import (
	"fmt"
	"sync"
	"time"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/record"
)

// metadataPartition is where the metadata log lives: partition
// __cluster_metadata-0 in the first log dir, as in KRaft.
var metadataPartition = log.TopicPartition{Topic: controller.MetadataTopic, Partition: 0}

// maxMetadataBatchBytes bounds one read of the metadata log during replay.
const maxMetadataBatchBytes = 8 << 20

// logJournal is the controller's journal on a local log. Each Append is one
// RecordBatch v2 whose record values are encoded metadata records, flushed
// to disk before Append returns, since metadata is not replicated on one node.
type logJournal struct {
	mu  sync.Mutex
	log *log.Log
}

func openJournal(logs *log.Manager) (*logJournal, error) {
	l := logs.Get(metadataPartition)
	if l == nil {
		cfg := log.DefaultConfig()
		cfg.RetentionMs = -1
		cfg.RetentionBytes = -1
		var err error
		l, err = logs.Create(metadataPartition, metadata.UUID{}, cfg)
		if err != nil {
			return nil, fmt.Errorf("create metadata log: %w", err)
		}
	}
	return &logJournal{log: l}, nil
}

// Append implements controller.Journal.
func (j *logJournal) Append(values [][]byte) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	recs := make([]record.Record, len(values))
	for i, v := range values {
		recs[i] = record.Record{Value: v}
	}
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = time.Now().UnixMilli()
	batch, err := record.Build(opts, recs)
	if err != nil {
		return 0, err
	}
	res, err := j.log.Append(batch, 0)
	if err != nil {
		return 0, err
	}
	if err := j.log.Flush(); err != nil {
		return 0, err
	}
	return res.BaseOffset, nil
}

// Replay implements controller.Journal.
func (j *logJournal) Replay(fn func(offset int64, value []byte) error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	offset := j.log.LogStartOffset()
	end := j.log.LogEndOffset()
	for offset < end {
		data, _, err := j.log.ReadBytes(offset, maxMetadataBatchBytes, end, true)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return fmt.Errorf("metadata log: no progress at offset %d", offset)
		}
		for len(data) > 0 {
			h, err := record.Verify(data)
			if err != nil {
				return fmt.Errorf("metadata log at offset %d: %w", offset, err)
			}
			batch := data[:h.Size()]
			data = data[h.Size():]
			err = record.Records(batch, maxMetadataBatchBytes, func(r record.Record) error {
				at := h.BaseOffset + int64(r.OffsetDelta)
				if at < offset {
					return nil
				}
				return fn(at, r.Value)
			})
			if err != nil {
				return err
			}
			offset = h.LastOffset() + 1
		}
	}
	return nil
}
