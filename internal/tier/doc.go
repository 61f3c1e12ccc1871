// Package tier is Samsa's remote log manager (KIP-405): the leader of a
// partition of a topic with remote.storage.enable=true copies each closed
// segment below the last stable offset to an object store (internal/blob),
// with its indexes, producer snapshot and leader-epoch checkpoint; total
// retention (retention.ms, retention.bytes) then covers both tiers and
// deletes remote segments, while local retention (local.retention.*) may
// only delete local segments already copied.
//
// # Reads
//
// A tiered log keeps its log start offset when local retention deletes
// copied segments (internal/log), so reads between the log start and the
// first local segment come here: Reader serves them on a bounded pool
// (remote.log.reader.threads, remote.log.reader.max.pending.tasks) from the
// partition's RemoteView, looking positions up in the remote offset index
// and reading whole batches with ranged reads of fixed-size chunks, through
// a disk Cache of indexes and chunks bounded by
// remote.log.index.file.cache.total.size.bytes. The same pool answers
// ListOffsets by timestamp from the remote time indexes, and a follower's
// aux state (AuxStateBefore) comes from the leader-epoch checkpoint and
// producer snapshot of the segment before the leader's local start. The
// index formats are drawn in index.go.
//
// # Where remote segment metadata lives
//
// Kafka records the states of each remote segment (COPY_SEGMENT_STARTED,
// COPY_SEGMENT_FINISHED, DELETE_SEGMENT_STARTED, DELETE_SEGMENT_FINISHED) in
// the replicated internal topic __remote_log_metadata. Samsa records them in
// the bucket itself, as small immutable metadata objects beside the segment
// they describe. The bucket is the one store that outlives every broker and
// the metadata quorum, so a partition, or a whole cluster, can be rebuilt
// from the bucket alone (Redpanda's manifests take the same view); a second
// log would add a replicated topic whose loss orphans every segment. Object
// stores are strongly consistent for read-after-write and list-after-write
// (S3 since 2020, GCS, Azure Blob, the file driver), which is what makes a
// listing an exact view of the states.
//
// # Object layout
//
// Every key starts with the broker's rsm.config.bucket.prefix. One upload of
// one segment is a directory of its own, named by a random segment id, so
// keys are unique per upload and never rewritten:
//
//	<prefix>tier/v1/<topic-id>/<partition>/<base-offset %020d>-<segment-id>/
//	    copy-started.meta      metadata, state COPY_SEGMENT_STARTED (written first)
//	    segment.log            the .log file, byte for byte
//	    offset.index           the .index file, trimmed to its entries
//	    time.index             the .timeindex file, trimmed to its entries
//	    txn.index              the .txnindex file (absent when empty)
//	    producer.snapshot      the producer snapshot at the segment's end offset+1 (absent when none)
//	    leader-epoch.checkpoint the leader-epoch entries up to the segment's end
//	    copy-finished.meta     metadata, state COPY_SEGMENT_FINISHED (written last)
//	    delete-started.meta    metadata, state DELETE_SEGMENT_STARTED
//	<prefix>tier/v1/<topic-id>/<partition>/manifest/
//	    <leader-epoch %010d>-<version %020d>.manifest   partition manifest
//	<prefix>tier/v1/cluster/topics/<topic-id>/
//	    <leader-epoch %010d>-<version %020d>.manifest   topic manifest
//
// <topic-id> is the topic's UUID in lower-case hex; <segment-id> is 16 random
// bytes in lower-case hex. A segment is readable only once copy-finished.meta
// exists, so a leader that dies mid-upload leaves a directory with
// copy-started.meta and no copy-finished.meta: an orphan, which the next
// leader deletes once it is older than an upload could take. Deletion writes
// delete-started.meta, deletes the data objects, then the metadata objects,
// delete-started.meta last; DELETE_SEGMENT_FINISHED is the directory being
// gone. A segment with delete-started.meta is never served.
//
// # Metadata object (all integers big-endian)
//
//	offset  size  field
//	0       4     magic "SRSM"
//	4       2     version (1)
//	6       1     state: 0 COPY_SEGMENT_STARTED, 1 COPY_SEGMENT_FINISHED,
//	              2 DELETE_SEGMENT_STARTED, 3 DELETE_SEGMENT_FINISHED
//	7       1     reserved, 0
//	8       16    topic id
//	24      4     partition
//	28      16    segment id
//	44      8     base offset
//	52      8     end offset (last offset in the segment, inclusive)
//	60      8     max timestamp ms
//	68      4     broker id of the uploading leader
//	72      4     leader epoch of the uploading leader (the fencing epoch)
//	76      8     event timestamp ms (when this state was recorded)
//	84      8     segment size bytes (the .log object)
//	92      4     N, number of leader-epoch entries (at most 65536)
//	96      12*N  N entries: epoch int32, start offset int64, ascending
//	...     1     M, number of file entries (at most 8)
//	...     9*M   M entries: kind uint8, size int64
//	...     4     CRC-32C (Castagnoli) of every byte before it
//
// # Manifests
//
// Besides the per-upload metadata, the bucket holds what a cluster needs to
// be rebuilt from it alone (restore.go, samsa.tiered.restore.enable): a
// partition manifest per partition, written by its leader after each task
// that changed it (its readable segments with their offsets, sizes and
// leader epochs, and the log start offset), and the cluster manifest, one
// topic manifest per tiered topic, written by the leader of its partition
// 0 whenever the topic's definition changed (name, topic id, partition
// count, replication factor, config overrides). Manifests are versioned:
// a write puts a new key, never rewriting one, then deletes the versions
// below it; readers take the last key in key order. The leader epoch leads
// the name, so a deposed leader's late write sorts below its successor's.
// Deleting a topic deletes its topic manifest first.
//
// Both kinds share one envelope (integers big-endian):
//
//	offset  size  field
//	0       4     magic "SPMF" (partition manifest) or "STMF" (topic manifest)
//	4       2     version (1)
//	6       4     L, body length (at most 64 MiB)
//	10      L     body, JSON (below)
//	10+L    4     CRC-32C (Castagnoli) of every byte before it
//
// A partition manifest's body (ids lower-case hex, as in keys; at most
// 2^20 segments, ascending, not overlapping):
//
//	{"topicId":"…","partition":0,"leaderEpoch":3,"brokerId":1,
//	 "logStartOffset":0,"writtenMs":1700000000000,
//	 "segments":[{"segmentId":"…","baseOffset":0,"endOffset":99,
//	   "maxTimestampMs":1700000000000,"leaderEpoch":3,"sizeBytes":1048576,
//	   "leaderEpochs":[[0,0],[3,40]]}]}
//
// A topic manifest's body (at most 1024 configs):
//
//	{"name":"orders","topicId":"…","partitions":6,"replicationFactor":3,
//	 "configs":{"remote.storage.enable":"true","retention.ms":"-1"},
//	 "leaderEpoch":3,"brokerId":1,"writtenMs":1700000000000}
//
// # Fencing
//
// An upload carries the leader epoch of the leader that made it. A segment
// is part of the partition's lineage when its leader-epoch entries agree
// with the current leader's epoch cache up to its end offset; a deposed
// leader's upload whose epochs the new leader's log never had is outside
// the lineage, never served, and deleted by retention. Of two finished
// uploads of overlapping offsets, the one of the higher leader epoch wins
// the offsets they share; the other still serves the offsets before the
// winner's first (a new leader's segments may roll at other offsets than
// the old leader's), and is deleted only when a winner covers its first
// offset.
package tier
