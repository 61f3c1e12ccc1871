package server

// The rows of the authorization matrix (authz_matrix_test.go): Kafka's
// AuthorizerIntegrationTest requestKeysToAcls and requestKeyToError tables,
// one case per API, built with raw kmsg requests.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

func matrixCases(principal string) []matrixCase {
	topic := func(op authz.Operation) authz.Binding { return allow(principal, authz.ResourceTopic, matrixTopic, op) }
	group := func(op authz.Operation) authz.Binding { return allow(principal, authz.ResourceGroup, matrixGroup, op) }
	txnID := func(op authz.Operation) authz.Binding {
		return allow(principal, authz.ResourceTransactionalID, matrixTxnID, op)
	}
	cluster := func(op authz.Operation) authz.Binding {
		return allow(principal, authz.ResourceCluster, authz.ClusterName, op)
	}
	acls := func(b ...authz.Binding) []authz.Binding { return b }
	return append([]matrixCase{
		{name: "Metadata", acls: acls(topic(authz.OpDescribe)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrMetadataRequest()
				rt := kmsg.NewMetadataRequestTopic()
				rt.Topic = strp(matrixTopic)
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.MetadataResponse).Topics[0].ErrorCode }},
		{name: "DescribeTopicPartitions", acls: acls(topic(authz.OpDescribe)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeTopicPartitionsRequest()
				req.ResponsePartitionLimit = 100
				rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
				rt.Topic = matrixTopic
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeTopicPartitionsResponse).Topics[0].ErrorCode }},
		{name: "Produce", acls: acls(topic(authz.OpWrite)), denied: kerr.TopicAuthorizationFailed,
			build: func(env *matrixEnv) kmsg.Request {
				req := kmsg.NewPtrProduceRequest()
				req.Acks, req.TimeoutMillis = 1, 5000
				rt := kmsg.NewProduceRequestTopic()
				rt.Topic, rt.TopicID = matrixTopic, env.topicID // v13 names topics by id
				rp := kmsg.NewProduceRequestTopicPartition()
				rp.Records = validBatch("authz")
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode }},
		{name: "Fetch", acls: acls(topic(authz.OpRead)), denied: kerr.TopicAuthorizationFailed,
			build: func(env *matrixEnv) kmsg.Request { return fetchRequest(env, -1) },
			code:  fetchCode},
		{name: "FetchFollower", acls: acls(cluster(authz.OpClusterAction)), denied: kerr.TopicAuthorizationFailed,
			build: func(env *matrixEnv) kmsg.Request { return fetchRequest(env, 7) },
			code:  fetchCode},
		{name: "ListOffsets", acls: acls(topic(authz.OpDescribe)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrListOffsetsRequest()
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = matrixTopic
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Timestamp = -1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode }},
		{name: "OffsetCommit", acls: acls(group(authz.OpRead), topic(authz.OpRead)), denied: kerr.GroupAuthorizationFailed,
			build: func(env *matrixEnv) kmsg.Request {
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation = matrixGroup, -1
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic, rt.TopicID = matrixTopic, env.topicID
				rp := kmsg.NewOffsetCommitRequestTopicPartition()
				rp.Offset = 0
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 {
				resp := r.(*kmsg.OffsetCommitResponse)
				if len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
					return -1
				}
				return resp.Topics[0].Partitions[0].ErrorCode
			}},
		{name: "OffsetCommitTopic", base: acls(group(authz.OpRead)), acls: acls(topic(authz.OpRead)), denied: kerr.TopicAuthorizationFailed,
			build: func(env *matrixEnv) kmsg.Request {
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation = matrixGroup, -1
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic, rt.TopicID = matrixTopic, env.topicID
				rt.Partitions = append(rt.Partitions, kmsg.NewOffsetCommitRequestTopicPartition())
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode }},
		{name: "AddPartitionsToTxnTopic", base: acls(txnID(authz.OpWrite)), acls: acls(topic(authz.OpWrite)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrAddPartitionsToTxnRequest()
				req.SetVersion(3)
				req.TransactionalID, req.ProducerID, req.ProducerEpoch = matrixTxnID, 1, 0
				rt := kmsg.NewAddPartitionsToTxnRequestTopic()
				rt.Topic, rt.Partitions = matrixTopic, []int32{0}
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "AddOffsetsToTxnGroup", base: acls(txnID(authz.OpWrite)), acls: acls(group(authz.OpRead)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrAddOffsetsToTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = matrixTxnID, 1, 0, matrixGroup
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AddOffsetsToTxnResponse).ErrorCode }},
		{name: "ProduceTransactional", base: acls(topic(authz.OpWrite)), acls: acls(txnID(authz.OpWrite)), denied: kerr.TransactionalIDAuthorizationFailed,
			build: func(env *matrixEnv) kmsg.Request {
				req := kmsg.NewPtrProduceRequest()
				req.Acks, req.TimeoutMillis, req.TransactionID = 1, 5000, strp(matrixTxnID)
				rt := kmsg.NewProduceRequestTopic()
				rt.Topic, rt.TopicID = matrixTopic, env.topicID
				rp := kmsg.NewProduceRequestTopicPartition()
				rp.Records = validBatch("authz")
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode }},
		{name: "OffsetFetch", acls: acls(group(authz.OpDescribe), topic(authz.OpDescribe)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrOffsetFetchRequest()
				rg := kmsg.NewOffsetFetchRequestGroup()
				rg.Group = matrixGroup
				req.Groups = append(req.Groups, rg)
				return req
			},
			code: func(r kmsg.Response) int16 {
				resp := r.(*kmsg.OffsetFetchResponse)
				if len(resp.Groups) > 0 {
					return resp.Groups[0].ErrorCode
				}
				return resp.ErrorCode
			}},
		{name: "FindCoordinatorGroup", acls: acls(group(authz.OpDescribe)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request { return findCoordinator(0, matrixGroup) },
			code:  findCoordinatorCode},
		{name: "FindCoordinatorTxn", acls: acls(txnID(authz.OpDescribe)), denied: kerr.TransactionalIDAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request { return findCoordinator(1, matrixTxnID) },
			code:  findCoordinatorCode},
		{name: "JoinGroup", acls: acls(group(authz.OpRead)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrJoinGroupRequest()
				req.Group, req.ProtocolType, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = matrixGroup, "consumer", 10000, 10000
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0}
				req.Protocols = append(req.Protocols, p)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.JoinGroupResponse).ErrorCode }},
		{name: "SyncGroup", acls: acls(group(authz.OpRead)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrSyncGroupRequest()
				req.Group, req.MemberID, req.Generation = matrixGroup, "nobody", 1
				req.ProtocolType, req.Protocol = strp("consumer"), strp("range")
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.SyncGroupResponse).ErrorCode }},
		{name: "Heartbeat", acls: acls(group(authz.OpRead)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrHeartbeatRequest()
				req.Group, req.MemberID, req.Generation = matrixGroup, "nobody", 1
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.HeartbeatResponse).ErrorCode }},
		{name: "LeaveGroup", acls: acls(group(authz.OpRead)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrLeaveGroupRequest()
				req.Group = matrixGroup
				m := kmsg.NewLeaveGroupRequestMember()
				m.MemberID = "nobody"
				req.Members = append(req.Members, m)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.LeaveGroupResponse).ErrorCode }},
		{name: "DescribeGroups", acls: acls(group(authz.OpDescribe)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeGroupsRequest()
				req.Groups = []string{matrixGroup}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode }},
		{name: "DeleteGroups", acls: acls(group(authz.OpDelete)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDeleteGroupsRequest()
				req.Groups = []string{matrixGroup}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode }},
		{name: "CreateTopics", acls: acls(allow(principal, authz.ResourceTopic, "authz-new", authz.OpCreate)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrCreateTopicsRequest()
				req.TimeoutMillis = 10000
				rt := kmsg.NewCreateTopicsRequestTopic()
				rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "authz-new", 1, 1
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode }},
		{name: "DeleteTopics", acls: acls(allow(principal, authz.ResourceTopic, "authz-doomed", authz.OpDelete)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDeleteTopicsRequest()
				req.TimeoutMillis = 10000
				rt := kmsg.NewDeleteTopicsRequestTopic()
				rt.Topic = strp("authz-doomed")
				req.Topics = append(req.Topics, rt)
				req.TopicNames = []string{"authz-doomed"}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DeleteTopicsResponse).Topics[0].ErrorCode }},
		{name: "DeleteRecords", acls: acls(topic(authz.OpDelete)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDeleteRecordsRequest()
				req.TimeoutMillis = 5000
				rt := kmsg.NewDeleteRecordsRequestTopic()
				rt.Topic = matrixTopic
				rp := kmsg.NewDeleteRecordsRequestTopicPartition()
				rp.Offset = 0
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode }},
		{name: "OffsetForLeaderEpoch", acls: acls(topic(authz.OpDescribe)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrOffsetForLeaderEpochRequest()
				req.ReplicaID = -1
				rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
				rt.Topic = matrixTopic
				rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
				rp.CurrentLeaderEpoch, rp.LeaderEpoch = -1, 0
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "DescribeConfigsTopic", acls: acls(topic(authz.OpDescribeConfigs)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeConfigsRequest()
				rr := kmsg.NewDescribeConfigsRequestResource()
				rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, matrixTopic
				req.Resources = append(req.Resources, rr)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode }},
		{name: "DescribeConfigsBroker", acls: acls(cluster(authz.OpDescribeConfigs)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeConfigsRequest()
				rr := kmsg.NewDescribeConfigsRequestResource()
				rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
				req.Resources = append(req.Resources, rr)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode }},
		{name: "AlterConfigs", acls: acls(topic(authz.OpAlterConfigs)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrAlterConfigsRequest()
				rr := kmsg.NewAlterConfigsRequestResource()
				rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, matrixTopic
				cfg := kmsg.NewAlterConfigsRequestResourceConfig()
				cfg.Name, cfg.Value = "retention.ms", strp("86400000")
				rr.Configs = append(rr.Configs, cfg)
				req.Resources = append(req.Resources, rr)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode }},
		{name: "IncrementalAlterConfigs", acls: acls(topic(authz.OpAlterConfigs)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrIncrementalAlterConfigsRequest()
				rr := kmsg.NewIncrementalAlterConfigsRequestResource()
				rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, matrixTopic
				cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
				cfg.Name, cfg.Value = "retention.ms", strp("86400000")
				rr.Configs = append(rr.Configs, cfg)
				req.Resources = append(req.Resources, rr)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode }},
		{name: "InitProducerIdTransactional", acls: acls(txnID(authz.OpWrite)), denied: kerr.TransactionalIDAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrInitProducerIDRequest()
				req.TransactionalID, req.TransactionTimeoutMillis = strp(matrixTxnID), 60000
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.InitProducerIDResponse).ErrorCode }},
		{name: "InitProducerIdIdempotent", acls: acls(cluster(authz.OpIdempotentWrite)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request { return kmsg.NewPtrInitProducerIDRequest() },
			code:  func(r kmsg.Response) int16 { return r.(*kmsg.InitProducerIDResponse).ErrorCode }},
		{name: "InitProducerIdIdempotentByTopicWrite", acls: acls(topic(authz.OpWrite)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request { return kmsg.NewPtrInitProducerIDRequest() },
			code:  func(r kmsg.Response) int16 { return r.(*kmsg.InitProducerIDResponse).ErrorCode }},
		{name: "AddPartitionsToTxn", acls: acls(txnID(authz.OpWrite), topic(authz.OpWrite)), denied: kerr.TransactionalIDAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrAddPartitionsToTxnRequest()
				req.SetVersion(3)
				req.TransactionalID, req.ProducerID, req.ProducerEpoch = matrixTxnID, 1, 0
				rt := kmsg.NewAddPartitionsToTxnRequestTopic()
				rt.Topic, rt.Partitions = matrixTopic, []int32{0}
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "AddOffsetsToTxn", acls: acls(txnID(authz.OpWrite), group(authz.OpRead)), denied: kerr.TransactionalIDAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrAddOffsetsToTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = matrixTxnID, 1, 0, matrixGroup
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AddOffsetsToTxnResponse).ErrorCode }},
		{name: "EndTxn", acls: acls(txnID(authz.OpWrite)), denied: kerr.TransactionalIDAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrEndTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch = matrixTxnID, 1, 0
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.EndTxnResponse).ErrorCode }},
		{name: "TxnOffsetCommit", acls: acls(txnID(authz.OpWrite), group(authz.OpRead), topic(authz.OpRead)), denied: kerr.TransactionalIDAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrTxnOffsetCommitRequest()
				req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = matrixTxnID, matrixGroup, 1, 0
				req.Generation = -1
				rt := kmsg.NewTxnOffsetCommitRequestTopic()
				rt.Topic = matrixTopic
				rt.Partitions = append(rt.Partitions, kmsg.NewTxnOffsetCommitRequestTopicPartition())
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "WriteTxnMarkers", acls: acls(cluster(authz.OpClusterAction)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrWriteTxnMarkersRequest()
				m := kmsg.NewWriteTxnMarkersRequestMarker()
				m.ProducerID, m.ProducerEpoch, m.Committed = 1, 0, false
				mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
				mt.Topic, mt.Partitions = matrixTopic, []int32{0}
				m.Topics = append(m.Topics, mt)
				req.Markers = append(req.Markers, m)
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode
			}},
		{name: "CreateAcls", acls: acls(cluster(authz.OpAlter)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrCreateACLsRequest()
				cr := kmsg.NewCreateACLsRequestCreation()
				cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, "other", kmsg.ACLResourcePatternTypeLiteral
				cr.Principal, cr.Host, cr.Operation, cr.PermissionType = "User:other", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
				req.Creations = append(req.Creations, cr)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.CreateACLsResponse).Results[0].ErrorCode }},
		{name: "DescribeAcls", acls: acls(cluster(authz.OpDescribe)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeACLsRequest()
				req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
				req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeACLsResponse).ErrorCode }},
		{name: "DeleteAcls", acls: acls(cluster(authz.OpAlter)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDeleteACLsRequest()
				f := kmsg.NewDeleteACLsRequestFilter()
				f.ResourceType, f.ResourceName, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, strp("nothing-here"), kmsg.ACLResourcePatternTypeLiteral
				f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
				req.Filters = append(req.Filters, f)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DeleteACLsResponse).Results[0].ErrorCode }},
		{name: "DescribeLogDirs", acls: acls(cluster(authz.OpDescribe)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request { return kmsg.NewPtrDescribeLogDirsRequest() },
			code:  func(r kmsg.Response) int16 { return r.(*kmsg.DescribeLogDirsResponse).ErrorCode }},
		{name: "ListConfigResources", acls: acls(cluster(authz.OpDescribeConfigs)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request { return kmsg.NewPtrListConfigResourcesRequest() },
			code:  func(r kmsg.Response) int16 { return r.(*kmsg.ListConfigResourcesResponse).ErrorCode }},
		{name: "AlterReplicaLogDirs", acls: acls(cluster(authz.OpAlter)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrAlterReplicaLogDirsRequest()
				d := kmsg.NewAlterReplicaLogDirsRequestDir()
				d.Dir = "/nowhere"
				dt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
				dt.Topic, dt.Partitions = matrixTopic, []int32{0}
				d.Topics = append(d.Topics, dt)
				req.Dirs = append(req.Dirs, d)
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.AlterReplicaLogDirsResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "CreatePartitions", acls: acls(allow(principal, authz.ResourceTopic, "authz-grow", authz.OpAlter)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrCreatePartitionsRequest()
				req.TimeoutMillis = 10000
				rt := kmsg.NewCreatePartitionsRequestTopic()
				rt.Topic, rt.Count = "authz-grow", 2
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode }},
		{name: "ElectLeaders", acls: acls(cluster(authz.OpAlter)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrElectLeadersRequest()
				req.TimeoutMillis = 10000
				rt := kmsg.NewElectLeadersRequestTopic()
				rt.Topic, rt.Partitions = matrixTopic, []int32{0}
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ElectLeadersResponse).ErrorCode }},
		{name: "AlterPartitionReassignments", acls: acls(cluster(authz.OpAlter)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
				req.TimeoutMillis = 10000
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterPartitionAssignmentsResponse).ErrorCode }},
		{name: "ListPartitionReassignments", acls: acls(cluster(authz.OpDescribe)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrListPartitionReassignmentsRequest()
				req.TimeoutMillis = 10000
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode }},
		{name: "OffsetDelete", acls: acls(allow(principal, authz.ResourceGroup, matrixGroup, authz.OpDelete), topic(authz.OpRead)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrOffsetDeleteRequest()
				req.Group = matrixGroup
				rt := kmsg.NewOffsetDeleteRequestTopic()
				rt.Topic = matrixTopic
				rt.Partitions = append(rt.Partitions, kmsg.NewOffsetDeleteRequestTopicPartition())
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.OffsetDeleteResponse).ErrorCode }},
		{name: "DescribeProducers", acls: acls(topic(authz.OpRead)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeProducersRequest()
				rt := kmsg.NewDescribeProducersRequestTopic()
				rt.Topic, rt.Partitions = matrixTopic, []int32{0}
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "DescribeTransactions", acls: acls(txnID(authz.OpDescribe)), denied: kerr.TransactionalIDAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeTransactionsRequest()
				req.TransactionalIDs = []string{matrixTxnID}
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.DescribeTransactionsResponse).TransactionStates[0].ErrorCode
			}},
		{name: "ConsumerGroupHeartbeat", acls: acls(group(authz.OpRead), topic(authz.OpDescribe)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
				req.Group, req.MemberID, req.MemberEpoch = matrixGroup, "authz-member-0000000001", 0
				req.RebalanceTimeoutMillis = 10000
				req.SubscribedTopicNames = []string{matrixTopic}
				req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode }},
		{name: "ConsumerGroupDescribe", acls: acls(group(authz.OpDescribe)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrConsumerGroupDescribeRequest()
				req.Groups = []string{matrixGroup}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ConsumerGroupDescribeResponse).Groups[0].ErrorCode }},
		{name: "StreamsGroupHeartbeat", acls: acls(group(authz.OpRead), topic(authz.OpDescribe)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request { return matrixStreamsHeartbeat() },
			code:  func(r kmsg.Response) int16 { return r.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode }},
		{name: "StreamsGroupHeartbeat topics", base: acls(group(authz.OpRead)), acls: acls(topic(authz.OpDescribe)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request { return matrixStreamsHeartbeat() },
			code:  func(r kmsg.Response) int16 { return r.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode }},
		{name: "StreamsGroupDescribe", acls: acls(group(authz.OpDescribe)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrStreamsGroupDescribeRequest()
				req.Groups = []string{matrixGroup}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.StreamsGroupDescribeResponse).Groups[0].ErrorCode }},
		{name: "DescribeQuorum", acls: acls(cluster(authz.OpDescribe)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeQuorumRequest()
				rt := kmsg.NewDescribeQuorumRequestTopic()
				rt.Topic = "__cluster_metadata"
				rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeQuorumResponse).ErrorCode }},
		{name: "UpdateFeatures", acls: acls(cluster(authz.OpAlter)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrUpdateFeaturesRequest()
				req.TimeoutMillis, req.ValidateOnly = 10000, true
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.UpdateFeaturesResponse).ErrorCode }},
		{name: "DescribeUserScramCredentials", acls: acls(cluster(authz.OpDescribe)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request { return kmsg.NewPtrDescribeUserSCRAMCredentialsRequest() },
			code:  func(r kmsg.Response) int16 { return r.(*kmsg.DescribeUserSCRAMCredentialsResponse).ErrorCode }},
		{name: "AlterUserScramCredentials", acls: acls(cluster(authz.OpAlter)), denied: kerr.ClusterAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
				u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
				u.Name, u.Mechanism, u.Iterations = "matrix-user", 2, 4096
				u.Salt, u.SaltedPassword = []byte("0123456789abcdef"), make([]byte, 64)
				req.Upsertions = append(req.Upsertions, u)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode }},
	}, shareMatrixCases(principal)...)
}

