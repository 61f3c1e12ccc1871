package api

// The controller mutation quota (KIP-599): CreateTopics, CreatePartitions
// and DeleteTopics count the partitions they create or delete against the
// client's controller_mutation_rate, a token bucket. Versions that know
// THROTTLING_QUOTA_EXCEEDED (CreateTopics v6+, CreatePartitions v3+,
// DeleteTopics v5+) are strict: once the bucket is empty, each further
// topic of the request answers THROTTLING_QUOTA_EXCEEDED and is not acted
// on, and the response carries the time until the bucket refills. Older
// versions are permissive: every topic goes ahead and the response is
// throttled by the deficit. validate_only requests count nothing.
//
// The node the client reached decides, before forwarding the rest to the
// active controller: quotas are measured per broker, as Kafka's brokers
// measure their own clients' requests.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/quota"
)

// mutationQuota is one request's view of the controller mutation quota.
type mutationQuota struct {
	c        *call
	m        *quota.Manager
	strict   bool
	user     string
	clientID string
}

// mutationQuotaFor returns the request's mutation quota, nil when none
// applies (no quota set, a controller-listener request, validate_only).
func (b *Broker) mutationQuotaFor(c *call, strictSince int16, validateOnly bool) *mutationQuota {
	m := c.quotaManager()
	if m == nil || validateOnly || !m.Enabled(quota.ControllerMutation) {
		return nil
	}
	user, clientID := c.quotaIdentity()
	return &mutationQuota{c: c, m: m, strict: c.version >= strictSince, user: user, clientID: clientID}
}

// admit accounts for permits mutations; false means the topic is refused
// with THROTTLING_QUOTA_EXCEEDED.
func (q *mutationQuota) admit(permits int32) bool {
	accepted, throttleMs := q.m.RecordMutations(q.user, q.clientID, float64(max(permits, 0)), q.strict, q.c.quota.broker.nowMs())
	q.c.addThrottle(throttleMs)
	return accepted
}

// amendWith appends answers to the response after any earlier amendment.
func amendWith(c *call, add func(kmsg.Response)) {
	previous := c.amend
	c.amend = func(r kmsg.Response) {
		if previous != nil {
			previous(r)
		}
		add(r)
	}
}

var throttledMessage = strptr(kerr.ThrottlingQuotaExceeded.Message)

// limitCreateTopics withholds the topics over the quota.
func (b *Broker) limitCreateTopics(c *call, req *kmsg.CreateTopicsRequest) {
	q := b.mutationQuotaFor(c, 6, req.ValidateOnly)
	if q == nil {
		return
	}
	defaultPartitions := b.Config().NumPartitions
	var refused []kmsg.CreateTopicsResponseTopic
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.CreateTopicsRequestTopic) bool {
		permits := t.NumPartitions
		switch {
		case len(t.ReplicaAssignment) > 0:
			permits = int32(len(t.ReplicaAssignment))
		case permits == -1:
			permits = defaultPartitions
		}
		if q.admit(permits) {
			return false
		}
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic, st.ErrorCode, st.ErrorMessage = t.Topic, kerr.ThrottlingQuotaExceeded.Code, throttledMessage
		st.NumPartitions, st.ReplicationFactor = -1, -1
		refused = append(refused, st)
		return true
	})
	if len(refused) > 0 {
		amendWith(c, func(r kmsg.Response) {
			resp := r.(*kmsg.CreateTopicsResponse)
			resp.Topics = append(resp.Topics, refused...)
		})
	}
}

// limitCreatePartitions withholds the topics over the quota; a topic's
// permits are the partitions it adds.
func (b *Broker) limitCreatePartitions(c *call, req *kmsg.CreatePartitionsRequest) {
	q := b.mutationQuotaFor(c, 3, req.ValidateOnly)
	if q == nil {
		return
	}
	img := b.Image()
	var refused []kmsg.CreatePartitionsResponseTopic
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.CreatePartitionsRequestTopic) bool {
		var current int32
		if topic := img.Topic(t.Topic); topic != nil {
			current = int32(len(topic.Partitions))
		}
		if q.admit(t.Count - current) {
			return false
		}
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic, st.ErrorCode, st.ErrorMessage = t.Topic, kerr.ThrottlingQuotaExceeded.Code, throttledMessage
		refused = append(refused, st)
		return true
	})
	if len(refused) > 0 {
		amendWith(c, func(r kmsg.Response) {
			resp := r.(*kmsg.CreatePartitionsResponse)
			resp.Topics = append(resp.Topics, refused...)
		})
	}
}

// limitDeleteTopics withholds the topics over the quota; a topic's permits
// are its partitions.
func (b *Broker) limitDeleteTopics(c *call, req *kmsg.DeleteTopicsRequest) {
	q := b.mutationQuotaFor(c, 5, false)
	if q == nil {
		return
	}
	img := b.Image()
	partitionsOf := func(topic *metadata.Topic) int32 {
		if topic == nil {
			return 0
		}
		return int32(len(topic.Partitions))
	}
	var refused []kmsg.DeleteTopicsResponseTopic
	if c.version >= 6 {
		req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.DeleteTopicsRequestTopic) bool {
			topic := img.TopicByID(metadata.UUID(t.TopicID))
			if t.Topic != nil {
				topic = img.Topic(*t.Topic)
			}
			if q.admit(partitionsOf(topic)) {
				return false
			}
			st := kmsg.NewDeleteTopicsResponseTopic()
			st.Topic, st.TopicID, st.ErrorCode, st.ErrorMessage = t.Topic, t.TopicID, kerr.ThrottlingQuotaExceeded.Code, throttledMessage
			refused = append(refused, st)
			return true
		})
	} else {
		req.TopicNames = slices.DeleteFunc(req.TopicNames, func(name string) bool {
			if q.admit(partitionsOf(img.Topic(name))) {
				return false
			}
			st := kmsg.NewDeleteTopicsResponseTopic()
			st.Topic, st.ErrorCode = strptr(name), kerr.ThrottlingQuotaExceeded.Code
			if c.version >= 5 {
				st.ErrorMessage = throttledMessage
			}
			refused = append(refused, st)
			return true
		})
	}
	if len(refused) > 0 {
		amendWith(c, func(r kmsg.Response) {
			resp := r.(*kmsg.DeleteTopicsResponse)
			resp.Topics = append(resp.Topics, refused...)
		})
	}
}
