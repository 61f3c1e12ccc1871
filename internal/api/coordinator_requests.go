package api

// offHandler runs a coordinator request on a goroutine of its own, not on
// the handler's. The group coordinator appends to __consumer_offsets and the
// transaction coordinator to __transaction_state with acks=-1, and wait
// while the records replicate; a handler parked there could not serve the
// follower fetches that replication waits for, and num.io.threads of them
// parked would stall the node until request.timeout.ms. The order of a
// connection's requests is kept: a request of these keys is handed on only
// once the earlier ones of its connection were answered, as in Kafka
// (network.Config.PipelinedAPIKeys), so there is at most one such goroutine
// per connection. Requests of one transactional id on several connections
// are serialised by the transaction coordinator itself, as Kafka's: while a
// record of the id is being written the others answer
// CONCURRENT_TRANSACTIONS and the client retries (txn.Coordinator's
// appendLocked), so a retry on another connection cannot overtake it.
func offHandler(fn func()) { go fn() }
