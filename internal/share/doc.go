// Package share holds the broker side of KIP-932 share groups that is not
// group membership: the share-partition state machine (Partition), the
// registry of share-partitions a leader serves (Manager) and the share
// session cache (Sessions).
//
// # Share-partition
//
// A share group consumes a topic-partition cooperatively: each record is
// acquired by one consumer at a time, for a bounded lock duration, and is
// acknowledged on its own. The state of one share-partition is a window of
// in-flight offsets between the share-partition start offset (SPSO) and end
// offset (SPEO):
//
//	 log ...  | done | in-flight window [SPSO, SPEO)       | not yet read
//	          |      | A A Q Q K A R Q ...                  |
//	                   ^ SPSO                               ^ SPEO
//
//	A AVAILABLE    may be acquired (again)
//	Q ACQUIRED     locked by one member until acknowledged, released or
//	               the lock times out
//	K ACKNOWLEDGED accepted; never delivered again
//	R ARCHIVED     rejected, past the delivery count limit, a control
//	               record, an aborted transaction's record under
//	               read_committed, or an offset with no record
//
// Record states carry Kafka's numbers (0, 1, 2, 4), which are also what
// ReadShareGroupState and WriteShareGroupState exchange. The SPSO moves up
// past every leading ACKNOWLEDGED or ARCHIVED offset, so the window always
// starts at an AVAILABLE or ACQUIRED offset, or is empty. Its width is
// bounded by group.share.partition.max.record.locks: no new offset is
// acquired while SPEO - SPSO is at the limit.
//
// Transitions, with acknowledgement types as ShareFetch and
// ShareAcknowledge number them (0 GAP, 1 ACCEPT, 2 RELEASE, 3 REJECT,
// 4 RENEW):
//
//	AVAILABLE --acquire (delivery count + 1)--> ACQUIRED
//	ACQUIRED --ACCEPT--> ACKNOWLEDGED
//	ACQUIRED --REJECT or GAP--> ARCHIVED
//	ACQUIRED --RELEASE, lock timeout, member gone--> AVAILABLE
//	                  (ARCHIVED once delivery count >= the limit)
//	ACQUIRED --RENEW--> ACQUIRED with a fresh lock
//
// Partition is deterministic: no goroutines, clocks or I/O. Time enters as
// milliseconds in every call; the caller reads the log and passes batch
// headers in.
package share
