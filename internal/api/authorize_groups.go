package api

// Authorization of the group APIs that name many groups: the groups the
// principal may not act on are taken out of the request before the group
// coordinator sees it and answered GROUP_AUTHORIZATION_FAILED beside its
// answer (call.amend), as Kafka's KafkaApis splits them.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

// authorizeDeleteGroups needs DELETE on each group.
func (b *Broker) authorizeDeleteGroups(c *call, req *kmsg.DeleteGroupsRequest) {
	if !b.authorizing() {
		return
	}
	var denied []string
	req.Groups, denied = splitAllowed(req.Groups, func(g string) bool { return b.authorize(c, opDelete, resGroup, g) })
	if len(denied) == 0 {
		return
	}
	c.amend = func(r kmsg.Response) {
		resp := r.(*kmsg.DeleteGroupsResponse)
		for _, g := range denied {
			res := kmsg.NewDeleteGroupsResponseGroup()
			res.Group, res.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, res)
		}
	}
}

// authorizeDescribeGroups needs DESCRIBE on each group, and fills the
// KIP-430 authorized operations when asked.
func (b *Broker) authorizeDescribeGroups(c *call, req *kmsg.DescribeGroupsRequest) {
	var denied []string
	if b.authorizing() {
		req.Groups, denied = splitAllowed(req.Groups, func(g string) bool { return b.authorize(c, opDescribe, resGroup, g) })
	}
	if len(denied) == 0 && !req.IncludeAuthorizedOperations {
		return
	}
	c.amend = func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeGroupsResponse)
		if req.IncludeAuthorizedOperations {
			for i := range resp.Groups {
				if resp.Groups[i].ErrorCode == 0 {
					resp.Groups[i].AuthorizedOperations = b.authorizedOperations(c, resGroup, resp.Groups[i].Group, authz.GroupOperations)
				}
			}
		}
		for _, g := range denied {
			res := kmsg.NewDescribeGroupsResponseGroup()
			res.Group, res.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
			res.AuthorizedOperations = authorizedOperationsOmitted
			resp.Groups = append(resp.Groups, res)
		}
	}
}

// authorizeListGroups lists every group to a principal with DESCRIBE on
// the cluster, and otherwise only the groups it may DESCRIBE.
func (b *Broker) authorizeListGroups(c *call) {
	if !b.authorizing() || b.authorizeQuiet(c, opDescribe, resCluster, clusterName) {
		return
	}
	c.amend = func(r kmsg.Response) {
		resp := r.(*kmsg.ListGroupsResponse)
		resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool {
			return !b.authorizeQuiet(c, opDescribe, resGroup, g.Group)
		})
	}
}

// authorizeOffsetCommit needs READ on the group (else every partition
// answers GROUP_AUTHORIZATION_FAILED) and READ on each topic (else its
// partitions answer TOPIC_AUTHORIZATION_FAILED and are not committed). It
// reports whether the request goes on to the coordinator.
func (b *Broker) authorizeOffsetCommit(c *call, req *kmsg.OffsetCommitRequest) bool {
	if !b.authorizing() {
		return true
	}
	if !b.authorize(c, opRead, resGroup, req.Group) {
		c.reply(offsetCommitErrors(req.Topics, kerr.GroupAuthorizationFailed))
		return false
	}
	readable := b.topicChecker(c, opRead)
	var denied []kmsg.OffsetCommitRequestTopic
	req.Topics, denied = splitAllowed(req.Topics, func(t kmsg.OffsetCommitRequestTopic) bool {
		name, known := b.topicNameOf(t.Topic, t.TopicID)
		return !known || readable.allowed(name)
	})
	if len(denied) > 0 {
		c.amend = func(r kmsg.Response) {
			resp := r.(*kmsg.OffsetCommitResponse)
			resp.Topics = append(resp.Topics, offsetCommitErrors(denied, kerr.TopicAuthorizationFailed).Topics...)
		}
	}
	return true
}

func offsetCommitErrors(topics []kmsg.OffsetCommitRequestTopic, err *kerr.Error) *kmsg.OffsetCommitResponse {
	resp := kmsg.NewPtrOffsetCommitResponse()
	for _, t := range topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, err.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// authorizeOffsetFetch needs DESCRIBE on each group (else the group answers
// GROUP_AUTHORIZATION_FAILED) and DESCRIBE on each topic: a topic asked for
// by name answers TOPIC_AUTHORIZATION_FAILED, one in an all-topics answer
// is left out. Fetching offsets changes nothing, so the coordinator answers
// first and the answer is corrected.
func (b *Broker) authorizeOffsetFetch(c *call, req *kmsg.OffsetFetchRequest) {
	if !b.authorizing() {
		return
	}
	describable := b.topicChecker(c, opDescribe)
	filterTopics := func(topics []kmsg.OffsetFetchResponseGroupTopic, named bool) []kmsg.OffsetFetchResponseGroupTopic {
		return slices.DeleteFunc(topics, func(t kmsg.OffsetFetchResponseGroupTopic) bool {
			name, known := b.topicNameOf(t.Topic, t.TopicID)
			if !known {
				return false
			}
			if !named {
				describable.quiet = true
				ok := describable.allowed(name)
				describable.quiet = false
				return !ok
			}
			if !describable.allowed(name) {
				for i := range t.Partitions {
					p := &t.Partitions[i]
					p.ErrorCode, p.Offset, p.LeaderEpoch, p.Metadata = kerr.TopicAuthorizationFailed.Code, -1, -1, strptr("")
				}
			}
			return false
		})
	}
	c.amend = func(r kmsg.Response) {
		resp := r.(*kmsg.OffsetFetchResponse)
		if c.version < 8 {
			if !b.authorize(c, opDescribe, resGroup, req.Group) {
				resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
				resp.Topics = nil
				return
			}
			for i := range resp.Topics {
				t := &resp.Topics[i]
				if !describable.allowed(t.Topic) && req.Topics != nil {
					for j := range t.Partitions {
						p := &t.Partitions[j]
						p.ErrorCode, p.Offset, p.LeaderEpoch, p.Metadata = kerr.TopicAuthorizationFailed.Code, -1, -1, strptr("")
					}
				}
			}
			if req.Topics == nil {
				resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.OffsetFetchResponseTopic) bool { return !describable.allowed(t.Topic) })
			}
			return
		}
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if !b.authorize(c, opDescribe, resGroup, g.Group) {
				g.ErrorCode, g.Topics = kerr.GroupAuthorizationFailed.Code, nil
				continue
			}
			named := true
			for _, rg := range req.Groups {
				if rg.Group == g.Group {
					named = rg.Topics != nil
				}
			}
			g.Topics = filterTopics(g.Topics, named)
		}
	}
}

