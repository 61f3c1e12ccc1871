package api

// InitProducerId (key 22), versions 0-5.
//
// Behavior:
//   - Without a transactional id, every call hands out a fresh producer id
//     with epoch 0, taken from a block this node allocated through the
//     metadata log, so ids are unique in the cluster and never reused after
//     a restart.
//   - With a transactional id the transaction coordinator answers; until it
//     exists, the request fails with TRANSACTIONAL_ID_AUTHORIZATION_FAILED
//     rather than leaving the client retrying.

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(22, 0, 5, handleInitProducerID) }

// producerIDBlock is the block of producer ids this node hands out.
type producerIDBlock struct {
	mu   sync.Mutex
	next int64
	end  int64
}

// nextProducerID returns an unused producer id, allocating a new block
// through the controller when the current one is spent.
func (b *Broker) nextProducerID() (int64, error) {
	blk := &b.producerIDs
	blk.mu.Lock()
	defer blk.mu.Unlock()
	if blk.next >= blk.end {
		first, size, err := b.Controller.AllocateProducerIDs(b.NodeID)
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
	if req.TransactionalID != nil {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		c.reply(resp)
		return
	}
	id, err := b.nextProducerID()
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
