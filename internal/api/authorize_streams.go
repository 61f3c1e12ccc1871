package api

// Authorization of the streams group APIs, as Kafka's KafkaApis checks
// them: READ on the group for a heartbeat, DESCRIBE on every topic a
// joining member's topology names, DESCRIBE on each group described;
// creating internal topics needs CREATE (88_streams_group_heartbeat.go).

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

func (b *Broker) authorizeStreamsGroupHeartbeat(c *call, req *kmsg.StreamsGroupHeartbeatRequest) (*kerr.Error, string) {
	if !b.authorizing() {
		return nil, ""
	}
	if !b.authorize(c, opRead, resGroup, req.Group) {
		return kerr.GroupAuthorizationFailed, kerr.GroupAuthorizationFailed.Message
	}
	if req.Topology == nil {
		return nil, ""
	}
	var names []string
	for _, st := range req.Topology.Subtopologies {
		names = append(names, st.SourceTopics...)
		names = append(names, st.RepartitionSinkTopics...)
		for _, t := range st.RepartitionSourceTopics {
			names = append(names, t.Topic)
		}
		for _, t := range st.StateChangelogTopics {
			names = append(names, t.Topic)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	describable := b.topicChecker(c, opDescribe)
	var denied []string
	for _, name := range names {
		if !describable.allowed(name) {
			denied = append(denied, name)
		}
	}
	if len(denied) > 0 {
		return kerr.TopicAuthorizationFailed, "The streams group member is not authorized to describe topics " + joinNames(denied) + "."
	}
	return nil, ""
}

// authorizeStreamsGroupDescribe needs DESCRIBE on each group and fills
// the KIP-430 authorized operations when asked.
func (b *Broker) authorizeStreamsGroupDescribe(c *call, req *kmsg.StreamsGroupDescribeRequest) {
	var denied []string
	if b.authorizing() {
		req.Groups, denied = splitAllowed(req.Groups, func(g string) bool { return b.authorize(c, opDescribe, resGroup, g) })
	}
	if len(denied) == 0 && !req.IncludeAuthorizedOperations {
		return
	}
	c.amend = func(r kmsg.Response) {
		resp := r.(*kmsg.StreamsGroupDescribeResponse)
		if req.IncludeAuthorizedOperations {
			for i := range resp.Groups {
				if resp.Groups[i].ErrorCode == 0 {
					resp.Groups[i].AuthorizedOperations = b.authorizedOperations(c, resGroup, resp.Groups[i].Group, authz.GroupOperations)
				}
			}
		}
		for _, g := range denied {
			res := kmsg.NewStreamsGroupDescribeResponseGroup()
			res.Group, res.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
			res.AuthorizedOperations = authorizedOperationsOmitted
			resp.Groups = append(resp.Groups, res)
		}
	}
}
