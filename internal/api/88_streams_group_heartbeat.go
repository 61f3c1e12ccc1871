package api

// StreamsGroupHeartbeat (key 88), versions 0-1, served by the group
// coordinator (internal/group): the streams rebalance protocol of KIP-1071,
// where the coordinator keeps a Kafka Streams application's topology,
// creates its internal topics and assigns its tasks.
//
// Behavior:
//   - Member epoch 0 joins with the topology, -1 leaves, -2 has a static
//     member leave for now.
//   - v1 adds AcceptableRecoveryLag as an int64 and
//     TopologyDescriptionRequired, never set: no topology description
//     plugin is configured, as in a default Kafka 4.4 broker.
//   - Needs READ on the group (GROUP_AUTHORIZATION_FAILED) and, when a
//     topology is sent, DESCRIBE on every topic it names
//     (TOPIC_AUTHORIZATION_FAILED).
//   - Missing internal (repartition and changelog) topics the coordinator
//     returns are created here, asynchronously, where the principal has
//     CREATE on the cluster or the topic; the others are reported as a
//     MISSING_INTERNAL_TOPICS status "Unauthorized to CREATE on topics".
//   - UNSUPPORTED_VERSION while the finalized streams.version is 0 or
//     "streams" is not in group.coordinator.rebalance.protocols.

import (
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/group"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

func init() { register(88, 0, 1, handleStreamsGroupHeartbeat) }

func handleStreamsGroupHeartbeat(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.StreamsGroupHeartbeatRequest)
	if !b.streamsGroupsEnabled() {
		resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		c.reply(resp)
		return
	}
	if code, message := b.authorizeStreamsGroupHeartbeat(c, req); code != nil {
		resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode, resp.ErrorMessage = code.Code, strptr(message)
		c.reply(resp)
		return
	}
	client := group.Client{Host: group.ClientHost(c.req.Conn.RemoteAddr)}
	if c.req.ClientID != nil {
		client.ID = *c.req.ClientID
	}
	offHandler(func() {
		b.Groups.StreamsGroupHeartbeat(client, req, func(resp *kmsg.StreamsGroupHeartbeatResponse, toCreate []group.StreamsTopicToCreate) {
			if resp.ErrorCode == 0 && len(toCreate) > 0 {
				var denied []group.StreamsTopicToCreate
				toCreate, denied = splitAllowed(toCreate, func(t group.StreamsTopicToCreate) bool { return b.authorizeAutoCreate(c, t.Name) })
				if len(denied) > 0 {
					names := make([]string, len(denied))
					for i, t := range denied {
						names[i] = t.Name
					}
					resp.Status = append(resp.Status, kmsg.StreamsGroupHeartbeatResponseStatus{
						StatusCode:   3, // MISSING_INTERNAL_TOPICS
						StatusDetail: "Unauthorized to CREATE on topics " + strings.Join(names, ", ") + ".",
					})
				}
				b.createStreamsInternalTopics(toCreate)
			}
			c.reply(resp)
		})
	})
}

// streamsGroupsEnabled reports whether streams groups are served: the
// finalized streams.version is at least 1 and "streams" is among
// group.coordinator.rebalance.protocols.
func (b *Broker) streamsGroupsEnabled() bool {
	return b.Image().FeatureLevel(metadata.StreamsVersionFeature) >= 1 &&
		slices.Contains(b.Config().GroupCoordinatorRebalanceProtocols, "streams")
}

// streamsTopicCreations tracks the internal topics being created, so
// that the heartbeats of every member of an application, which all report
// the same missing topics until they exist, cause one creation each.
type streamsTopicCreations struct {
	mu struct {
		sync.Mutex
		// inFlight holds the names being created.
		// Invariant: at most maxStreamsTopicCreations names.
		inFlight map[string]bool
	}
}

// maxStreamsTopicCreations bounds the internal topics being created at
// once; more wait for a later heartbeat to ask again.
const maxStreamsTopicCreations = 1000

// createStreamsInternalTopics creates the topics in the background, as
// Kafka's AutoTopicCreationManager.createStreamsInternalTopics: the
// members see them on a later heartbeat. An existing topic is no error.
func (b *Broker) createStreamsInternalTopics(topics []group.StreamsTopicToCreate) {
	var creates []controller.CreateTopic
	b.streamsCreations.mu.Lock()
	if b.streamsCreations.mu.inFlight == nil {
		b.streamsCreations.mu.inFlight = make(map[string]bool)
	}
	for _, t := range topics {
		if b.streamsCreations.mu.inFlight[t.Name] || len(b.streamsCreations.mu.inFlight) >= maxStreamsTopicCreations {
			continue
		}
		b.streamsCreations.mu.inFlight[t.Name] = true
		configs := make(map[string]*string, len(t.Configs))
		for k, v := range t.Configs {
			configs[k] = strptr(v)
		}
		creates = append(creates, controller.CreateTopic{Name: t.Name, NumPartitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor, Configs: configs})
	}
	b.streamsCreations.mu.Unlock()
	if len(creates) == 0 {
		return
	}
	go func() {
		// Created as this broker: the heartbeat checked CREATE for its
		// principal, and the request is answered before this runs.
		results := b.createTopics(nil, creates)
		b.streamsCreations.mu.Lock()
		for _, t := range creates {
			delete(b.streamsCreations.mu.inFlight, t.Name)
		}
		b.streamsCreations.mu.Unlock()
		for _, res := range results {
			if res.ErrorCode != 0 && res.ErrorCode != kerr.TopicAlreadyExists.Code {
				b.Logger.Warn("failed to create a streams internal topic", "topic", res.Name, "error", kerr.ErrorForCode(res.ErrorCode), "message", res.ErrorMessage)
			} else if res.ErrorCode == 0 {
				b.Logger.Info("created a streams internal topic", "topic", res.Name, "partitions", res.NumPartitions)
			}
		}
	}()
}
