package server

// The share-group rows of the authorization matrix: GROUP READ for
// ShareGroupHeartbeat (with TOPIC DESCRIBE on its topics), ShareFetch and
// ShareAcknowledge, TOPIC READ for ShareFetch's partitions, GROUP DESCRIBE
// for ShareGroupDescribe.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

func shareMatrixCases(principal string) []matrixCase {
	topic := func(op authz.Operation) authz.Binding { return allow(principal, authz.ResourceTopic, matrixTopic, op) }
	group := func(op authz.Operation) authz.Binding { return allow(principal, authz.ResourceGroup, matrixGroup, op) }
	cluster := func(op authz.Operation) authz.Binding {
		return allow(principal, authz.ResourceCluster, authz.ClusterName, op)
	}
	acls := func(b ...authz.Binding) []authz.Binding { return b }
	shareFetch := func(env *matrixEnv) kmsg.Request {
		req := kmsg.NewPtrShareFetchRequest()
		req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(matrixGroup), kmsg.StringPtr("authz-share-member"), 0
		req.MaxBytes, req.MaxRecords = 1<<20, 10
		p := kmsg.NewShareFetchRequestTopicPartition()
		p.PartitionMaxBytes = 1 << 20
		req.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: env.topicID, Partitions: []kmsg.ShareFetchRequestTopicPartition{p}}}
		return req
	}
	return []matrixCase{
		{name: "ShareGroupHeartbeat", acls: acls(group(authz.OpRead), topic(authz.OpDescribe)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrShareGroupHeartbeatRequest()
				req.GroupID, req.MemberID, req.MemberEpoch = matrixGroup, "authz-share-member", 0
				req.SubscribedTopicNames = []string{matrixTopic}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ShareGroupHeartbeatResponse).ErrorCode }},
		{name: "ShareGroupHeartbeatTopic", base: acls(group(authz.OpRead)), acls: acls(topic(authz.OpDescribe)), denied: kerr.TopicAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrShareGroupHeartbeatRequest()
				req.GroupID, req.MemberID, req.MemberEpoch = matrixGroup, "authz-share-member", 0
				req.SubscribedTopicNames = []string{matrixTopic}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ShareGroupHeartbeatResponse).ErrorCode }},
		{name: "ShareGroupDescribe", acls: acls(group(authz.OpDescribe)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrShareGroupDescribeRequest()
				req.GroupIDs = []string{matrixGroup}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ShareGroupDescribeResponse).Groups[0].ErrorCode }},
		{name: "ShareFetch", acls: acls(group(authz.OpRead)), denied: kerr.GroupAuthorizationFailed,
			build: shareFetch,
			code:  func(r kmsg.Response) int16 { return r.(*kmsg.ShareFetchResponse).ErrorCode }},
		{name: "ShareFetchTopic", base: acls(group(authz.OpRead)), acls: acls(topic(authz.OpRead)), denied: kerr.TopicAuthorizationFailed,
			build: shareFetch,
			code: func(r kmsg.Response) int16 {
				resp := r.(*kmsg.ShareFetchResponse)
				if resp.ErrorCode != 0 || len(resp.Topics) == 0 {
					return resp.ErrorCode
				}
				return resp.Topics[0].Partitions[0].ErrorCode
			}},
		{name: "DescribeShareGroupOffsets", acls: acls(group(authz.OpDescribe)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
				req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: matrixGroup}}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeShareGroupOffsetsResponse).Groups[0].ErrorCode }},
		{name: "AlterShareGroupOffsets", acls: acls(group(authz.OpRead)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
				req.GroupID = matrixGroup
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterShareGroupOffsetsResponse).ErrorCode }},
		{name: "DeleteShareGroupOffsets", acls: acls(group(authz.OpDelete)), denied: kerr.GroupAuthorizationFailed,
			build: func(*matrixEnv) kmsg.Request {
				req := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
				req.GroupID = matrixGroup
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DeleteShareGroupOffsetsResponse).ErrorCode }},
		{name: "ReadShareGroupState", acls: acls(cluster(authz.OpClusterAction)), denied: kerr.ClusterAuthorizationFailed,
			build: func(env *matrixEnv) kmsg.Request {
				req := kmsg.NewPtrReadShareGroupStateRequest()
				req.GroupID = matrixGroup
				req.Topics = []kmsg.ReadShareGroupStateRequestTopic{{TopicID: env.topicID, Partitions: []kmsg.ReadShareGroupStateRequestTopicPartition{{Partition: 0, LeaderEpoch: -1}}}}
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.ReadShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "WriteShareGroupState", acls: acls(cluster(authz.OpClusterAction)), denied: kerr.ClusterAuthorizationFailed,
			build: func(env *matrixEnv) kmsg.Request {
				req := kmsg.NewPtrWriteShareGroupStateRequest()
				req.GroupID = matrixGroup
				req.Topics = []kmsg.WriteShareGroupStateRequestTopic{{TopicID: env.topicID, Partitions: []kmsg.WriteShareGroupStateRequestTopicPartition{{Partition: 0, LeaderEpoch: -1, StartOffset: 0}}}}
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.WriteShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "ShareAcknowledge", acls: acls(group(authz.OpRead)), denied: kerr.GroupAuthorizationFailed,
			build: func(env *matrixEnv) kmsg.Request {
				req := kmsg.NewPtrShareAcknowledgeRequest()
				req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(matrixGroup), kmsg.StringPtr("authz-share-member"), 1
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ShareAcknowledgeResponse).ErrorCode }},
	}
}
