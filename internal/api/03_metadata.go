package api

// Metadata (key 3), versions 0-13.
//
// Behavior:
//   - A null topic list (v1+), or an empty one at v0, asks for every topic.
//   - Unknown topics are created with num.partitions and
//     default.replication.factor when auto.create.topics.enable is on and the
//     request allows it (v4+ allow_auto_topic_creation; always allowed below
//     v4); otherwise they answer UNKNOWN_TOPIC_OR_PARTITION. Invalid names
//     answer INVALID_TOPIC_EXCEPTION and are never created. Internal topics
//     are never auto-created by clients.
//   - v10+ carries topic ids; v12 may look topics up by id.
//   - v13 (KIP-1102) adds a top-level error code, which Kafka sets to
//     REBOOTSTRAP_REQUIRED only when it wants the client to rebootstrap;
//     Samsa never does, so it is 0.
//   - Brokers are listed with the advertised endpoint of the listener the
//     request arrived on.
//   - Authorization (Kafka's handleTopicMetadataRequest): topics the
//     principal may not DESCRIBE are left out of an all-topics answer and
//     answer TOPIC_AUTHORIZATION_FAILED when named (by id: the id without
//     the name), whether or not they exist; auto-creation needs CREATE on
//     the cluster or the topic, else TOPIC_AUTHORIZATION_FAILED. The
//     KIP-430 authorized operations are filled when requested (v8+).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

func init() { register(3, 0, 13, handleMetadata) }

// authorizedOperationsOmitted is Kafka's INT32_MIN marker for "not requested".
const authorizedOperationsOmitted = -2147483648

func handleMetadata(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.MetadataRequest)
	img := b.Image()
	resp := kmsg.NewPtrMetadataResponse()
	resp.ClusterID = strptr(img.ClusterID)
	resp.ControllerID = b.controllerIDForClients()
	resp.Brokers = brokerList(img, c.req.Conn.Listener)

	if c.version >= 8 && c.version <= 10 && req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = b.clusterAuthorizedOperations(c)
	}
	if c.version >= 8 && req.IncludeTopicAuthorizedOperations {
		c.amend = func(r kmsg.Response) { b.fillTopicAuthorizedOperations(c, r.(*kmsg.MetadataResponse)) }
	}
	describable := b.topicChecker(c, opDescribe)
	allTopics := req.Topics == nil || (c.version == 0 && len(req.Topics) == 0)
	if allTopics {
		describable.quiet = true
		for _, name := range img.TopicNames() {
			if describable.allowed(name) {
				resp.Topics = append(resp.Topics, topicMetadata(img.Topic(name)))
			}
		}
		c.reply(resp)
		return
	}

	allowAuto := c.version < 4 || req.AllowAutoTopicCreation
	var toCreate []controller.CreateTopic
	var createIndex []int
	for _, rt := range req.Topics {
		var t *metadata.Topic
		name := ""
		if rt.Topic != nil {
			name = *rt.Topic
			t = img.Topic(name)
		} else if rt.TopicID != [16]byte{} {
			t = img.TopicByID(metadata.UUID(rt.TopicID))
			if t == nil {
				mt := kmsg.NewMetadataResponseTopic()
				mt.TopicID = rt.TopicID
				mt.ErrorCode = kerr.UnknownTopicID.Code
				mt.AuthorizedOperations = authorizedOperationsOmitted
				resp.Topics = append(resp.Topics, mt)
				continue
			}
		}
		if t != nil && !describable.allowed(t.Name) || t == nil && rt.Topic != nil && !describable.allowed(name) {
			resp.Topics = append(resp.Topics, unauthorizedTopicMetadata(rt))
			continue
		}
		if t != nil {
			resp.Topics = append(resp.Topics, topicMetadata(t))
			continue
		}
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = strptr(name)
		mt.AuthorizedOperations = authorizedOperationsOmitted
		switch {
		case controller.ValidateTopicName(name) != nil:
			mt.ErrorCode = kerr.InvalidTopicException.Code
		case allowAuto && b.Config().AutoCreateTopicsEnable && !controller.IsInternalTopic(name) && !b.authorizeAutoCreate(c, name):
			mt.ErrorCode = kerr.TopicAuthorizationFailed.Code
		case allowAuto && b.Config().AutoCreateTopicsEnable && !controller.IsInternalTopic(name):
			toCreate = append(toCreate, controller.CreateTopic{Name: name, NumPartitions: -1, ReplicationFactor: -1})
			createIndex = append(createIndex, len(resp.Topics))
			mt.ErrorCode = kerr.LeaderNotAvailable.Code
		default:
			mt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		}
		resp.Topics = append(resp.Topics, mt)
	}
	if len(toCreate) > 0 {
		results := b.createTopics(c, toCreate)
		img = b.Image()
		for i, res := range results {
			at := createIndex[i]
			switch {
			case res.ErrorCode == 0 || res.ErrorCode == kerr.TopicAlreadyExists.Code:
				if t := img.Topic(res.Name); t != nil {
					resp.Topics[at] = topicMetadata(t)
				}
			case res.ErrorCode == kerr.InvalidReplicationFactor.Code:
				// Kafka reports a topic it could not auto-create as
				// unavailable rather than leaking the create error.
				resp.Topics[at].ErrorCode = kerr.LeaderNotAvailable.Code
			default:
				resp.Topics[at].ErrorCode = res.ErrorCode
			}
		}
	}
	c.reply(resp)
}

func brokerList(img *metadata.Image, listener string) []kmsg.MetadataResponseBroker {
	var out []kmsg.MetadataResponseBroker
	for _, br := range img.Brokers() {
		if br.Fenced || len(br.Endpoints) == 0 {
			continue
		}
		ep := br.Endpoints[0]
		for _, e := range br.Endpoints {
			if e.Name == listener {
				ep = e
				break
			}
		}
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID = br.ID
		mb.Host = ep.Host
		mb.Port = ep.Port
		mb.Rack = br.Rack
		out = append(out, mb)
	}
	return out
}

func topicMetadata(t *metadata.Topic) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = strptr(t.Name)
	mt.TopicID = t.ID
	mt.IsInternal = controller.IsInternalTopic(t.Name)
	mt.AuthorizedOperations = authorizedOperationsOmitted
	for _, p := range t.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p.Partition
		mp.Leader = p.Leader
		mp.LeaderEpoch = p.LeaderEpoch
		mp.Replicas = p.Replicas
		mp.ISR = p.ISR
		mp.OfflineReplicas = []int32{}
		if p.Leader < 0 {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}
