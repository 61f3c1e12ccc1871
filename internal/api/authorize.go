package api

// Authorization of requests (authorizer.class.name): every handler asks
// b.authorize for the resource and operation Kafka's KafkaApis checks,
// before it looks at whether the resource exists, and answers Kafka's error
// code for a denial. With no authorizer configured every check is one nil
// test.

import (
	"net"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

// Shorthands for the handlers' checks.
const (
	opRead            = authz.OpRead
	opWrite           = authz.OpWrite
	opCreate          = authz.OpCreate
	opDelete          = authz.OpDelete
	opAlter           = authz.OpAlter
	opDescribe        = authz.OpDescribe
	opClusterAction   = authz.OpClusterAction
	opDescribeConfigs = authz.OpDescribeConfigs
	opAlterConfigs    = authz.OpAlterConfigs
	opIdempotentWrite = authz.OpIdempotentWrite

	resTopic           = authz.ResourceTopic
	resGroup           = authz.ResourceGroup
	resCluster         = authz.ResourceCluster
	resTransactionalID = authz.ResourceTransactionalID

	clusterName = authz.ClusterName
)

// anonymous is the principal of a connection nobody authenticated.
const anonymous = "User:ANONYMOUS"

// denialLogsPerSecond bounds the denial log lines (Kafka logs every denial
// to kafka.authorizer.logger; a flood of denied requests must not flood the
// log). Denials past the bound are still counted.
const denialLogsPerSecond = 10

// Authorization is the node's authorizer and what it counts; a nil
// *Authorization authorizes everything.
type Authorization struct {
	Authorizer *authz.Authorizer
	denials    *prometheus.CounterVec
	// logWindow is the second (Unix) the logged count is for.
	logWindow atomic.Int64
	logged    atomic.Int64
}

// NewAuthorization returns the authorization of a node using a.
func NewAuthorization(a *authz.Authorizer) *Authorization {
	return &Authorization{Authorizer: a, denials: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "samsa_authorizer_denials_total",
		Help: "Requests or resources the authorizer denied, by operation and resource type.",
	}, []string{"operation", "resource_type"})}
}

// Collector is the denial counter, for the node's registry.
func (a *Authorization) Collector() prometheus.Collector { return a.denials }

// principal is the connection's principal.
func (c *call) principal() string {
	if p := c.req.Conn.Principal; p != "" {
		return p
	}
	return anonymous
}

// host is the client's IP address, as Kafka's ACL hosts name it.
func (c *call) host() string {
	switch addr := c.req.Conn.RemoteAddr.(type) {
	case *net.TCPAddr:
		return addr.IP.String()
	case nil:
		return ""
	default:
		host, _, err := net.SplitHostPort(addr.String())
		if err != nil {
			return addr.String()
		}
		return host
	}
}

// authorizing reports whether an authorizer is configured.
func (b *Broker) authorizing() bool { return b.Authorization != nil }

// authorize reports whether the request's principal may perform op on the
// resource, logging and counting a denial.
func (b *Broker) authorize(c *call, op authz.Operation, resourceType authz.ResourceType, name string) bool {
	a := b.Authorization
	if a == nil {
		return true
	}
	principal, host := c.principal(), c.host()
	if a.Authorizer.Authorize(principal, host, op, resourceType, name) {
		return true
	}
	b.denied(c, principal, host, op, resourceType, name)
	return false
}

// authorizeQuiet is authorize without logging a denial, for checks Kafka
// makes with logIfDenied=false (a fallback follows).
func (b *Broker) authorizeQuiet(c *call, op authz.Operation, resourceType authz.ResourceType, name string) bool {
	a := b.Authorization
	return a == nil || a.Authorizer.Authorize(c.principal(), c.host(), op, resourceType, name)
}

// authorizeCluster is authorize on the CLUSTER resource.
func (b *Broker) authorizeCluster(c *call, op authz.Operation) bool {
	return b.authorize(c, op, resCluster, clusterName)
}

// authorizeByResourceType reports whether the principal may perform op on
// some resource of the type (Kafka's authorizeByResourceType).
func (b *Broker) authorizeByResourceType(c *call, op authz.Operation, resourceType authz.ResourceType) bool {
	a := b.Authorization
	if a == nil {
		return true
	}
	return a.Authorizer.Index().AuthorizeByResourceType(c.principal(), c.host(), op, resourceType)
}

// topicAuthorizer answers many topic checks of one request from one index
// and remembers each topic's answer.
type topicAuthorizer struct {
	b  *Broker
	c  *call
	op authz.Operation
	// first and firstAllowed remember the first topic's answer, so the
	// common one-topic request allocates no map.
	first        string
	firstAllowed bool
	checked      bool
	answers      map[string]bool
	// quiet leaves denials unlogged (still counted), for listings that
	// leave unauthorized resources out silently.
	quiet bool
}

// topicChecker returns a checker of op on topics for the request.
func (b *Broker) topicChecker(c *call, op authz.Operation) *topicAuthorizer {
	return &topicAuthorizer{b: b, c: c, op: op}
}

