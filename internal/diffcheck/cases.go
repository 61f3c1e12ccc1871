package diffcheck

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/record"
)

// FixtureTopic is created on both nodes before any case runs, with
// fixturePartitions partitions and fixtureRecords records in partition 0.
const (
	FixtureTopic      = "diffcheck"
	fixturePartitions = 3
	fixtureRecords    = 10
	missingTopic      = "diffcheck-missing"
	missingGroup      = "diffcheck-no-such-group"
	requestTimeoutMs  = 30_000
)

// Case is one request sent to both nodes at each version both serve.
type Case struct {
	Key  int16
	Name string
	// MinVersion and MaxVersion, when set, narrow the versions the case
	// applies to (a field it needs appeared, or went away).
	MinVersion, MaxVersion int16
	// Setup, if set, returns requests run first on both nodes at their
	// newest common version; their answers are not compared.
	Setup func(version int16) []kmsg.Request
	// Request builds the compared request for one side; side resolves
	// what differs between the clusters, such as topic ids.
	Request func(side *Side, version int16) kmsg.Request
}

func (c Case) appliesTo(version int16) bool {
	return version >= c.MinVersion && (c.MaxVersion == 0 || version <= c.MaxVersion)
}

// versionedName is a name of its own for one version of one case, so the
// state one case leaves does not meet another's.
func versionedName(prefix string, version int16) string {
	return fmt.Sprintf("diffcheck-%s-v%d", prefix, version)
}

func createTopicRequest(name string, partitions int32, configs map[string]string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = requestTimeoutMs
	topic := kmsg.NewCreateTopicsRequestTopic()
	topic.Topic = name
	topic.NumPartitions = partitions
	topic.ReplicationFactor = 1
	for key, value := range configs {
		config := kmsg.NewCreateTopicsRequestTopicConfig()
		config.Name = key
		config.Value = kmsg.StringPtr(value)
		topic.Configs = append(topic.Configs, config)
	}
	req.Topics = append(req.Topics, topic)
	return req
}

// idempotentBatch is recordBatch from a producer id neither node
// assigned, at a sequence that does not start at 0.
func idempotentBatch(producerID int64, baseSequence int32) []byte {
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = 1_700_000_000_000
	opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence = producerID, 0, baseSequence
	batch, err := record.Build(opts, []record.Record{{Value: []byte("idempotent")}})
	if err != nil {
		panic(err) // fixed input: cannot fail
	}
	return batch
}

// recordBatch is an uncompressed batch of count small records with no
// producer, as a plain producer sends it.
func recordBatch(count int) []byte {
	records := make([]record.Record, count)
	for i := range records {
		records[i] = record.Record{Key: []byte(fmt.Sprintf("key-%d", i)), Value: []byte(fmt.Sprintf("value-%d", i))}
	}
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = 1_700_000_000_000
	batch, err := record.Build(opts, records)
	if err != nil {
		panic(err) // fixed input: cannot fail
	}
	return batch
}

