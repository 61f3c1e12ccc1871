// Package group is Samsa's group coordinator: the classic consumer group
// protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), the consumer group
// protocol of KIP-848 (ConsumerGroupHeartbeat, ConsumerGroupDescribe), the
// streams groups of KIP-1071 (StreamsGroupHeartbeat, StreamsGroupDescribe;
// streams_*.go), committed offsets
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
// Groups sit in the shard behind the small group interface: a classic
// group and a KIP-848 consumer group (consumer_group.go) live side by side,
// sharing the offsets store and the group id namespace. A consumer group
// changes only by applying its own records once they are appended, the same
// code that replays them on load (consumer_records.go).
//
// # Consumer group states (Kafka's ConsumerGroupState), derived, not stored
//
//	Empty        no members
//	Assigning    the group epoch is past the target assignment's epoch
//	Reconciling  some member has not converged on its target
//	Stable       every member is at the target epoch with its target
//
// A member is Stable, UnrevokedPartitions (it must give up partitions
// before moving to the next epoch) or UnreleasedPartitions (it moved, but
// waits for partitions their previous owner still holds); see
// consumer_reconcile.go.
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
//
// # Consumer group (KIP-848) records, Kafka 4.0's schemas
//
// Keys are not flexible: the int16 record type, then int16-length strings.
//
//	3  ConsumerGroupMetadataKey                 | type | group |
//	4  ConsumerGroupPartitionMetadataKey        | type | group |
//	5  ConsumerGroupMemberMetadataKey           | type | group | memberId |
//	6  ConsumerGroupTargetAssignmentMetadataKey | type | group |
//	7  ConsumerGroupTargetAssignmentMemberKey   | type | group | memberId |
//	8  ConsumerGroupCurrentMemberAssignmentKey  | type | group | memberId |
//	16 ConsumerGroupRegularExpressionKey        | type | group | regex |
//
// Values are version 0 and flexible: an int16 version, then the fields with
// compact strings and arrays (unsigned varint length+1, 0 for null); every
// struct ends in tagged fields, written empty and skipped when read.
//
//	3  epoch int32                                   the group epoch
//	4  topics [ topicId uuid, topicName string, numPartitions int32,
//	          partitionMetadata [ partition int32, racks [string] ] ]   (racks written empty)
//	5  instanceId string?, rackId string?, clientId string, clientHost string,
//	   subscribedTopicNames [string], subscribedTopicRegex string?,
//	   rebalanceTimeoutMs int32, serverAssignor string?
//	   (tag 0, classicMemberMetadata, of classic-protocol members: ignored)
//	6  assignmentEpoch int32                         the target assignment's epoch
//	7  topicPartitions [ topicId uuid, partitions [int32] ]      a member's target
//	8  memberEpoch int32, previousMemberEpoch int32, state int8 (0 stable,
//	   1 unrevoked, 2 unreleased), assignedPartitions [ topicId uuid,
//	   partitions [int32] ], partitionsPendingRevocation [ same ]
//	16 topics [string], version int64, timestamp int64   a resolved regex
//
// For example the epoch record of group "g" at epoch 5:
//
//	key:   00 03  00 01 67
//	value: 00 00  00 00 00 05  00
//
// # Streams group (KIP-1071) records, Kafka 4.4's schemas
//
// Keys as above. Values are version 0 and flexible; TaskIds is
// [ subtopologyId string, partitions [int32] ] with tagged fields (tag 0 of
// the current assignment's, AssignmentEpochs, is read and dropped).
//
//	17 StreamsGroupMetadata          | type | group |
//	   epoch int32, metadataHash int64;
//	   tag 0 validatedTopologyEpoch int32 (written when not -1)
//	19 StreamsGroupMemberMetadata    | type | group | memberId |
//	   instanceId string?, rackId string?, clientId string, clientHost string,
//	   rebalanceTimeoutMs int32, topologyEpoch int32, processId string,
//	   userEndpoint { host string, port uint16 }? (int8 -1 null, 1 present),
//	   clientTags [ key string, value string ]
//	20 StreamsGroupTargetAssignmentMetadata | type | group |   assignmentEpoch int32
//	21 StreamsGroupTargetAssignmentMember   | type | group | memberId |
//	   activeTasks [TaskIds], standbyTasks [TaskIds], warmupTasks [TaskIds]
//	22 StreamsGroupCurrentMemberAssignment  | type | group | memberId |
//	   memberEpoch int32, previousMemberEpoch int32, state int8 (0 stable,
//	   1 unrevoked, 2 unreleased), active, standby, warmup [TaskIds], then
//	   the same three pending revocation
//	23 StreamsGroupTopology          | type | group |
//	   epoch int32, subtopologies [ subtopologyId string, sourceTopics
//	   [string], sourceTopicRegex [string], stateChangelogTopics [TopicInfo],
//	   repartitionSinkTopics [string], repartitionSourceTopics [TopicInfo],
//	   copartitionGroups [ sourceTopics [int16], sourceTopicRegex [int16],
//	   repartitionSourceTopics [int16] ] ]
//	   TopicInfo = name string, partitions int32, replicationFactor int16,
//	   topicConfigs [ key string, value string ]
//
// For example the epoch record of streams group "g" at epoch 5, metadata
// hash 1, topology epoch 2 validated:
//
//	key:   00 11  00 01 67
//	value: 00 00  00 00 00 05  00 00 00 00 00 00 00 01  01 00 04 00 00 00 02
//
// A streams group is deleted by its members' current assignments, targets,
// the target epoch, the members' metadata, the topology and last its epoch
// record, as tombstones.
//
// A member leaves as three tombstones in this order: its current
// assignment, its target, its metadata. A group is deleted by the
// tombstones of its members, its target epoch, its regexes, its
// subscription metadata and last its epoch; an empty classic group replaced
// by a consumer group (or the reverse) gets its GroupMetadata tombstone
// (resp. these) first. Offsets outlive group tombstones, as in Kafka.
package group