func fetchRequest(env *matrixEnv, replicaID int32) kmsg.Request {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.MaxWaitMillis = replicaID, 1<<20, 0
	req.ReplicaState.ID = replicaID
	req.ReplicaState.Epoch = -1
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = matrixTopic, env.topicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = 1<<20, -1, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func fetchCode(r kmsg.Response) int16 {
	resp := r.(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) == 0 {
		return resp.ErrorCode
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

func findCoordinator(keyType int8, key string) kmsg.Request {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = keyType, key, []string{key}
	return req
}

func findCoordinatorCode(r kmsg.Response) int16 {
	resp := r.(*kmsg.FindCoordinatorResponse)
	if len(resp.Coordinators) > 0 {
		return resp.Coordinators[0].ErrorCode
	}
	return resp.ErrorCode
}

// matrixStreamsHeartbeat joins a streams group with a one-subtopology
// topology reading the matrix topic, without internal topics.
func matrixStreamsHeartbeat() kmsg.Request {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = matrixGroup, "authz-streams-member", 0
	req.RebalanceTimeoutMillis = 10000
	req.ProcessID = strp("authz-process")
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	topology := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	topology.Epoch = 1
	topology.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{{SubtopologyID: "0", SourceTopics: []string{matrixTopic}}}
	req.Topology = &topology
	return req
}