func produceRequest(side *Side, version int16, topic string, partition int32, batch []byte) kmsg.Request {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = requestTimeoutMs
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	if version >= 13 {
		t.TopicID = side.TopicID(topic)
	}
	p := kmsg.NewProduceRequestTopicPartition()
	p.Partition = partition
	p.Records = batch
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func fetchRequest(side *Side, version int16, topic string, partition int32, offset int64) kmsg.Request {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	req.SessionEpoch = -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic = topic
	if version >= 13 {
		t.TopicID = side.TopicID(topic)
	}
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition = partition
	p.FetchOffset = offset
	p.PartitionMaxBytes = 1 << 20
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func listOffsetsRequest(topic string, partition int32, timestamp int64) kmsg.Request {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = topic
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition = partition
	p.Timestamp = timestamp
	p.MaxNumOffsets = 1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func metadataRequest(version int16, topics ...string) kmsg.Request {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	for _, name := range topics {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, t)
	}
	return req
}

func describeConfigsRequest(resourceType kmsg.ConfigResourceType, name string, keys ...string) kmsg.Request {
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType = resourceType
	r.ResourceName = name
	r.ConfigNames = keys
	req.Resources = append(req.Resources, r)
	return req
}

func alterConfigsRequest(name, key, value string) kmsg.Request {
	req := kmsg.NewPtrAlterConfigsRequest()
	req.ValidateOnly = true
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType = kmsg.ConfigResourceTypeTopic
	r.ResourceName = name
	c := kmsg.NewAlterConfigsRequestResourceConfig()
	c.Name = key
	c.Value = kmsg.StringPtr(value)
	r.Configs = append(r.Configs, c)
	req.Resources = append(req.Resources, r)
	return req
}

func incrementalAlterConfigsRequest(name, key, value string) kmsg.Request {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = true
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType = kmsg.ConfigResourceTypeTopic
	r.ResourceName = name
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name = key
	c.Value = kmsg.StringPtr(value)
	c.Op = kmsg.IncrementalAlterConfigOpSet
	r.Configs = append(r.Configs, c)
	req.Resources = append(req.Resources, r)
	return req
}

func offsetCommitRequest(side *Side, version int16, group, topic string, partition int32, offset int64) kmsg.Request {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group = group
	req.Generation = -1
	req.RetentionTimeMillis = -1
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = topic
	if version >= 10 && side != nil {
		t.TopicID = side.TopicID(topic)
	}
	p := kmsg.NewOffsetCommitRequestTopicPartition()
	p.Partition = partition
	p.Offset = offset
	p.LeaderEpoch = -1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func offsetFetchRequest(side *Side, version int16, group, topic string, partition int32) kmsg.Request {
	req := kmsg.NewPtrOffsetFetchRequest()
	if version >= 8 {
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = group
		g.MemberEpoch = -1
		t := kmsg.NewOffsetFetchRequestGroupTopic()
		t.Topic = topic
		if version >= 10 {
			t.TopicID = side.TopicID(topic)
		}
		t.Partitions = []int32{partition}
		g.Topics = append(g.Topics, t)
		req.Groups = append(req.Groups, g)
		return req
	}
	req.Group = group
	t := kmsg.NewOffsetFetchRequestTopic()
	t.Topic = topic
	t.Partitions = []int32{partition}
	req.Topics = append(req.Topics, t)
	return req
}

func joinGroupRequest(group string) kmsg.Request {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group = group
	req.SessionTimeoutMillis = 10_000
	req.RebalanceTimeoutMillis = 10_000
	req.ProtocolType = "consumer"
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name = "range"
	p.Metadata = []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	req.Protocols = append(req.Protocols, p)
	return req
}

func oneTopic(name string) func(int16) []kmsg.Request {
	return func(version int16) []kmsg.Request {
		return []kmsg.Request{createTopicRequest(name, 1, nil)}
	}
}

// groupsUsed and transactionsUsed are the coordinator keys the cases use,
// for the warm-up that waits until their coordinators have loaded.
func groupsUsed() []string {
	groups := []string{missingGroup, "diffcheck-group"}
	for v := range int16(maxCaseVersion + 1) {
		for _, prefix := range []string{"commit", "commit-unknown", "commit-member", "join"} {
			groups = append(groups, versionedName(prefix, v))
		}
	}
	return groups
}

var transactionsUsed = func() []string {
	ids := []string{"diffcheck-txn", "diffcheck-no-such-txn"}
	for v := range int16(maxCaseVersion + 1) {
		ids = append(ids, versionedName("txn-init", v), versionedName("txn-timeout", v))
	}
	return ids
}()

// maxCaseVersion bounds the versions groupsUsed names groups for.
const maxCaseVersion = 20

// Cases are the compared requests, in the order they run.
func Cases() []Case {
	produceTopic := func(v int16) string { return versionedName("produce", v) }
	return append([]Case{
		{Key: 0, Name: "valid batch, acks=all", MinVersion: 3,
			Setup: func(v int16) []kmsg.Request { return oneTopic(produceTopic(v))(v) },
			Request: func(s *Side, v int16) kmsg.Request {
				return produceRequest(s, v, produceTopic(v), 0, recordBatch(3))
			}},
		{Key: 0, Name: "unknown topic", MinVersion: 3, MaxVersion: 12, Request: func(s *Side, v int16) kmsg.Request {
			return produceRequest(s, v, missingTopic, 0, recordBatch(1))
		}},
		{Key: 0, Name: "partition out of range", MinVersion: 3, Request: func(s *Side, v int16) kmsg.Request {
			return produceRequest(s, v, FixtureTopic, 99, recordBatch(1))
		}},
		{Key: 0, Name: "corrupt batch (bad CRC)", MinVersion: 3, Request: func(s *Side, v int16) kmsg.Request {
			batch := recordBatch(1)
			batch[len(batch)-1] ^= 0xff
			return produceRequest(s, v, FixtureTopic, 1, batch)
		}},
		{Key: 0, Name: "batch above max.message.bytes", MinVersion: 3,
			Setup: func(v int16) []kmsg.Request {
				return []kmsg.Request{createTopicRequest(versionedName("oversize", v), 1, map[string]string{"max.message.bytes": "100"})}
			},
			Request: func(s *Side, v int16) kmsg.Request {
				return produceRequest(s, v, versionedName("oversize", v), 0, recordBatch(20))
			}},
		{Key: 0, Name: "idempotent batch, sequence gap from an unknown producer", MinVersion: 3, Request: func(s *Side, v int16) kmsg.Request {
			return produceRequest(s, v, FixtureTopic, 2, idempotentBatch(424_242, 5))
		}},
		{Key: 0, Name: "acks=2", MinVersion: 3, Request: func(s *Side, v int16) kmsg.Request {
			req := produceRequest(s, v, FixtureTopic, 1, recordBatch(1)).(*kmsg.ProduceRequest)
			req.Acks = 2
			return req
		}},
		{Key: 1, Name: "leader epoch from the future", MinVersion: 9, Request: func(s *Side, v int16) kmsg.Request {
			req := fetchRequest(s, v, FixtureTopic, 0, 0).(*kmsg.FetchRequest)
			req.Topics[0].Partitions[0].CurrentLeaderEpoch = 99
			return req
		}},
		{Key: 1, Name: "partition out of range", Request: func(s *Side, v int16) kmsg.Request {
			return fetchRequest(s, v, FixtureTopic, 99, 0)
		}},
		{Key: 2, Name: "leader epoch from the future", MinVersion: 4, Request: func(s *Side, v int16) kmsg.Request {
			req := listOffsetsRequest(FixtureTopic, 0, -1).(*kmsg.ListOffsetsRequest)
			req.Topics[0].Partitions[0].CurrentLeaderEpoch = 99
			return req
		}},
		{Key: 3, Name: "invalid topic name", MinVersion: 4, Request: func(s *Side, v int16) kmsg.Request {
			return metadataRequest(v, "bad/name")
		}},
		{Key: 23, Name: "leader epoch from the future", MinVersion: 2, Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrOffsetForLeaderEpochRequest()
			req.ReplicaID = -1
			t := kmsg.NewOffsetForLeaderEpochRequestTopic()
			t.Topic = FixtureTopic
			p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			p.Partition, p.CurrentLeaderEpoch, p.LeaderEpoch = 0, 99, 0
			t.Partitions = append(t.Partitions, p)
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 22, Name: "transactional producer", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID = kmsg.StringPtr(versionedName("txn-init", v))
			req.TransactionTimeoutMillis = 60_000
			req.ProducerID, req.ProducerEpoch = -1, -1
			return req
		}},
		{Key: 22, Name: "transaction timeout above the maximum", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID = kmsg.StringPtr(versionedName("txn-timeout", v))
			req.TransactionTimeoutMillis = 1_000_000_000
			req.ProducerID, req.ProducerEpoch = -1, -1
			return req
		}},
		{Key: 1, Name: "from offset 0", Request: func(s *Side, v int16) kmsg.Request {
			return fetchRequest(s, v, FixtureTopic, 0, 0)
		}},
		{Key: 1, Name: "offset out of range", Request: func(s *Side, v int16) kmsg.Request {
			return fetchRequest(s, v, FixtureTopic, 0, 1000)
		}},
		{Key: 1, Name: "unknown topic", Request: func(s *Side, v int16) kmsg.Request {
			return fetchRequest(s, v, missingTopic, 0, 0)
		}},
		{Key: 2, Name: "latest", Request: func(s *Side, v int16) kmsg.Request { return listOffsetsRequest(FixtureTopic, 0, -1) }},
		{Key: 2, Name: "earliest", Request: func(s *Side, v int16) kmsg.Request { return listOffsetsRequest(FixtureTopic, 0, -2) }},
		{Key: 2, Name: "unknown topic", Request: func(s *Side, v int16) kmsg.Request { return listOffsetsRequest(missingTopic, 0, -1) }},
		{Key: 2, Name: "partition out of range", Request: func(s *Side, v int16) kmsg.Request { return listOffsetsRequest(FixtureTopic, 99, -1) }},
		{Key: 3, Name: "one topic", Request: func(s *Side, v int16) kmsg.Request { return metadataRequest(v, FixtureTopic) }},
		{Key: 3, Name: "unknown topic, no auto-creation", MinVersion: 4, Request: func(s *Side, v int16) kmsg.Request {
			return metadataRequest(v, missingTopic)
		}},
		{Key: 8, Name: "commit without a group generation", Request: func(s *Side, v int16) kmsg.Request {
			return offsetCommitRequest(s, v, versionedName("commit", v), FixtureTopic, 0, 5)
		}},
		{Key: 8, Name: "unknown topic", MaxVersion: 9, Request: func(s *Side, v int16) kmsg.Request {
			return offsetCommitRequest(s, v, versionedName("commit-unknown", v), missingTopic, 0, 5)
		}},
		{Key: 8, Name: "unknown topic id", MinVersion: 10, Request: func(s *Side, v int16) kmsg.Request {
			return offsetCommitRequest(nil, v, versionedName("commit-unknown", v), missingTopic, 0, 5)
		}},
		{Key: 8, Name: "unknown member of an empty group", MinVersion: 1, Request: func(s *Side, v int16) kmsg.Request {
			req := offsetCommitRequest(s, v, versionedName("commit-member", v), FixtureTopic, 0, 5).(*kmsg.OffsetCommitRequest)
			req.Generation, req.MemberID = 3, "no-such-member"
			return req
		}},
		{Key: 9, Name: "committed offset", Request: func(s *Side, v int16) kmsg.Request {
			return offsetFetchRequest(s, v, versionedName("commit", v), FixtureTopic, 0)
		}},
		{Key: 9, Name: "unknown group", Request: func(s *Side, v int16) kmsg.Request {
			return offsetFetchRequest(s, v, missingGroup, FixtureTopic, 0)
		}},
		{Key: 10, Name: "group coordinator", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.CoordinatorKey = "diffcheck-group"
			if v >= 4 {
				req.CoordinatorKeys = []string{"diffcheck-group"}
			}
			return req
		}},
		{Key: 10, Name: "transaction coordinator", MinVersion: 1, Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.CoordinatorType = 1
			req.CoordinatorKey = "diffcheck-txn"
			if v >= 4 {
				req.CoordinatorKeys = []string{"diffcheck-txn"}
			}
			return req
		}},
		{Key: 11, Name: "empty group id", Request: func(s *Side, v int16) kmsg.Request { return joinGroupRequest("") }},
		{Key: 11, Name: "new member", Request: func(s *Side, v int16) kmsg.Request { return joinGroupRequest(versionedName("join", v)) }},
		{Key: 12, Name: "unknown group", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrHeartbeatRequest()
			req.Group, req.Generation, req.MemberID = missingGroup, 1, "no-such-member"
			return req
		}},
		{Key: 13, Name: "unknown group", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrLeaveGroupRequest()
			req.Group, req.MemberID = missingGroup, "no-such-member"
			if v >= 3 {
				m := kmsg.NewLeaveGroupRequestMember()
				m.MemberID = "no-such-member"
				req.Members = append(req.Members, m)
			}
			return req
		}},
		{Key: 14, Name: "unknown group", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrSyncGroupRequest()
			req.Group, req.Generation, req.MemberID = missingGroup, 1, "no-such-member"
			req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
			return req
		}},
		{Key: 15, Name: "unknown group", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Groups = []string{missingGroup}
			return req
		}},
		{Key: 16, Name: "all groups", Request: func(s *Side, v int16) kmsg.Request { return kmsg.NewPtrListGroupsRequest() }},
		{Key: 17, Name: "PLAIN on a listener without SASL", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrSASLHandshakeRequest()
			req.Mechanism = "PLAIN"
			return req
		}},
		{Key: 18, Name: "versions", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrApiVersionsRequest()
			req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-diffcheck", "1.0"
			return req
		}},
		{Key: 19, Name: "new topic", Request: func(s *Side, v int16) kmsg.Request {
			return createTopicRequest(versionedName("create", v), 2, map[string]string{"cleanup.policy": "compact"})
		}},
		{Key: 19, Name: "already exists", Request: func(s *Side, v int16) kmsg.Request { return createTopicRequest(FixtureTopic, 1, nil) }},
		{Key: 19, Name: "invalid config value", Request: func(s *Side, v int16) kmsg.Request {
			return createTopicRequest(versionedName("badconfig", v), 1, map[string]string{"cleanup.policy": "bogus"})
		}},
		{Key: 19, Name: "unknown config name", Request: func(s *Side, v int16) kmsg.Request {
			return createTopicRequest(versionedName("unknownconfig", v), 1, map[string]string{"no.such.config": "1"})
		}},
		{Key: 19, Name: "zero partitions", Request: func(s *Side, v int16) kmsg.Request {
			return createTopicRequest(versionedName("zeropartitions", v), 0, nil)
		}},
		{Key: 19, Name: "invalid topic name", Request: func(s *Side, v int16) kmsg.Request {
			return createTopicRequest("bad/name", 1, nil)
		}},
		{Key: 19, Name: "validate only", MinVersion: 1, Request: func(s *Side, v int16) kmsg.Request {
			req := createTopicRequest(versionedName("validate", v), 4, nil)
			req.ValidateOnly = true
			return req
		}},
		{Key: 20, Name: "existing topic", Setup: oneTopicFor("delete"), Request: func(s *Side, v int16) kmsg.Request {
			return deleteTopicsRequest(v, versionedName("delete", v))
		}},
		{Key: 20, Name: "unknown topic", Request: func(s *Side, v int16) kmsg.Request { return deleteTopicsRequest(v, missingTopic) }},
		{Key: 21, Name: "beyond the high watermark", Request: func(s *Side, v int16) kmsg.Request {
			return deleteRecordsRequest(FixtureTopic, 0, 1000)
		}},
		{Key: 21, Name: "unknown topic", Request: func(s *Side, v int16) kmsg.Request { return deleteRecordsRequest(missingTopic, 0, 1) }},
		{Key: 22, Name: "idempotent producer", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionTimeoutMillis = 60_000
			req.ProducerID, req.ProducerEpoch = -1, -1
			return req
		}},
		{Key: 23, Name: "epoch 0 of a partition", MinVersion: 2, Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrOffsetForLeaderEpochRequest()
			req.ReplicaID = -1
			t := kmsg.NewOffsetForLeaderEpochRequestTopic()
			t.Topic = FixtureTopic
			p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			p.Partition, p.CurrentLeaderEpoch, p.LeaderEpoch = 0, -1, 0
			t.Partitions = append(t.Partitions, p)
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 26, Name: "unknown transactional id", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrEndTxnRequest()
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = "diffcheck-no-such-txn", 1000, 0, true
			return req
		}},
		{Key: 24, Name: "unknown transactional id", MaxVersion: 3, Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrAddPartitionsToTxnRequest()
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = "diffcheck-no-such-txn", 1000, 0
			t := kmsg.NewAddPartitionsToTxnRequestTopic()
			t.Topic, t.Partitions = FixtureTopic, []int32{0}
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 25, Name: "unknown transactional id", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrAddOffsetsToTxnRequest()
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = "diffcheck-no-such-txn", 1000, 0, "diffcheck-group"
			return req
		}},
		{Key: 28, Name: "unknown transactional id", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrTxnOffsetCommitRequest()
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = "diffcheck-no-such-txn", 1000, 0, "diffcheck-group"
			req.Generation = -1
			t := kmsg.NewTxnOffsetCommitRequestTopic()
			t.Topic = FixtureTopic
			if v >= 6 {
				t.TopicID = s.TopicID(FixtureTopic)
			}
			p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			p.Offset, p.LeaderEpoch = 1, -1
			t.Partitions = append(t.Partitions, p)
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 43, Name: "preferred leader already leads", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrElectLeadersRequest()
			req.TimeoutMillis = requestTimeoutMs
			t := kmsg.NewElectLeadersRequestTopic()
			t.Topic, t.Partitions = FixtureTopic, []int32{0}
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 43, Name: "unknown topic", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrElectLeadersRequest()
			req.TimeoutMillis = requestTimeoutMs
			t := kmsg.NewElectLeadersRequestTopic()
			t.Topic, t.Partitions = missingTopic, []int32{0}
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 45, Name: "unknown topic", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
			req.TimeoutMillis = requestTimeoutMs
			t := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			t.Topic = missingTopic
			p := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
			p.Replicas = []int32{1}
			t.Partitions = append(t.Partitions, p)
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 45, Name: "replica on an unknown broker", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
			req.TimeoutMillis = requestTimeoutMs
			t := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			t.Topic = FixtureTopic
			p := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
			p.Replicas = []int32{99}
			t.Partitions = append(t.Partitions, p)
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 46, Name: "no reassignments", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrListPartitionReassignmentsRequest()
			req.TimeoutMillis = requestTimeoutMs
			return req
		}},
		{Key: 55, Name: "metadata partition", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrDescribeQuorumRequest()
			t := kmsg.NewDescribeQuorumRequestTopic()
			t.Topic = "__cluster_metadata"
			t.Partitions = append(t.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 32, Name: "topic configs by name", Request: func(s *Side, v int16) kmsg.Request {
			return describeConfigsRequest(kmsg.ConfigResourceTypeTopic, FixtureTopic,
				"cleanup.policy", "retention.ms", "segment.bytes", "max.message.bytes", "min.insync.replicas", "compression.type")
		}},
		{Key: 32, Name: "unknown topic", Request: func(s *Side, v int16) kmsg.Request {
			return describeConfigsRequest(kmsg.ConfigResourceTypeTopic, missingTopic, "cleanup.policy")
		}},
		{Key: 32, Name: "broker configs by name", Request: func(s *Side, v int16) kmsg.Request {
			return describeConfigsRequest(kmsg.ConfigResourceTypeBroker, "1", "num.io.threads", "log.retention.hours", "message.max.bytes")
		}},
		{Key: 33, Name: "invalid value, validate only", Request: func(s *Side, v int16) kmsg.Request {
			return alterConfigsRequest(FixtureTopic, "retention.ms", "not-a-number")
		}},
		{Key: 33, Name: "valid value, validate only", Request: func(s *Side, v int16) kmsg.Request {
			return alterConfigsRequest(FixtureTopic, "retention.ms", "3600000")
		}},
		{Key: 35, Name: "one topic", MinVersion: 1, Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrDescribeLogDirsRequest()
			t := kmsg.NewDescribeLogDirsRequestTopic()
			t.Topic, t.Partitions = FixtureTopic, []int32{0}
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 37, Name: "no new partitions", Request: func(s *Side, v int16) kmsg.Request {
			return createPartitionsRequest(FixtureTopic, fixturePartitions)
		}},
		{Key: 37, Name: "unknown topic", Request: func(s *Side, v int16) kmsg.Request { return createPartitionsRequest(missingTopic, 2) }},
		{Key: 37, Name: "add a partition", Setup: oneTopicFor("grow"), Request: func(s *Side, v int16) kmsg.Request {
			return createPartitionsRequest(versionedName("grow", v), 2)
		}},
		{Key: 42, Name: "unknown group", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrDeleteGroupsRequest()
			req.Groups = []string{missingGroup}
			return req
		}},
		{Key: 44, Name: "invalid value, validate only", Request: func(s *Side, v int16) kmsg.Request {
			return incrementalAlterConfigsRequest(FixtureTopic, "retention.ms", "not-a-number")
		}},
		{Key: 44, Name: "unknown config name, validate only", Request: func(s *Side, v int16) kmsg.Request {
			return incrementalAlterConfigsRequest(FixtureTopic, "no.such.config", "1")
		}},
		{Key: 44, Name: "valid value, validate only", Request: func(s *Side, v int16) kmsg.Request {
			return incrementalAlterConfigsRequest(FixtureTopic, "retention.ms", "3600000")
		}},
		{Key: 47, Name: "unknown group", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrOffsetDeleteRequest()
			req.Group = missingGroup
			t := kmsg.NewOffsetDeleteRequestTopic()
			t.Topic = FixtureTopic
			p := kmsg.NewOffsetDeleteRequestTopicPartition()
			t.Partitions = append(t.Partitions, p)
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 60, Name: "cluster", Request: func(s *Side, v int16) kmsg.Request { return kmsg.NewPtrDescribeClusterRequest() }},
		{Key: 61, Name: "a partition with no producers", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrDescribeProducersRequest()
			t := kmsg.NewDescribeProducersRequestTopic()
			t.Topic, t.Partitions = FixtureTopic, []int32{0}
			req.Topics = append(req.Topics, t)
			return req
		}},
		{Key: 65, Name: "unknown transactional id", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrDescribeTransactionsRequest()
			req.TransactionalIDs = []string{"diffcheck-no-such-txn"}
			return req
		}},
		{Key: 66, Name: "all transactions", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrListTransactionsRequest()
			req.DurationFilterMillis = -1
			return req
		}},
		{Key: 68, Name: "empty group id", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.RebalanceTimeoutMillis = 10_000
			req.SubscribedTopicNames = []string{FixtureTopic}
			return req
		}},
		{Key: 69, Name: "unknown group", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrConsumerGroupDescribeRequest()
			req.Groups = []string{missingGroup}
			return req
		}},
		{Key: 75, Name: "one topic", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrDescribeTopicPartitionsRequest()
			t := kmsg.NewDescribeTopicPartitionsRequestTopic()
			t.Topic = FixtureTopic
			req.Topics = append(req.Topics, t)
			req.ResponsePartitionLimit = 100
			return req
		}},
	}, clientMetricsCases()...)
}

func oneTopicFor(prefix string) func(int16) []kmsg.Request {
	return func(v int16) []kmsg.Request { return oneTopic(versionedName(prefix, v))(v) }
}

func deleteTopicsRequest(version int16, name string) kmsg.Request {
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = requestTimeoutMs
	if version >= 6 {
		t := kmsg.NewDeleteTopicsRequestTopic()
		t.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, t)
	} else {
		req.TopicNames = []string{name}
	}
	return req
}

func deleteRecordsRequest(topic string, partition int32, offset int64) kmsg.Request {
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = requestTimeoutMs
	t := kmsg.NewDeleteRecordsRequestTopic()
	t.Topic = topic
	p := kmsg.NewDeleteRecordsRequestTopicPartition()
	p.Partition, p.Offset = partition, offset
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func createPartitionsRequest(topic string, count int32) kmsg.Request {
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = requestTimeoutMs
	t := kmsg.NewCreatePartitionsRequestTopic()
	t.Topic, t.Count = topic, count
	req.Topics = append(req.Topics, t)
	return req
}
