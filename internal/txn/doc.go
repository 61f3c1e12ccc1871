// Package txn is Samsa's transaction coordinator (KIP-98, with KIP-360's
// producer epoch bumps and KIP-890's transaction verification and
// transactions v2): it hands out producer ids and epochs to transactional
// producers, tracks which partitions each transaction touches, and ends
// transactions by writing COMMIT or ABORT markers into those partitions. Its
// state lives in the compacted __transaction_state topic in Apache Kafka's
// record format; a transactional id belongs to partition
// abs(javaHashCode(id)) % partitions, and the leader of that partition is
// its coordinator.
//
// # Shape
//
// Shard is a deterministic core for one __transaction_state partition: no
// goroutines, clocks or I/O. Each step takes the time and returns the record
// to write (a Write) or the markers to send (a MarkerJob). Coordinator is
// the thin driver: one Shard per partition this broker leads behind that
// partition's mutex, appends through Storage, sends markers through
// MarkerSender (a direct call for partitions led by this broker,
// WriteTxnMarkers to the leader for the others), and runs the timers that
// abort timed-out transactions and expire idle transactional ids. What each
// partition's answer means (written, retry with the leader of then, the
// partition is gone, the transaction was fenced) is decided here, in
// onMarkerResponse, as Kafka's TransactionMarkerRequestCompletionHandler;
// retries have no limit of their own while this broker coordinates the
// partition, as in Kafka.
//
// Every change goes through two steps, as in Kafka: a prepare step computes
// the next state (a Transit) and marks it pending; once its record is
// written the driver applies it (Shard.Applied), or drops it if the write
// failed (Shard.Failed).
//
// # States (Kafka's TransactionState)
//
//	            InitProducerId                 AddPartitions
//	 (new id) ──────────────> Empty ─────────────────────────> Ongoing <─┐
//	                            ^  \                          │  │  │    │ AddPartitions
//	          InitProducerId    │   \ EndTxn(abort), v2 only  │  │  └────┘
//	        ┌───────────────────┤    └───────────┐    EndTxn  │  │ EndTxn(abort), timeout,
//	        │                   │                v    (commit)│  │ InitProducerId (fence)
//	CompleteCommit       CompleteAbort <──── PrepareAbort <───┼──┘
//	        ^                   ^  markers                    │
//	        │ markers written   └─ (v2: EndTxn(abort) from    v
//	        └──────────────────────  any Complete state)  PrepareCommit
//
// PrepareEpochFence is transient: the epoch bump that fences a producer
// before its ongoing transaction is aborted; it is never written. Dead marks
// an expired transactional id whose tombstone is being written.
//
// Under transactions v2 (EndTxn v5+) the producer epoch goes up by one at
// every Prepare, so the markers carry an epoch above every batch of the
// transaction and a late batch of the old transaction is refused.
//
// # __transaction_state record formats
//
// Key, TransactionLogKey v0 (all integers big-endian):
//
//	+---------+------------------------------+
//	| version | transactionalId              |
//	| int16=0 | int16 length + UTF-8 bytes   |
//	+---------+------------------------------+
//
// Value, TransactionLogValue. Version 0 (transaction versions 0 and 1):
//
//	version                 int16 = 0
//	producerId              int64
//	producerEpoch           int16
//	transactionTimeoutMs    int32
//	transactionStatus       int8     the State id above
//	transactionPartitions   int32 count (-1 = null, written for Empty), then per topic:
//	    topic               int16 length + UTF-8
//	    partitionIds        int32 count, then int32 each
//	lastUpdateTimestampMs   int64
//	startTimestampMs        int64    -1 before the first partition is added
//
// Version 1 (written under transactions v2) has the same fields, flexible:
// strings are an unsigned varint length+1, arrays an unsigned varint
// count+1 (0 = null), each topic entry and the value end with a tagged-field
// section. The value's tagged fields:
//
//	tag 0  previousProducerId        int64, default -1
//	tag 1  nextProducerId            int64, default -1
//	tag 2  clientTransactionVersion  int16, default 0
//
// A null value is a tombstone: the transactional id expired. The encoders
// and decoders are kmsg's TxnMetadataKey and TxnMetadataValue; DecodeRecord
// checks versions and states and wraps failures in ErrCorrupt.
package txn