// authorizeOffsetDelete needs DELETE on the group (else the whole request
// answers GROUP_AUTHORIZATION_FAILED) and READ on each topic (else its
// partitions answer TOPIC_AUTHORIZATION_FAILED).
func (b *Broker) authorizeOffsetDelete(c *call, req *kmsg.OffsetDeleteRequest) bool {
	if !b.authorizing() {
		return true
	}
	if !b.authorize(c, opDelete, resGroup, req.Group) {
		resp := kmsg.NewPtrOffsetDeleteResponse()
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		c.reply(resp)
		return false
	}
	readable := b.topicChecker(c, opRead)
	var denied []kmsg.OffsetDeleteRequestTopic
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.OffsetDeleteRequestTopic) bool {
		if readable.allowed(t.Topic) {
			return false
		}
		denied = append(denied, t)
		return true
	})
	if len(denied) > 0 {
		c.amend = func(r kmsg.Response) {
			resp := r.(*kmsg.OffsetDeleteResponse)
			for _, t := range denied {
				rt := kmsg.NewOffsetDeleteResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetDeleteResponseTopicPartition()
					rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
		}
	}
	return true
}

// authorizeConsumerGroupHeartbeat needs READ on the group and DESCRIBE on
// every subscribed topic name, as Kafka 4's handleConsumerGroupHeartbeat.
func (b *Broker) authorizeConsumerGroupHeartbeat(c *call, req *kmsg.ConsumerGroupHeartbeatRequest) (*kerr.Error, string) {
	if !b.authorizing() {
		return nil, ""
	}
	if !b.authorize(c, opRead, resGroup, req.Group) {
		return kerr.GroupAuthorizationFailed, kerr.GroupAuthorizationFailed.Message
	}
	var denied []string
	describable := b.topicChecker(c, opDescribe)
	for _, topic := range req.SubscribedTopicNames {
		if !describable.allowed(topic) {
			denied = append(denied, topic)
		}
	}
	if len(denied) > 0 {
		slices.Sort(denied)
		return kerr.TopicAuthorizationFailed, "The group member is not authorized to describe topics " + joinNames(denied) + "."
	}
	return nil, ""
}

// authorizeConsumerGroupDescribe needs DESCRIBE on each group and fills
// the KIP-430 authorized operations when asked.
func (b *Broker) authorizeConsumerGroupDescribe(c *call, req *kmsg.ConsumerGroupDescribeRequest) {
	var denied []string
	if b.authorizing() {
		req.Groups, denied = splitAllowed(req.Groups, func(g string) bool { return b.authorize(c, opDescribe, resGroup, g) })
	}
	if len(denied) == 0 && !req.IncludeAuthorizedOperations {
		return
	}
	c.amend = func(r kmsg.Response) {
		resp := r.(*kmsg.ConsumerGroupDescribeResponse)
		if req.IncludeAuthorizedOperations {
			for i := range resp.Groups {
				if resp.Groups[i].ErrorCode == 0 {
					resp.Groups[i].AuthorizedOperations = b.authorizedOperations(c, resGroup, resp.Groups[i].Group, authz.GroupOperations)
				}
			}
		}
		for _, g := range denied {
			res := kmsg.NewConsumerGroupDescribeResponseGroup()
			res.Group, res.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
			res.AuthorizedOperations = authorizedOperationsOmitted
			resp.Groups = append(resp.Groups, res)
		}
	}
}

func joinNames(names []string) string {
	out := "["
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out + "]"
}

// topicNameOf is the name of a topic a request names by name or, in newer
// versions, by id; known is false for an id the image does not have, which
// the handler answers UNKNOWN_TOPIC_ID without anything to authorize.
func (b *Broker) topicNameOf(name string, id [16]byte) (string, bool) {
	if name != "" || id == [16]byte{} {
		return name, true
	}
	if t := b.Image().TopicByID(metadata.UUID(id)); t != nil {
		return t.Name, true
	}
	return "", false
}
