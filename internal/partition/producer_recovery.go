package partition

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/record"
)

// maxReplayReadBytes bounds one read (and one decompressed marker batch)
// while replaying the log's tail into the producer state.
const maxReplayReadBytes = 8 << 20

// snapshotsKept is how many snapshot files a partition keeps: the newest
// and one older in case the newest is unreadable.
const snapshotsKept = 2

// loadProducerState rebuilds a partition's producer state when its log
// opens: from the newest readable snapshot at or below the log end, then
// the batches after it. Only the tail is read, so after a clean shutdown
// (which writes a snapshot at the log end) nothing is replayed. Aborted
// transactions found in the tail whose .txnindex entry was lost are indexed
// again, and index entries beyond the log end (cut by recovery) dropped.
func loadProducerState(l *log.Log, nowMs, expirationMs int64, logger *slog.Logger) (*producerState, error) {
	leo, start := l.LogEndOffset(), l.LogStartOffset()
	s := newProducerState(start)
	offsets, err := l.ProducerSnapshotOffsets()
	if err != nil {
		return nil, err
	}
	for i := len(offsets) - 1; i >= 0; i-- {
		off := offsets[i]
		if off > leo {
			// Newer than the log (the log was cut by recovery).
			if err := l.DeleteProducerSnapshot(off); err != nil {
				return nil, err
			}
			continue
		}
		entries, err := readSnapshot(l, off)
		if err != nil {
			logger.Warn("unreadable producer snapshot; trying an older one", "dir", l.Dir(), "offset", off, "err", err)
			if err := l.DeleteProducerSnapshot(off); err != nil {
				return nil, err
			}
			continue
		}
		s.mu.Lock()
		for _, e := range entries {
			if e.currentTxnFirstOffset < 0 && nowMs-e.lastTimestamp >= expirationMs {
				continue
			}
			s.putLocked(e)
		}
		s.mu.mapEndOffset, s.mu.lastSnapOffset = off, off
		s.mu.Unlock()
		break
	}
	if err := l.TruncateAbortedTxns(leo); err != nil {
		return nil, err
	}
	// A tiered log's start may lie in the remote tier: replay only what
	// is local (a rebuilt follower has a snapshot at its local start).
	from := max(s.mu.mapEndOffset, l.LocalLogStartOffset())
	if err := s.replay(l, from, leo); err != nil {
		return nil, fmt.Errorf("rebuilding producer state of %s from offset %d: %w", l.Dir(), from, err)
	}
	s.mu.Lock()
	s.mu.mapEndOffset = leo
	s.mu.Unlock()
	return s, nil
}

func readSnapshot(l *log.Log, offset int64) ([]producerEntry, error) {
	b, err := l.ReadProducerSnapshot(offset)
	if err != nil {
		return nil, err
	}
	return decodeSnapshot(b)
}

// replay applies the batches of [from, end) to the state.
func (s *producerState) replay(l *log.Log, from, end int64) error {
	offset := from
	for offset < end {
		data, _, err := l.ReadBytes(offset, maxReplayReadBytes, end, true)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return fmt.Errorf("no progress at offset %d", offset)
		}
		for len(data) > 0 {
			h, err := record.ParseHeader(data)
			if err != nil || h.Size() > len(data) {
				return fmt.Errorf("batch at offset %d: %w", offset, errors.Join(err, record.ErrTruncated))
			}
			batch := data[:h.Size()]
			data = data[h.Size():]
			offset = h.LastOffset() + 1
			if !h.HasProducerID() {
				continue
			}
			if err := s.replayBatch(l, batch, h); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *producerState) replayBatch(l *log.Log, batch []byte, h record.Header) error {
	if !h.IsControl() {
		s.mu.Lock()
		e, _, _ := validateData(s.entryLocked(h.ProducerID), h, h.BaseOffset, OriginReplay, nil)
		s.putLocked(e)
		s.mu.Unlock()
		return nil
	}
	m, ok, err := parseMarker(batch, h)
	if err != nil || !ok {
		return err
	}
	s.mu.Lock()
	e, done, _ := validateMarker(s.entryLocked(h.ProducerID), m, h.BaseOffset, OriginReplay)
	var lso int64
	if done != nil {
		lso = s.lastStableOffsetLocked(done)
	}
	s.mu.Unlock()
	if done != nil && done.aborted {
		indexed, err := l.HasAbortedTxn(done.producerID, done.lastOffset)
		if err != nil {
			return err
		}
		if !indexed {
			err := l.AppendAbortedTxn(log.AbortedTxn{ProducerID: done.producerID, FirstOffset: done.firstOffset, LastOffset: done.lastOffset, LastStableOffset: lso})
			if err != nil {
				return err
			}
		}
	}
	s.mu.Lock()
	s.completedLocked(done)
	s.putLocked(e)
	s.mu.Unlock()
	return nil
}

// parseMarker reads the end-transaction marker of a control batch. ok is
// false for control batches that are not markers (or empty, cleaned ones).
func parseMarker(batch []byte, h record.Header) (TxnMarker, bool, error) {
	recs, err := record.ReadRecords(batch, maxReplayReadBytes)
	if err != nil {
		return TxnMarker{}, false, fmt.Errorf("control batch at offset %d: %w", h.BaseOffset, err)
	}
	if len(recs) == 0 {
		return TxnMarker{}, false, nil
	}
	typ, err := record.ParseControlRecordType(recs[0].Key)
	if err != nil {
		return TxnMarker{}, false, fmt.Errorf("control batch at offset %d: %w", h.BaseOffset, err)
	}
	if typ != record.ControlCommit && typ != record.ControlAbort {
		return TxnMarker{}, false, nil
	}
	coordinatorEpoch, err := record.ParseEndTxnMarker(recs[0].Value)
	if err != nil {
		return TxnMarker{}, false, fmt.Errorf("marker at offset %d: %w", h.BaseOffset, err)
	}
	return TxnMarker{
		ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch, CoordinatorEpoch: coordinatorEpoch,
		Commit: typ == record.ControlCommit, TimestampMs: h.MaxTimestamp,
	}, true, nil
}

// takeSnapshot writes the state as <mapEndOffset>.snapshot if it moved
// since the last one, and removes snapshots beyond the newest
// snapshotsKept. Called from the log's roll hook and at shutdown.
func (s *producerState) takeSnapshot(l *log.Log) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.mapEndOffset <= s.mu.lastSnapOffset {
		return nil
	}
	if err := l.WriteProducerSnapshot(s.mu.mapEndOffset, encodeSnapshot(s.mu.producers)); err != nil {
		return err
	}
	s.mu.lastSnapOffset = s.mu.mapEndOffset
	offsets, err := l.ProducerSnapshotOffsets()
	if err != nil {
		return err
	}
	for i := 0; i+snapshotsKept < len(offsets); i++ {
		if err := l.DeleteProducerSnapshot(offsets[i]); err != nil {
			return err
		}
	}
	return nil
}
