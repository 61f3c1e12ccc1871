package api

// InitProducerId (key 22), versions 0-5.
//
// Behavior:
//   - Without a transactional id, every call hands out a fresh producer id
//     with epoch 0, taken from a block this node allocated through the
//     metadata log, so ids are unique in the cluster and never reused after
//     a restart.
//   - With a transactional id the transaction coordinator answers: a new
//     producer id the first time, else the next epoch, fencing older
//     producers of the id. An empty transactional id answers
//     INVALID_REQUEST; a timeout of 0 or above transaction.max.timeout.ms
//     INVALID_TRANSACTION_TIMEOUT; a node that does not coordinate the id
//     NOT_COORDINATOR.
//   - A transaction the previous producer left ongoing is aborted first
//     (its markers written at a fenced epoch) and the call answers
//     CONCURRENT_TRANSACTIONS; the client retries and gets the next epoch.
//   - v3+ (KIP-360): a producer may name its current producer id and epoch
//     to keep its id after an error; -1/-1 names none; one of the two
//     without the other is INVALID_REQUEST; a stale pair PRODUCER_FENCED.
//     An exhausted epoch moves the transactional id to a new producer id.

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/txn"
)

func init() { register(22, 0, 5, handleInitProducerID) }

// producerIDBlock is the block of producer ids this node hands out.
type producerIDBlock struct {
	mu   sync.Mutex
	next int64
	end  int64
}

// NextProducerID returns an unused producer id, allocating a new block
// through the controller when the current one is spent.
func (b *Broker) NextProducerID() (int64, error) {
	blk := &b.producerIDs
	blk.mu.Lock()
	defer blk.mu.Unlock()
	if blk.next >= blk.end {
		first, size, err := b.allocateProducerIDs()
		if err != nil {
			return -1, err
		}
		blk.next, blk.end = first, first+size
	}
	id := blk.next
	blk.next++
	return id, nil
}

func handleInitProducerID(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.InitProducerIDRequest)
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.ProducerID = -1
	resp.ProducerEpoch = -1
	if code := b.authorizeInitProducerID(c, req); code != nil {
		resp.ErrorCode = code.Code
		c.reply(resp)
		return
	}
	if req.TransactionalID != nil {
		initTransactionalProducer(b, c, req, resp)
		return
	}
	id, err := b.NextProducerID()
	if err != nil {
		b.Logger.Error("allocate producer ids", "err", err)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		c.reply(resp)
		return
	}
	resp.ProducerID = id
	resp.ProducerEpoch = 0
	c.reply(resp)
}

func initTransactionalProducer(b *Broker, c *call, req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) {
	var expected *txn.ProducerIDAndEpoch
	if c.version >= 3 {
		switch {
		case req.ProducerID == -1 && req.ProducerEpoch == -1:
		case req.ProducerID == -1 || req.ProducerEpoch == -1:
			resp.ErrorCode = kerr.InvalidRequest.Code
			c.reply(resp)
			return
		default:
			expected = &txn.ProducerIDAndEpoch{ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}
		}
	}
	if b.Txn == nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		c.reply(resp)
		return
	}
	// Off the handler: the new epoch is written to __transaction_state
	// with acks=-1 (see offHandler).
	offHandler(func() {
		b.Txn.InitProducerID(*req.TransactionalID, req.TransactionTimeoutMillis, expected, func(pid int64, epoch int16, code *kerr.Error) {
			resp.ProducerID, resp.ProducerEpoch = pid, epoch
			if code != nil {
				resp.ErrorCode = code.Code
			}
			c.reply(resp)
		})
	})
}
