package api

// offHandler runs a group coordinator request on a goroutine of its own,
// not on the handler's. The group coordinator appends to __consumer_offsets
// with acks=-1 and holds the group's partition while the records replicate
// (internal/group's Coordinator); a handler parked there could not serve
// the follower fetches that replication waits for, and num.io.threads of
// them parked would stall the node until request.timeout.ms. The order of
// a connection's requests is kept: a request of these keys is handed on
// only once the earlier ones of its connection were answered, as in Kafka
// (network.Config.PipelinedAPIKeys), so there is at most one such
// goroutine per connection.
func offHandler(fn func()) { go fn() }

// txnHandler runs a transaction coordinator request (InitProducerId,
// AddPartitionsToTxn, AddOffsetsToTxn, EndTxn) off the handler, for the
// reason offHandler gives: the coordinator appends to __transaction_state
// with acks=-1. The coordinator serialises the requests of one
// transactional id itself, as Kafka's does: while a record of the id is
// being written, the others answer CONCURRENT_TRANSACTIONS and the client
// retries (txn.Coordinator's appendLocked), so a request retried on
// another connection while the first still runs cannot overtake it.
func txnHandler(fn func()) { go fn() }
