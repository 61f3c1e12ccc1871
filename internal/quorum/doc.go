// Package quorum is Samsa's Raft metadata quorum: the controllers of a
// cluster replicate the metadata log __cluster_metadata-0 with
// go.etcd.io/raft/v3, as KRaft (KIP-500, KIP-595, KIP-630) replicates it with
// Kafka's own Raft.
//
// etcd raft is the deterministic core: it has no goroutines, clocks or I/O.
// This package is the thin shell around it:
//
//	Quorum (driver.go)   one goroutine owns the raft.RawNode: it feeds it ticks,
//	  │                  received messages and proposals, and for each Ready
//	  │                  persists entries and state, sends messages, applies
//	  │                  committed entries to the StateMachine, takes snapshots
//	  ├─ storage         raft.Storage over our partition log (internal/log),
//	  │   (storage.go)   quorum-state and snapshot files, with every entry since
//	  │                  the last snapshot cached in memory
//	  └─ transport       TCP between controllers: one outbound connection per
//	      (transport.go) peer with a bounded send queue, size-framed messages
//
// # Voters (KIP-853)
//
// A new cluster starts at kraft.version 0 with the voters of
// controller.quorum.voters. SetKRaftVersion(1) (UpdateFeatures) writes that
// set, with each voter's endpoints, into the log, and every voter takes a
// snapshot at it; from then on voters change online, one at a time, through
// etcd raft's configuration changes (membership.go): AddVoter adds a raft
// learner, catches it up and promotes it; RemoveVoter removes a voter (a
// removed leader steps down); UpdateVoter changes a voter's endpoints. A
// controller started with controller.quorum.bootstrap.servers and no voters
// is an observer: its raft node has no configuration and waits for the
// leader that adds it, whose first message is a snapshot holding the voter
// set (the log below the upgrade has no record of its voters).
//
// Every change is one EntryConfChangeV2 entry whose context is the whole
// voter set after it, so the latest such entry in a log (or the snapshot
// below it) tells every node the voters and their endpoints after a restart,
// as Kafka's VotersRecord does. The transport's peers follow the latest set,
// committed or not. raft's ConfState is restored from the snapshot and the
// configuration changes after it are applied again on restart.
//
// # Offsets
//
// Raft entry i is stored at log offset i-1, so the offsets of the metadata log
// are raft indexes shifted by one and Kafka's names line up: the high
// watermark is raft's commit index, a snapshot taken at index i has end
// offset i (it holds offsets 0..i-1), and the log start offset after
// compaction is that snapshot's index. All values given to one Propose form
// one entry and share one offset. The leader writes an empty entry when it is
// elected; empty entries are not applied, so the offsets a StateMachine sees
// have gaps.
//
// # Partition directory
//
//	<metadata.log.dir>/__cluster_metadata-0/
//	    00000000000000000000.log      one RecordBatch v2 per raft entry
//	    00000000000000000000.index    (internal/log's segment files)
//	    00000000000000000000.timeindex
//	    leader-epoch-checkpoint       epoch = raft term
//	    quorum-state                  term, vote, commit (JSON)
//	    00000000000000004096-0000000003.checkpoint   latest snapshot
//
// # .log: one batch per raft entry
//
// Each entry is a RecordBatch v2 (see package record) holding one record:
//
//	batch field           value
//	baseOffset            raft index - 1
//	partitionLeaderEpoch  raft term (at most 2^31-1)
//	attributes            0: uncompressed, not transactional, not control
//	lastOffsetDelta       0
//	baseTimestamp         wall-clock time of the local append, milliseconds
//	producerId/Epoch/Seq  -1 / -1 / -1
//	recordCount           1
//	record key            null
//	record value          entry type (1 byte) then the entry data:
//
//	offset  size  field
//	     0     1  type   raftpb.EntryType: 0 normal, 1 conf change, 2 conf change v2
//	     1     .  data   raft entry data; empty for the leader's no-op entry
//
// A conf change v2 entry's data is a protobuf raftpb.ConfChangeV2 with one
// change (add learner, add node, remove node or update node; transition
// auto) whose context is
//
//	offset  size  field
//	     0     8  proposalId   big-endian, as in a proposal
//	     8     .  voters record: the voter set after the change
//
// # Voters record
//
// A voter set (VoterSet), big-endian:
//
//	offset  size  field
//	     0     1  version       0
//	     1     2  kraftVersion  0 or 1
//	     3     4  memberCount   m, at most 1024, ids ascending
//	     7     .  m times:
//	                 4  id           > 0
//	                16  directoryId  zero when unknown
//	                 1  flags        bit 0: learner (being added, not voting)
//	                 1  endpointCount e, at most 16; the first is dialled
//	                 .  e times: 2 nameLength, name, 2 hostLength, host, 2 port
//
// The data of a normal entry written by Propose is a proposal:
//
//	offset  size  field
//	     0     1  version      0
//	     1     8  proposalId   big-endian; unique within the proposer's process
//	                           and term, so the proposer can tell its entry apart
//	     9     4  valueCount   big-endian, >= 1
//	    13     .  valueCount times:
//	                 4  length  big-endian
//	                 .  value   length bytes
//
// For example the proposal with id 7 of the single value "ab" is the 19 bytes
//
//	00  00 00 00 00 00 00 00 07  00 00 00 01  00 00 00 02  61 62
//
// # quorum-state
//
// The raft HardState, modelled on KRaft's file of the same name: UTF-8 JSON,
// replaced atomically (write quorum-state.tmp, fsync, rename, fsync dir):
//
//	{"data_version":0,"nodeId":1,"leaderEpoch":5,"votedId":2,
//	 "commitIndex":41,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}]}
//
// leaderEpoch is the raft term, votedId the vote in that term (-1 for none).
// It is rewritten whenever the term or the vote changes, before any message
// that depends on them is sent. commitIndex is only a lower bound: it is
// written with term and vote changes and at shutdown, not with every commit
// (raft relearns the commit index from the leader). nodeId must match
// node.id. currentVoters is the voter set the directory was created with (the
// raft configuration below the first snapshot; empty for a node that joined
// through controller.quorum.bootstrap.servers); while kraft.version is 0 it
// must match controller.quorum.voters, after that the log's voter set wins.
//
// # <endOffset>-<epoch>.checkpoint: snapshots
//
// The name is the snapshot's raft index (its end offset) in 20 digits, a
// dash, and its raft term in 10 digits, as KRaft names snapshots. The
// contents (big-endian):
//
//	offset  size  field
//	     0     4  magic          "SQSN" (53 51 53 4e)
//	     4     2  version        1
//	     6     8  index          raft index of the last entry included
//	    14     8  term           raft term of that entry
//	    22     8  payloadLength  p
//	    30     p  payload
//	  30+p     4  crc            CRC-32C (Castagnoli) of every byte before it
//
// The payload is also the data of the raft snapshot a leader sends:
//
//	offset  size  field
//	     0     4  votersLength  v
//	     4     v  voters record: the voter set at index (its raft ConfState)
//	   4+v     .  StateMachine.Snapshot at that index
//
// Version 0 files (written before kraft.version 1 existed) are still read:
// after the version, index and term they hold a 4-byte voterCount, the
// voter ids (4 bytes each, ascending), an 8-byte dataLength and the state
// machine data, then the crc; their voters take their endpoints from
// controller.quorum.voters.
//
// A snapshot is written atomically (<name>.tmp, fsync, rename, fsync dir);
// only the newest is kept. After it is written the log below its end offset
// is deleted (whole segments) and its entries dropped from memory.
//
// # Transport
//
// A controller dials each peer it sends to and keeps one connection per peer,
// used in one direction only. The peers are the members of the latest voter
// set (and, before the log names them, the voters controller.quorum.voters
// or the bootstrap servers gave); a connection from a node that is none of
// them is refused. A connection opens with a 14-byte preamble and
// then carries frames:
//
//	preamble                          frame, repeated
//	offset  size  field               offset  size  field
//	     0     4  magic "SQRM"             0     4  length n, big-endian,
//	     4     2  version 0                            1 <= n <= max frame
//	     6     4  from node id             4     n  raftpb.Message (protobuf)
//	    10     4  to node id
//
// The receiver closes the connection on a bad preamble, a frame length out of
// range, a message that does not parse, or a message whose From or To does
// not match the preamble. Snapshots travel whole inside MsgSnap, so the frame
// limit bounds the snapshot size.
//
// The sender gives a connection up and redials when a write fails: when it
// misses its deadline, or when what was written stays unacknowledged by the
// peer's TCP for controller.quorum.request.timeout.ms (TCP_USER_TIMEOUT), as
// when a partition cuts the peer off. Otherwise the messages would sit in the
// kernel's retransmission queue, whose exponential backoff delays them by
// seconds to minutes after the partition heals. Failed dials are retried
// after controller.quorum.retry.backoff.ms, doubling up to 1 s.
//
// The transport is not Kafka protocol and does not authenticate with SASL,
// even when the controller listener is SASL_PLAINTEXT or SASL_SSL (whose
// Kafka requests are authenticated). Its protection is the transport: a
// controller listener that must keep strangers out runs SASL_SSL with
// ssl.client.auth=required, so only holders of a trusted certificate reach
// the port, Raft included. A SCRAM exchange in the preamble was weighed and
// left out: the voters already share a certificate authority on such a
// cluster, and a second credential for the same peers adds a secret to
// rotate without adding a check.
//
// # Durability and failure
//
// Entries are appended and fsynced, and quorum-state replaced, before the
// messages of the same Ready are sent. A torn or corrupt tail of the log is
// cut at the last good batch when the log opens (package log). A corrupt
// quorum-state or snapshot, a log that does not continue the snapshot, or a
// commit index past the end of the log stops Start with an error marked
// ErrCorrupt. A failed disk write or a failing StateMachine stops the quorum:
// Err and Stop report why, proposals fail, and the process goes on.
package quorum