// allowed reports whether the topic is authorized, checking it once.
func (t *topicAuthorizer) allowed(topic string) bool {
	if t.b.Authorization == nil {
		return true
	}
	if t.checked && t.first == topic {
		return t.firstAllowed
	}
	if ok, seen := t.answers[topic]; seen {
		return ok
	}
	var ok bool
	if t.quiet {
		ok = t.b.authorizeQuiet(t.c, t.op, resTopic, topic)
	} else {
		ok = t.b.authorize(t.c, t.op, resTopic, topic)
	}
	if !t.checked {
		t.first, t.firstAllowed, t.checked = topic, ok, true
		return ok
	}
	if t.answers == nil {
		t.answers = map[string]bool{}
	}
	t.answers[topic] = ok
	return ok
}

// authorizedOperations is the KIP-430 bitfield of ops on the resource.
func (b *Broker) authorizedOperations(c *call, resourceType authz.ResourceType, name string, ops []authz.Operation) int32 {
	a := b.Authorization
	if a == nil {
		var bits int32
		for _, op := range ops {
			bits |= 1 << op
		}
		return bits
	}
	return a.Authorizer.Index().AuthorizedOperations(c.principal(), c.host(), resourceType, name, ops)
}

// denied counts a denial and logs it within denialLogsPerSecond.
func (b *Broker) denied(c *call, principal, host string, op authz.Operation, resourceType authz.ResourceType, name string) {
	a := b.Authorization
	a.denials.WithLabelValues(op.String(), resourceType.String()).Inc()
	second := time.Now().Unix()
	if window := a.logWindow.Load(); window != second && a.logWindow.CompareAndSwap(window, second) {
		a.logged.Store(0)
	}
	if a.logged.Add(1) > denialLogsPerSecond {
		return
	}
	b.Logger.Info("authorization denied", "principal", principal, "host", host, "operation", op.String(),
		"resource_type", resourceType.String(), "resource", name, "api", kmsg.NameForKey(c.req.APIKey), "listener", c.req.Conn.Listener)
}

// auditACLChange logs an ACL change decided here, with who asked for it:
// the audit trail of admin changes to the ACLs.
func (b *Broker) auditACLChange(c *call, action string, count int) {
	b.Logger.Info("acl change", "action", action, "acls", count, "principal", c.principal(), "host", c.host(),
		"listener", c.req.Conn.Listener)
}

// produceErrorResponse answers every partition of req with err, as Kafka's
// ProduceRequest.getErrorResponse does.
func produceErrorResponse(req *kmsg.ProduceRequest, err *kerr.Error) *kmsg.ProduceResponse {
	resp := kmsg.NewPtrProduceResponse()
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, err.Code
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// authorizeFetch marks the fetch targets the principal may not read with
// TOPIC_AUTHORIZATION_FAILED, as Kafka's handleFetchRequest: a follower
// (replicaID >= 0) needs CLUSTER_ACTION on the cluster for every partition,
// a consumer READ on each topic. Topics named by an unknown id stay
// UNKNOWN_TOPIC_ID: without a name there is nothing to authorize.
func (b *Broker) authorizeFetch(c *call, replicaID int32, targets []fetchTarget) {
	if !b.authorizing() || len(targets) == 0 {
		return
	}
	if replicaID >= 0 {
		if !b.authorizeCluster(c, opClusterAction) {
			for i := range targets {
				targets[i].unknownTopicCode = kerr.TopicAuthorizationFailed.Code
			}
		}
		return
	}
	readable := b.topicChecker(c, opRead)
	for i := range targets {
		t := &targets[i]
		if t.topic != "" && !readable.allowed(t.topic) {
			t.unknownTopicCode = kerr.TopicAuthorizationFailed.Code
		}
	}
}

// authorizeAutoCreate reports whether the principal may have the topic
// created by a Metadata request: CREATE on the cluster, or on the topic.
func (b *Broker) authorizeAutoCreate(c *call, topic string) bool {
	return b.authorizeQuiet(c, opCreate, resCluster, clusterName) || b.authorize(c, opCreate, resTopic, topic)
}

// unauthorizedTopicMetadata is Kafka's answer for a topic the principal may
// not describe: the name it was asked by (or the id, without a name), no
// partitions.
func unauthorizedTopicMetadata(rt kmsg.MetadataRequestTopic) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = rt.Topic
	if rt.Topic == nil {
		mt.TopicID = rt.TopicID
	}
	mt.ErrorCode = kerr.TopicAuthorizationFailed.Code
	mt.AuthorizedOperations = authorizedOperationsOmitted
	mt.Partitions = []kmsg.MetadataResponseTopicPartition{}
	return mt
}

// fillTopicAuthorizedOperations sets the KIP-430 bits of every topic the
// response describes without error.
func (b *Broker) fillTopicAuthorizedOperations(c *call, resp *kmsg.MetadataResponse) {
	for i := range resp.Topics {
		mt := &resp.Topics[i]
		if mt.ErrorCode == 0 && mt.Topic != nil {
			mt.AuthorizedOperations = b.authorizedOperations(c, resTopic, *mt.Topic, authz.TopicOperations)
		}
	}
}
