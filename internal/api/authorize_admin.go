package api

// Authorization of the admin, config and cluster APIs, as Kafka's KafkaApis
// and ControllerApis check them. A request the active controller decides
// is checked once, where it is decided: a broker that forwards it checks
// nothing and sends it in an Envelope with the client's principal
// (58_envelope.go), and the controller authorizes it as that client, as
// Kafka's ControllerApis does. Denied items leave the request and are
// answered beside the decided ones (call.amend). Only what the receiving
// node decides itself is checked there: broker logger levels.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

// clusterDeniedResponse is the CLUSTER_AUTHORIZATION_FAILED answer to a
// request that needs an operation on the cluster.
func clusterDeniedResponse(req kmsg.Request, version int16) kmsg.Response {
	code := kerr.ClusterAuthorizationFailed.Code
	message := strptr(kerr.ClusterAuthorizationFailed.Message)
	switch r := req.(type) {
	case *kmsg.ElectLeadersRequest, *kmsg.AlterPartitionAssignmentsRequest,
		*kmsg.ListPartitionReassignmentsRequest, *kmsg.DescribeQuorumRequest:
		// Kafka's ControllerApis throws for these, and answers with the
		// request's getErrorResponse.
		return errorResponse(req, version, code, kerr.ClusterAuthorizationFailed.Message)
	case *kmsg.UpdateFeaturesRequest:
		resp := kmsg.NewPtrUpdateFeaturesResponse()
		resp.ErrorCode, resp.ErrorMessage = code, message
		for _, u := range r.FeatureUpdates {
			res := kmsg.NewUpdateFeaturesResponseResult()
			res.Feature, res.ErrorCode, res.ErrorMessage = u.Feature, code, message
			resp.Results = append(resp.Results, res)
		}
		return resp
	case *kmsg.DescribeLogDirsRequest:
		resp := kmsg.NewPtrDescribeLogDirsResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.AlterPartitionRequest:
		resp := kmsg.NewPtrAlterPartitionResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.BrokerRegistrationRequest:
		resp := kmsg.NewPtrBrokerRegistrationResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.BrokerHeartbeatRequest:
		resp := kmsg.NewPtrBrokerHeartbeatResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.AllocateProducerIDsRequest:
		resp := kmsg.NewPtrAllocateProducerIDsResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.FetchSnapshotRequest:
		resp := kmsg.NewPtrFetchSnapshotResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.FetchRequest:
		resp := kmsg.NewPtrFetchResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.OffsetForLeaderEpochRequest:
		resp := kmsg.NewPtrOffsetForLeaderEpochResponse()
		for _, t := range r.Topics {
			rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.LeaderEpoch, rp.EndOffset = p.Partition, code, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	panic("api: no cluster-denied response for " + kmsg.NameForKey(req.Key()))
}

// clusterAuthorizedOperations is the KIP-430 cluster bitfield Metadata and
// DescribeCluster answer when asked: 0 without DESCRIBE on the cluster.
func (b *Broker) clusterAuthorizedOperations(c *call) int32 {
	if !b.authorizeQuiet(c, opDescribe, resCluster, clusterName) {
		return 0
	}
	return b.authorizedOperations(c, resCluster, clusterName, authz.ClusterOperations)
}

// authorizeConfigResource checks op (DESCRIBE_CONFIGS or ALTER_CONFIGS) on
// a config resource: a topic needs it on the topic
// (TOPIC_AUTHORIZATION_FAILED), a broker or broker logger on the cluster
// (CLUSTER_AUTHORIZATION_FAILED), a group on the group
// (GROUP_AUTHORIZATION_FAILED). It returns nil when allowed.
func (b *Broker) authorizeConfigResource(c *call, op authz.Operation, resourceType kmsg.ConfigResourceType, name string) *kerr.Error {
	if !b.authorizing() {
		return nil
	}
	switch resourceType {
	case kmsg.ConfigResourceTypeTopic:
		if !b.authorize(c, op, resTopic, name) {
			return kerr.TopicAuthorizationFailed
		}
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		if !b.authorizeCluster(c, op) {
			return kerr.ClusterAuthorizationFailed
		}
	case kmsg.ConfigResourceTypeGroupConfig:
		if !b.authorize(c, op, resGroup, name) {
			return kerr.GroupAuthorizationFailed
		}
	case kmsg.ConfigResourceTypeClientMetrics:
		if !b.authorizeCluster(c, op) {
			return kerr.ClusterAuthorizationFailed
		}
	}
	return nil
}

// authorizeAlterConfigs needs ALTER_CONFIGS on each resource.
func (b *Broker) authorizeAlterConfigs(c *call, req *kmsg.AlterConfigsRequest) {
	if !b.authorizing() {
		return
	}
	var denied []kmsg.AlterConfigsResponseResource
	req.Resources, denied = withholdDenied(req.Resources, func(rr kmsg.AlterConfigsRequestResource) (kmsg.AlterConfigsResponseResource, bool) {
		sr := kmsg.NewAlterConfigsResponseResource()
		code := b.authorizeConfigResource(c, opAlterConfigs, rr.ResourceType, rr.ResourceName)
		if code != nil {
			sr.ResourceType, sr.ResourceName, sr.ErrorCode, sr.ErrorMessage = rr.ResourceType, rr.ResourceName, code.Code, strptr(code.Message)
		}
		return sr, code != nil
	})
	if len(denied) > 0 {
		c.amend = func(r kmsg.Response) {
			resp := r.(*kmsg.AlterConfigsResponse)
			resp.Resources = append(resp.Resources, denied...)
		}
	}
}

// authorizeIncrementalAlterConfigs needs ALTER_CONFIGS on each resource
// (each one checked lets through, every one when checked is nil).
func (b *Broker) authorizeIncrementalAlterConfigs(c *call, req *kmsg.IncrementalAlterConfigsRequest, checked func(kmsg.IncrementalAlterConfigsRequestResource) bool) {
	if !b.authorizing() {
		return
	}
	var denied []kmsg.IncrementalAlterConfigsResponseResource
	req.Resources, denied = withholdDenied(req.Resources, func(rr kmsg.IncrementalAlterConfigsRequestResource) (kmsg.IncrementalAlterConfigsResponseResource, bool) {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		if checked != nil && !checked(rr) {
			return sr, false
		}
		code := b.authorizeConfigResource(c, opAlterConfigs, rr.ResourceType, rr.ResourceName)
		if code != nil {
			sr.ResourceType, sr.ResourceName, sr.ErrorCode, sr.ErrorMessage = rr.ResourceType, rr.ResourceName, code.Code, strptr(code.Message)
		}
		return sr, code != nil
	})
	if len(denied) > 0 {
		c.amend = func(r kmsg.Response) {
			resp := r.(*kmsg.IncrementalAlterConfigsResponse)
			resp.Resources = append(resp.Resources, denied...)
		}
	}
}

// splitAllowed keeps, in place, the items allowed lets through and returns
// the others apart.
func splitAllowed[Item any](items []Item, allowed func(Item) bool) (kept, denied []Item) {
	kept = slices.DeleteFunc(items, func(item Item) bool {
		if allowed(item) {
			return false
		}
		denied = append(denied, item)
		return true
	})
	return kept, denied
}

// withholdDenied keeps the items refuse lets through and returns, for the
// others, the answers refuse built, which the handler adds to its response
// (c.amend) so that the coordinator or controller never sees them.
func withholdDenied[Item, Answer any](items []Item, refuse func(Item) (Answer, bool)) ([]Item, []Answer) {
	var answers []Answer
	kept := slices.DeleteFunc(items, func(item Item) bool {
		answer, refused := refuse(item)
		if refused {
			answers = append(answers, answer)
		}
		return refused
	})
	return kept, answers
}

// authorizeCreateTopics needs CREATE on the cluster or on each topic
// (TOPIC_AUTHORIZATION_FAILED); a created topic's configs are returned only
// with DESCRIBE_CONFIGS on it (else its config error is
// TOPIC_AUTHORIZATION_FAILED), as Kafka's ControllerApis.createTopics.
func (b *Broker) authorizeCreateTopics(c *call, req *kmsg.CreateTopicsRequest) {
	if !b.authorizing() {
		return
	}
	var denied []kmsg.CreateTopicsResponseTopic
	if !b.authorizeQuiet(c, opCreate, resCluster, clusterName) {
		req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.CreateTopicsRequestTopic) bool {
			if b.authorize(c, opCreate, resTopic, t.Topic) {
				return false
			}
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic, st.ErrorCode, st.ErrorMessage = t.Topic, kerr.TopicAuthorizationFailed.Code, strptr("Authorization failed.")
			st.NumPartitions, st.ReplicationFactor = -1, -1
			denied = append(denied, st)
			return true
		})
	}
	c.amend = func(r kmsg.Response) {
		resp := r.(*kmsg.CreateTopicsResponse)
		for i := range resp.Topics {
			st := &resp.Topics[i]
			if st.ErrorCode == 0 && !b.authorizeQuiet(c, opDescribeConfigs, resTopic, st.Topic) {
				st.Configs = nil
				st.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
			}
		}
		resp.Topics = append(resp.Topics, denied...)
	}
}

