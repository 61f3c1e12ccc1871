package server

import (
	"fmt"
	"sync"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/record"
)

// metadataPartition is where the metadata log lives: partition
// __cluster_metadata-0 in the first log dir, as in KRaft.
var metadataPartition = log.TopicPartition{Topic: controller.MetadataTopic, Partition: 0}

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
	batch, err := buildBatch(recs)
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
	return replayLog(j.log, j.log.LogEndOffset(), func(offset int64, r record.Record) error {
		return fn(offset, r.Value)
	})
}
