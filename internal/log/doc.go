// Package log is Samsa's storage engine: one append-only log per partition,
// split into segments, byte-compatible with Apache Kafka's on-disk layout so
// Kafka's tools (kafka-dump-log.sh and friends) can read it.
//
// # Structure
//
//	Manager            owns log.dirs: meta.properties, checkpoints, the clean
//	  │                shutdown marker, background retention/flush/checkpoints
//	  └─ Log           one partition directory <log.dir>/<topic>-<partition>
//	       ├─ segment  one .log file + .index + .timeindex (only the last,
//	       │           "active", segment is written; closed ones are immutable)
//	       └─ EpochCache  leader-epoch-checkpoint
//
// # Partition directory
//
//	<log.dir>/<topic>-<partition>/
//	    00000000000000000000.log         segment with base offset 0
//	    00000000000000000000.index
//	    00000000000000000000.timeindex
//	    00000000000000000000.txnindex    aborted transactions (format in txnindex.go)
//	    00000000000000004096.snapshot    producer state at 4096 (snapshot.go, package partition)
//	    00000000000000004096.log         next segment: base offset 4096
//	    ...
//	    leader-epoch-checkpoint
//	    partition.metadata
//
// A file name is the segment's base offset in 20 decimal digits. A segment
// being deleted has ".deleted" appended to each name for file.delete.delay.ms.
//
// # .log: RecordBatch v2, back to back
//
// Exactly the bytes of the batches as produced, with baseOffset and
// partitionLeaderEpoch rewritten by the leader (they sit outside the CRC):
//
//	offset  size  field
//	     0     8  baseOffset            int64, big-endian
//	     8     4  batchLength           int32: bytes after this field
//	    12     4  partitionLeaderEpoch  int32
//	    16     1  magic                 2
//	    17     4  crc                   CRC-32C of bytes 21..end
//	    21     2  attributes
//	    23     4  lastOffsetDelta
//	    27     8  baseTimestamp
//	    35     8  maxTimestamp
//	    43     8  producerId
//	    51     2  producerEpoch
//	    53     4  baseSequence
//	    57     4  recordCount
//	    61     .  records
//
// (see package record). Batch n+1 starts at the byte after batch n ends.
//
// # .index: sparse offset index, 8-byte entries
//
//	offset  size  field
//	     0     4  relativeOffset  int32, big-endian: offset - baseOffset
//	     4     4  position        int32, big-endian: byte position in .log
//
// An entry is written when more than index.interval.bytes have been appended
// since the last one, for the batch (or batches appended together) starting
// at position; relativeOffset is the last offset of that append. Entries
// increase in both fields. While the segment is active the file is
// preallocated to segment.index.bytes (rounded down to 8) and memory-mapped;
// unused entries are zero. When the segment closes the file is trimmed to its
// entries, so the number of entries is the file length / 8. A lookup for
// offset o binary-searches the last entry with base+relativeOffset <= o and
// scans the .log from its position.
//
// # .timeindex: sparse time index, 12-byte entries
//
//	offset  size  field
//	     0     8  timestamp       int64, big-endian: max timestamp so far
//	     8     4  relativeOffset  int32, big-endian: offset - baseOffset
//
// Written alongside each .index entry, but only when the segment's max
// timestamp has grown: (t, o) says the largest batch max timestamp up to the
// batch ending at offset o is t, and o is the last offset of the batch that
// carried t. Timestamps strictly increase. One slot is kept free for the
// entry appended when the segment closes, which records the segment's final
// max timestamp (used by retention.ms without reading the .log).
//
// # leader-epoch-checkpoint and the broker's offset checkpoints
//
// Kafka's checkpoint text format, UTF-8, "\n" line ends:
//
//	0                  version
//	2                  number of entries
//	0 0                leader-epoch-checkpoint: "<epoch> <startOffset>"
//	3 1200
//
//	0                  recovery-point-offset-checkpoint, log-start-offset-
//	1                  checkpoint, replication-offset-checkpoint,
//	orders 0 1200      cleaner-offset-checkpoint: "<topic> <partition> <offset>"
//
// Checkpoints are replaced atomically: write <name>.tmp, fsync it, rename it
// over <name>, fsync the directory.
//
// # partition.metadata
//
//	version: 0
//	topic_id: <topic id: 16 bytes, base64url without padding (22 characters)>
//
// (no trailing newline, as Kafka writes it).
//
// # meta.properties (each log dir)
//
// Java properties: "#" comment lines (Samsa writes "#" and a date), then
// key=value lines (Samsa writes them sorted; readers must not care):
//
//	#
//	#Thu Nov 30 00:00:00 UTC 2026
//	cluster.id=<cluster id>
//	directory.id=<16 random bytes, base64url without padding>
//	node.id=<node id>
//	version=1
//
// # Deletion
//
// A segment leaving the log (retention, DeleteRecords, truncation) has its
// files renamed <name>.deleted and stays open for file.delete.delay.ms so
// reads in flight can finish; a deleted partition directory is renamed
// <topic>-<partition>.<32 hex digits>-delete for the same delay. Startup
// removes whatever such files and directories a previous run left.
//
// # Compaction
//
// The log cleaner (cleaner.go) rewrites closed segments of logs with
// cleanup.policy=compact, keeping offsets (a cleaned log has gaps) and
// batch headers. A cleaned segment is written as <base>.log.cleaned,
// .index.cleaned, .timeindex.cleaned and .txnindex.cleaned, renamed *.swap,
// and swapped in for the segments it replaces, which are renamed *.deleted;
// Open finishes or undoes a swap a crash interrupted (cleaner_swap.go). A
// batch the cleaner rewrote with tombstones or a marker to drop later has
// attribute bit 6 set and its delete horizon as baseTimestamp (KIP-534).
// Progress is kept per log dir in cleaner-offset-checkpoint.
//
// # .kafka_cleanshutdown (each log dir)
//
// Present only between a clean shutdown and the next startup; its content is
// {"version":0,"brokerEpoch":<epoch>}. When present at startup, logs open
// without recovery.
//
// # Durability
//
// Appends go to the page cache. fsync happens only per flush.messages and
// flush.ms (default never: replication gives durability) and, in the
// background, for each segment that closes on a roll. The recovery point is
// the offset below which everything is flushed; after a crash recovery
// re-validates every batch from the segment holding the recovery point.
package log