// authorizeDeleteTopics needs DELETE on each topic
// (TOPIC_AUTHORIZATION_FAILED); a topic named by an id this node does not
// know is left to answer UNKNOWN_TOPIC_ID.
func (b *Broker) authorizeDeleteTopics(c *call, req *kmsg.DeleteTopicsRequest) {
	if !b.authorizing() {
		return
	}
	img := b.Image()
	var denied []kmsg.DeleteTopicsResponseTopic
	deny := func(name *string, id [16]byte) {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID, st.ErrorCode = name, id, kerr.TopicAuthorizationFailed.Code
		denied = append(denied, st)
	}
	if c.version >= 6 {
		req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.DeleteTopicsRequestTopic) bool {
			name := t.Topic
			if name == nil {
				topic := img.TopicByID(metadata.UUID(t.TopicID))
				if topic == nil {
					return false
				}
				name = &topic.Name
			}
			if b.authorize(c, opDelete, resTopic, *name) {
				return false
			}
			deny(t.Topic, t.TopicID)
			return true
		})
	} else {
		req.TopicNames = slices.DeleteFunc(req.TopicNames, func(name string) bool {
			if b.authorize(c, opDelete, resTopic, name) {
				return false
			}
			deny(strptr(name), [16]byte{})
			return true
		})
	}
	if len(denied) > 0 {
		c.amend = func(r kmsg.Response) {
			resp := r.(*kmsg.DeleteTopicsResponse)
			resp.Topics = append(resp.Topics, denied...)
		}
	}
}

