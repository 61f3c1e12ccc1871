package api

// Fetch from the remote tier (KIP-405), part of Fetch (key 1).
//
// Behavior:
//   - A consumer's fetch offset at or above the log start offset but below
//     the first local segment of a tiered partition is served from the
//     bucket: the read goes to the remote reader pool
//     (remote.log.reader.threads workers, remote.log.reader.max.pending.tasks
//     queued), never to a request handler, and the fetch is parked as a
//     delayed remote fetch until every remote read of it is done or
//     remote.fetch.max.wait.ms passes, as Kafka's DelayedRemoteFetch. Local
//     partitions of the same request are read when it completes; min_bytes
//     does not hold a fetch with remote data back.
//   - Several remote partitions of one request are read concurrently.
//   - A remote read that times out answers its partition with no records
//     and no error, so the consumer fetches again; the read, once started,
//     is not interrupted (Kafka's cancel(false)) and leaves what it fetched
//     in the cache for that next fetch; one not yet started is dropped. A
//     full reader queue
//     answers UNKNOWN_SERVER_ERROR for the partition, as Kafka's
//     RejectedExecutionException does; an offset no remote segment holds
//     answers OFFSET_OUT_OF_RANGE.
//   - remote.log.manager.fetch.max.bytes.per.second reached: the partition
//     is answered with no records and no error (KIP-956).
//   - read_committed: the aborted transactions come from the remote
//     segments' transaction indexes, then the local log's when the remote
//     ones do not settle it.
//   - A follower fetching below the leader's local log start gets
//     OFFSET_MOVED_TO_TIERED_STORAGE and rebuilds its state from the remote
//     tier (internal/server, replication).

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/tier"
)

// remoteFetch is the remote part of one fetch: which targets need a remote
// read, and the outcomes of those started.
type remoteFetch struct {
	mu sync.Mutex
	// wanted are the reads the first read found, by target index; started
	// is set once they were submitted, after which a read only uses
	// outcomes.
	wanted  map[int]tier.ReadRequest
	started bool
	// outcomes holds each finished read by target index.
	// Invariant: len(outcomes) <= len(wanted); pending = len(wanted) -
	// len(outcomes) while started.
	outcomes map[int]remoteOutcome
	pending  int
	cancel   context.CancelFunc
}

type remoteOutcome struct {
	result tier.ReadResult
	err    error
}

// readRemote fills res for target i, whose offset lies in the remote tier,
// from the outcome of its remote read, or notes the read as wanted. It
// reports whether the fetch must be answered without waiting.
func (op *fetchOp) readRemote(i int, t fetchTarget, p *partition.Partition, limit, upper int64, minOne bool, res *fetchPartitionResult) (respondNow bool) {
	reader := op.b.Remote
	if reader == nil || !p.Config().RemoteStorageEnable {
		res.errorCode = kerr.OffsetOutOfRange.Code
		return true
	}
	op.remote.mu.Lock()
	defer op.remote.mu.Unlock()
	if out, ok := op.remote.outcomes[i]; ok {
		op.applyRemoteOutcome(p, t, out, res)
		return res.errorCode != 0
	}
	if op.remote.started {
		if _, ok := op.remote.wanted[i]; ok {
			return false // in flight
		}
		// The local log start moved past the offset after this fetch
		// began: answer, and the next fetch reads the remote tier.
		return true
	}
	if reader.QuotaExceeded() {
		return false
	}
	if op.remote.wanted == nil {
		op.remote.wanted = map[int]tier.ReadRequest{}
	}
	op.remote.wanted[i] = tier.ReadRequest{Partition: tier.Partition{TopicID: p.TopicID, Partition: p.Index},
		Offset: t.offset, MaxBytes: limit, MinOneBatch: minOne, UpperBound: upper, ReadCommitted: op.readCommitted}
	return false
}

func (op *fetchOp) applyRemoteOutcome(p *partition.Partition, t fetchTarget, out remoteOutcome, res *fetchPartitionResult) {
	switch {
	case errors.Is(out.err, tier.ErrRemoteOffsetOutOfRange):
		res.errorCode = kerr.OffsetOutOfRange.Code
	case errors.Is(out.err, tier.ErrReaderBusy):
		res.errorCode = kerr.UnknownServerError.Code
	case errors.Is(out.err, context.Canceled), errors.Is(out.err, context.DeadlineExceeded):
		// Timed out: no records, no error.
	case out.err != nil:
		res.errorCode = kerr.KafkaStorageError.Code
	default:
		res.remote = out.result.Records
		res.bytes = int64(len(out.result.Records))
		if op.readCommitted && res.bytes > 0 {
			res.aborted = out.result.Aborted
			if !out.result.AbortedComplete {
				local, err := p.CollectAbortedTxns(t.offset, out.result.NextOffset)
				if err != nil {
					res.errorCode, res.remote, res.bytes = kerr.KafkaStorageError.Code, nil, 0
					return
				}
				res.aborted = append(res.aborted, local...)
			}
		}
	}
}

// remoteWanted reports whether the first read found partitions to read
// from the remote tier.
func (op *fetchOp) remoteWanted() bool {
	op.remote.mu.Lock()
	defer op.remote.mu.Unlock()
	return len(op.remote.wanted) > 0 && !op.remote.started
}

// startRemote submits the wanted remote reads and parks the fetch until
// they are done or remote.fetch.max.wait.ms passes.
func (op *fetchOp) startRemote() {
	waitMs := op.b.Config().Tier.FetchMaxWaitMs
	if waitMs <= 0 {
		waitMs = 500
	}
	ctx, cancel := context.WithCancel(context.Background())
	op.remote.mu.Lock()
	op.remote.started = true
	op.remote.cancel = cancel
	op.remote.outcomes = make(map[int]remoteOutcome, len(op.remote.wanted))
	op.remote.pending = len(op.remote.wanted)
	wanted := op.remote.wanted
	op.remote.mu.Unlock()

	op.parking.Lock()
	op.b.parked.Store(op, struct{}{})
	op.b.Metrics.FetchParkedAdd(1)
	op.parking.timer = time.AfterFunc(time.Duration(waitMs)*time.Millisecond, op.expire)
	op.parking.Unlock()
	if op.b.closing.Load() {
		op.expire()
		return
	}
	for i, req := range wanted {
		if err := op.b.Remote.Submit(ctx, req, func(res tier.ReadResult, err error) { op.remoteDone(i, res, err) }); err != nil {
			op.remoteDone(i, tier.ReadResult{}, err)
		}
	}
}

// remoteDone records one remote read's outcome and answers the fetch when
// it was the last.
func (op *fetchOp) remoteDone(i int, res tier.ReadResult, err error) {
	op.remote.mu.Lock()
	op.remote.outcomes[i] = remoteOutcome{result: res, err: err}
	op.remote.pending--
	last := op.remote.pending == 0
	op.remote.mu.Unlock()
	if last && !op.done.Load() {
		results, _, _ := op.read(nil)
		op.complete(results)
	}
}

// stopRemote drops the remote reads not yet started once the fetch is
// answered; those running finish into the cache (tier.Reader.Submit).
func (op *fetchOp) stopRemote() {
	op.remote.mu.Lock()
	cancel := op.remote.cancel
	op.remote.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// isRemoteRead reports whether err is a read of the remote tier's range.
func isRemoteRead(err error) bool { return errors.Is(err, log.ErrOffsetInRemoteTier) }
