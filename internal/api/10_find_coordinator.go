package api

// FindCoordinator (key 10), versions 0-6.
//
// Behavior:
//   - Groups (key type 0) are coordinated by the leader of
//     __consumer_offsets partition abs(javaHash(group)) % partitions, as in
//     Kafka. The topic is created on first use with
//     offsets.topic.num.partitions partitions, a replication factor of
//     offsets.topic.replication.factor, and cleanup.policy=compact. While
//     fewer brokers are alive than that factor the key answers
//     COORDINATOR_NOT_AVAILABLE, as in Kafka (internalTopic; the zero-config
//     single node caps the factor instead).
//   - Transactional ids (key type 1) are coordinated by the leader of
//     __transaction_state partition abs(javaHash(id)) % partitions. The
//     topic is created on first use with transaction.state.log.num.partitions
//     partitions, transaction.state.log.replication.factor (waited for as
//     above), cleanup.policy=compact and transaction.state.log.segment.bytes.
//   - Share-partitions (key type 2, v6+, "group:topicId:partition") are
//     coordinated by the leader of __share_group_state partition
//     abs(javaHash(key)) % partitions (share_coordinator.go); CLUSTER_ACTION.
//   - v4+ batches keys; each key gets its own answer.
//   - An empty key answers INVALID_REQUEST; an unknown key type INVALID_REQUEST.

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/group"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

func init() { register(10, 0, 6, handleFindCoordinator) }

type coordinatorAnswer struct {
	nodeID    int32
	host      string
	port      int32
	errorCode int16
	message   string
}

func handleFindCoordinator(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.FindCoordinatorRequest)
	resp := kmsg.NewPtrFindCoordinatorResponse()
	if c.version >= 4 {
		for _, key := range req.CoordinatorKeys {
			a := b.findCoordinator(c, req.CoordinatorType, key)
			rc := kmsg.NewFindCoordinatorResponseCoordinator()
			rc.Key = key
			rc.NodeID, rc.Host, rc.Port, rc.ErrorCode = a.nodeID, a.host, a.port, a.errorCode
			if a.message != "" {
				rc.ErrorMessage = strptr(a.message)
			}
			resp.Coordinators = append(resp.Coordinators, rc)
		}
		c.reply(resp)
		return
	}
	a := b.findCoordinator(c, req.CoordinatorType, req.CoordinatorKey)
	resp.NodeID, resp.Host, resp.Port, resp.ErrorCode = a.nodeID, a.host, a.port, a.errorCode
	if a.message != "" {
		resp.ErrorMessage = strptr(a.message)
	}
	c.reply(resp)
}

func (b *Broker) findCoordinator(c *call, keyType int8, key string) coordinatorAnswer {
	none := coordinatorAnswer{nodeID: -1, port: -1}
	switch {
	case keyType == 0 && !b.authorize(c, opDescribe, resGroup, key):
		none.errorCode = kerr.GroupAuthorizationFailed.Code
		return none
	case keyType == 1 && !b.authorize(c, opDescribe, resTransactionalID, key):
		none.errorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return none
	case keyType == 2 && !b.authorizeCluster(c, opClusterAction):
		none.errorCode = kerr.ClusterAuthorizationFailed.Code
		return none
	case key == "":
		none.errorCode = kerr.InvalidRequest.Code
		none.message = "coordinator key is empty"
		return none
	case keyType == 1:
		return b.findTransactionCoordinator(c, key)
	case keyType == 2:
		return b.findShareCoordinator(c, key)
	case keyType != 0:
		none.errorCode = kerr.InvalidRequest.Code
		none.message = "unknown coordinator key type " + strconv.Itoa(int(keyType))
		return none
	}
	t, code := b.internalTopic(controller.ConsumerOffsetsTopic, b.Config().OffsetsTopicNumPartitions, b.Config().OffsetsTopicReplicationFactor, 0,
		map[string]*string{"cleanup.policy": strptr("compact"), "segment.bytes": strptr(strconv.Itoa(int(b.Config().OffsetsTopicSegmentBytes)))})
	if code != 0 {
		none.errorCode = code
		return none
	}
	p := t.Partitions[group.PartitionFor(key, int32(len(t.Partitions)))]
	return b.nodeAnswer(c, p.Leader)
}

// findTransactionCoordinator answers FindCoordinator for a transactional id.
func (b *Broker) findTransactionCoordinator(c *call, key string) coordinatorAnswer {
	none := coordinatorAnswer{nodeID: -1, port: -1}
	cfg := b.Config()
	// The topic configs of Kafka's TransactionStateManager, with
	// min.insync.replicas from transaction.state.log.min.isr.
	t, code := b.internalTopic(controller.TransactionStateTopic, cfg.TransactionStateLogNumPartitions, cfg.TransactionStateLogReplicationFactor, cfg.TransactionStateLogMinISR,
		map[string]*string{
			"unclean.leader.election.enable": strptr("false"),
			"cleanup.policy":                 strptr("compact"),
			"compression.type":               strptr("uncompressed"),
			"segment.bytes":                  strptr(strconv.Itoa(int(cfg.TransactionStateLogSegmentBytes))),
		})
	if code != 0 {
		none.errorCode = code
		return none
	}
	p := t.Partitions[group.PartitionFor(key, int32(len(t.Partitions)))]
	return b.nodeAnswer(c, p.Leader)
}

// nodeAnswer describes node id's endpoint on the request's listener.
func (b *Broker) nodeAnswer(c *call, id int32) coordinatorAnswer {
	for _, mb := range brokerList(b.Image(), c.req.Conn.Listener) {
		if mb.NodeID == id {
			return coordinatorAnswer{nodeID: id, host: mb.Host, port: mb.Port}
		}
	}
	return coordinatorAnswer{nodeID: -1, port: -1, errorCode: kerr.CoordinatorNotAvailable.Code}
}

// internalTopic returns an internal topic, creating it on first use with
// its replication factor and, when minISR > 0, min.insync.replicas =
// minISR capped to that factor. As in Kafka, a cluster (one with
// controller.quorum.voters) creates it only once enough brokers are alive
// to hold every replica: until then the coordinator is not available
// (COORDINATOR_NOT_AVAILABLE), and an early client cannot leave the topic
// with fewer replicas than configured for good. The zero-config single
// node (no controller.quorum.voters), which Kafka has no equivalent of,
// caps the factor to its one broker instead, as the single-node
// server.properties Kafka ships sets these factors to 1.
func (b *Broker) internalTopic(name string, partitions int32, factor int16, minISR int32, configs map[string]*string) (*metadata.Topic, int16) {
	if t := b.Image().Topic(name); t != nil {
		return t, 0
	}
	live := int16(0)
	for _, br := range b.Image().Brokers() {
		if !br.Fenced {
			live++
		}
	}
	if factor > live {
		if b.StaticConfig != nil && len(b.StaticConfig.ControllerQuorumVoters) > 0 {
			return nil, kerr.CoordinatorNotAvailable.Code
		}
		factor = live
	}
	if factor <= 0 {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	if minISR > 0 {
		configs["min.insync.replicas"] = strptr(strconv.Itoa(int(min(minISR, int32(factor)))))
	}
	res := b.createTopics(nil, []controller.CreateTopic{{Name: name, NumPartitions: partitions, ReplicationFactor: factor, Configs: configs}})
	if res[0].ErrorCode != 0 && res[0].ErrorCode != kerr.TopicAlreadyExists.Code {
		b.Logger.Error("create internal topic", "topic", name, "error", res[0].ErrorMessage)
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	t := b.Image().Topic(name)
	if t == nil {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	return t, 0
}