// authorizeCreatePartitions needs ALTER on each topic
// (TOPIC_AUTHORIZATION_FAILED).
func (b *Broker) authorizeCreatePartitions(c *call, req *kmsg.CreatePartitionsRequest) {
	if !b.authorizing() {
		return
	}
	var denied []kmsg.CreatePartitionsResponseTopic
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.CreatePartitionsRequestTopic) bool {
		if b.authorize(c, opAlter, resTopic, t.Topic) {
			return false
		}
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic, st.ErrorCode, st.ErrorMessage = t.Topic, kerr.TopicAuthorizationFailed.Code, strptr(kerr.TopicAuthorizationFailed.Message)
		denied = append(denied, st)
		return true
	})
	if len(denied) > 0 {
		c.amend = func(r kmsg.Response) {
			resp := r.(*kmsg.CreatePartitionsResponse)
			resp.Topics = append(resp.Topics, denied...)
		}
	}
}

// authorizeAlterConfigsHere authorizes an AlterConfigs request the
// receiving node decides; one it forwards (forward) is authorized by the
// active controller, as Kafka's ConfigAdminManager.preprocess leaves every
// resource but broker loggers to it.
func (b *Broker) authorizeAlterConfigsHere(c *call, req *kmsg.AlterConfigsRequest, forward bool) {
	if !forward {
		b.authorizeAlterConfigs(c, req)
	}
}

// authorizeIncrementalAlterConfigsHere is authorizeAlterConfigsHere for
// IncrementalAlterConfigs: a forwarding node checks only the broker logger
// resources, whose levels it sets itself.
func (b *Broker) authorizeIncrementalAlterConfigsHere(c *call, req *kmsg.IncrementalAlterConfigsRequest, forward bool) {
	if !forward {
		b.authorizeIncrementalAlterConfigs(c, req, nil)
		return
	}
	b.authorizeIncrementalAlterConfigs(c, req, func(rr kmsg.IncrementalAlterConfigsRequestResource) bool {
		return rr.ResourceType == kmsg.ConfigResourceTypeBrokerLogger
	})
}
