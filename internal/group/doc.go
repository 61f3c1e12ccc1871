// Package group is Samsa's group coordinator: the classic consumer group
// protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), committed offsets
// (OffsetCommit, OffsetFetch, OffsetDelete) and the group admin APIs
// (DescribeGroups, ListGroups, DeleteGroups), kept in the __consumer_offsets
// topic in Apache Kafka's own record format, so the topic means here what it
// means in Kafka and a Kafka tool can read it.
//
// # Shape
//
// A deterministic core, shard, holds the groups and offsets of one
// __consumer_offsets partition. It has no goroutines, clocks or I/O: each
// step takes the time as an argument; records to append, responses to send
// and the next timer deadline leave as output that a driver drains. The
// driver, Coordinator, owns one shard per partition this node leads behind
// that partition's mutex, appends records through Storage, runs one timer per
// partition, and replays a partition's records when this node becomes its
// leader. Responses to parked requests (a JoinGroup waiting for the rebalance,
// a follower's SyncGroup waiting for the leader's assignment) are delivered
// later, from the goroutine that completes them.
//
// Groups sit in the shard behind the small group interface, so that a
// KIP-848 consumer group can later live beside the classic one, sharing the
// offsets store and the group id namespace.
//
// # Classic group states (Kafka's ClassicGroupState)
//
//	Empty ──join──> PreparingRebalance ──all joined or timeout──> CompletingRebalance
//	  ^                 │   ^                                         │      │
//	  └── no members ───┘   └───── join, leave, member failure ───────┘      │ leader's
//	                        └───── (from Stable too) ────── Stable <─────────┘ SyncGroup
//	any state ──partition unloaded──> Dead
//
// # __consumer_offsets record formats
//
// Every key and every non-null value starts with a big-endian int16: in the
// key it is the record type, in the value the version of the value's schema.
// A null value is a tombstone. In the non-flexible versions written here a
// string is an int16 length and that many UTF-8 bytes (a nullable string
// uses length -1 for null) and bytes are an int32 length and the data. The
// flexible v4 values, read but never written, use unsigned-varint
// length+1 prefixes and end in tagged fields.
//
// OffsetCommitKey, record type 1 (type 0 has the same layout):
//
//	+-------+---------------------+---------------------+-----------+
//	| type  | group               | topic               | partition |
//	| int16 | int16 len + UTF-8   | int16 len + UTF-8   | int32     |
//	+-------+---------------------+---------------------+-----------+
//
// OffsetCommitValue, written as version 3 (version 1 when the commit set its
// own retention):
//
//	v3: | version int16=3 | offset int64 | leaderEpoch int32 | metadata string | commitTimestamp int64 |
//	v1: | version int16=1 | offset int64 | metadata string | commitTimestamp int64 | expireTimestamp int64 |
//	v0, v2: | version | offset int64 | metadata string | commitTimestamp int64 |
//	v4: v3's fields, flexible; tag 0 holds the topic ID (uuid)
//
// For example group "g", topic "t", partition 0, offset 5, leader epoch 1,
// metadata "", committed at 1000 ms:
//
//	key:   00 01  00 01 67  00 01 74  00 00 00 00
//	value: 00 03  00 00 00 00 00 00 00 05  00 00 00 01  00 00  00 00 00 00 00 00 03 e8
//
// GroupMetadataKey, record type 2:
//
//	+-------+---------------------+
//	| type  | group               |
//	| int16 | int16 len + UTF-8   |
//	+-------+---------------------+
//
// GroupMetadataValue, written as version 3:
//
//	version                int16 = 3
//	protocolType           string            "" for a group without one
//	generation             int32
//	protocol               nullable string   null when no protocol is chosen
//	leader                 nullable string   null when there is no leader
//	currentStateTimestamp  int64             ms of the last state change, -1 unknown (v2+)
//	members                int32 count, then for each member:
//	    memberId           string
//	    groupInstanceId    nullable string   static membership (v3+)
//	    clientId           string
//	    clientHost         string
//	    rebalanceTimeout   int32             ms (v1+)
//	    sessionTimeout     int32             ms
//	    subscription       bytes             the member's metadata for the chosen protocol
//	    assignment         bytes             what the leader assigned it
//
// Version 4 is version 3 made flexible. The encoders and decoders are
// kmsg's (OffsetCommitKey, OffsetCommitValue, GroupMetadataKey,
// GroupMetadataValue); DecodeRecord dispatches on the record type and
// refuses value versions Kafka does not define.
package group
