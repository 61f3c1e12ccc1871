package txn

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// markerRound is one attempt at the markers of a job still missing: one
// WriteTxnMarkers request per leader. The fields are guarded by the
// handle's mutex.
type markerRound struct {
	h   *handle
	s   *Shard
	job *MarkerJob
	// outstanding counts the requests not yet answered.
	outstanding int
	// abandon is set when a partition refuses the marker as fenced.
	abandon bool
}

// runJob writes the markers a job still misses, grouped by leader; the
// last response finishes the round (finishRound), so runJob may return
// before the job is done when a sender answers asynchronously.
func (c *Coordinator) runJob(h *handle, s *Shard, job *MarkerJob) {
	h.mu.Lock()
	if h.mu.shard != s {
		h.mu.Unlock()
		return
	}
	parts := append([]TopicPartition(nil), job.Partitions...)
	h.mu.Unlock()

	byLeader := map[int32][]TopicPartition{}
	var gone []TopicPartition
	for _, tp := range parts {
		if leader, ok := c.markers.Leader(tp); ok {
			byLeader[leader] = append(byLeader[leader], tp)
		} else {
			gone = append(gone, tp)
		}
	}
	r := &markerRound{h: h, s: s, job: job, outstanding: len(byLeader)}
	if len(gone) > 0 {
		h.mu.Lock()
		for _, tp := range gone {
			// The topic was deleted: no marker is due there.
			s.MarkerWritten(job, tp)
		}
		h.mu.Unlock()
	}
	if len(byLeader) == 0 {
		c.finishRound(r)
		return
	}
	for leader, tps := range byLeader {
		c.markers.Send(leader, markerRequest(job, tps), func(resp *kmsg.WriteTxnMarkersResponse, err error) {
			c.onMarkerResponse(r, resp, err)
		})
	}
}

// markerRequest is the WriteTxnMarkers request for some of a job's
// partitions.
func markerRequest(job *MarkerJob, tps []TopicPartition) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 2
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed = job.ProducerID, job.ProducerEpoch, job.Commit
	m.CoordinatorEpoch, m.TransactionVersion = job.CoordinatorEpoch, job.TransactionVersion
	for _, tp := range tps {
		if n := len(m.Topics); n == 0 || m.Topics[n-1].Topic != tp.Topic {
			t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			t.Topic = tp.Topic
			m.Topics = append(m.Topics, t)
		}
		last := &m.Topics[len(m.Topics)-1]
		last.Partitions = append(last.Partitions, tp.Partition)
	}
	req.Markers = append(req.Markers, m)
	return req
}

func (c *Coordinator) onMarkerResponse(r *markerRound, resp *kmsg.WriteTxnMarkersResponse, err error) {
	r.h.mu.Lock()
	if r.h.mu.shard != r.s {
		r.h.mu.Unlock()
		return
	}
	if err != nil {
		// The broker is unreachable (Kafka's disconnected response): the
		// partitions are sent again to the leaders of then.
		c.log.Debug("sending transaction markers failed; retrying", "transactional_id", r.job.TransactionalID, "err", err)
	} else {
		for _, m := range resp.Markers {
			for _, t := range m.Topics {
				for _, p := range t.Partitions {
					c.markerResultLocked(r, TopicPartition{Topic: t.Topic, Partition: p.Partition}, kerr.ErrorForCode(p.ErrorCode))
				}
			}
		}
	}
	r.outstanding--
	last := r.outstanding == 0
	r.h.mu.Unlock()
	if last {
		c.finishRound(r)
	}
}

// markerResultLocked applies one partition's answer as Kafka's
// TransactionMarkerRequestCompletionHandler does.
func (c *Coordinator) markerResultLocked(r *markerRound, tp TopicPartition, code error) {
	switch code {
	case nil:
		r.s.MarkerWritten(r.job, tp)
	case kerr.UnknownTopicOrPartition, kerr.NotLeaderForPartition, kerr.NotEnoughReplicas,
		kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut, kerr.KafkaStorageError:
		// Retriable: the partition stays in the job.
		c.log.Debug("writing transaction marker failed; retrying", "transactional_id", r.job.TransactionalID, "partition", tp, "err", code)
	case kerr.InvalidProducerEpoch, kerr.TransactionCoordinatorFenced:
		// The producer or coordinator moved on: this transaction's
		// markers are no longer ours to write.
		r.abandon = true
	case kerr.UnsupportedForMessageFormat, kerr.UnsupportedVersion:
		r.s.MarkerWritten(r.job, tp)
	default:
		c.log.Error("unexpected error writing transaction marker; retrying", "transactional_id", r.job.TransactionalID, "partition", tp, "err", code)
	}
}

// finishRound retries the partitions still missing a marker after a
// backoff, or, when none is, writes the Complete record.
func (c *Coordinator) finishRound(r *markerRound) {
	h, s, job := r.h, r.s, r.job
	h.mu.Lock()
	if h.mu.shard != s {
		h.mu.Unlock()
		return
	}
	if r.abandon {
		s.AbandonMarkers(job)
		h.mu.Unlock()
		c.log.Info("abandoned transaction markers: producer or coordinator fenced", "transactional_id", job.TransactionalID)
		return
	}
	if len(job.Partitions) > 0 {
		h.mu.Unlock()
		c.retryLater(func() { c.runJob(h, s, job) })
		return
	}
	w, err := s.MarkersDone(job)
	if err != nil {
		h.mu.Unlock()
		return
	}
	err = c.appendUnlocked(h, w.Key, w.Value)
	if h.mu.shard != s {
		h.mu.Unlock()
		return
	}
	if err != nil {
		// The pending Complete stays; try the write again.
		h.mu.Unlock()
		c.log.Warn("writing transaction completion failed; retrying", "transactional_id", job.TransactionalID, "err", err)
		c.retryLater(func() { c.finishRound(r) })
		return
	}
	if _, err := s.Applied(w, c.nowMs()); err != nil {
		c.log.Error("applying transaction completion", "transactional_id", job.TransactionalID, "err", err)
	}
	h.mu.Unlock()
}

func (c *Coordinator) retryLater(fn func()) {
	if c.stopped() {
		return
	}
	time.AfterFunc(time.Duration(c.cfg.MarkerRetryBackoffMs)*time.Millisecond, func() {
		if !c.stopped() {
			fn()
		}
	})
}
