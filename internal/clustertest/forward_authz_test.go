package clustertest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// startAuthorizingDedicatedCluster starts one dedicated controller and
// three brokers, every node with the authorizer on and plaintext listeners (every
// client is User:ANONYMOUS), where super.users differs: controllerSupers
// on the controller, brokerSupers on the brokers.
func startAuthorizingDedicatedCluster(t *testing.T, controllerSupers, brokerSupers string) *Cluster {
	t.Helper()
	c := &Cluster{}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range append(c.Controllers, c.Nodes...) {
				t.Logf("node %s log:\n%s", n.Addr(), n.Log())
			}
		}
	})
	controller := &Node{t: t, Dir: t.TempDir(), Port: FreePort(t)}
	voters := fmt.Sprintf("1@127.0.0.1:%d", controller.Port)
	shared := append(clusterOverrides(voters),
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"allow.everyone.if.no.acl.found=false")
	controller.overrides = append([]string{"node.id=1", "process.roles=controller",
		fmt.Sprintf("listeners=CONTROLLER://127.0.0.1:%d", controller.Port)}, shared...)
	controller.overrides = append(controller.overrides, "super.users="+controllerSupers)
	c.Controllers = append(c.Controllers, controller)
	t.Cleanup(controller.Stop)
	for i := range 3 {
		broker := &Node{t: t, Dir: t.TempDir(), Port: FreePort(t)}
		broker.overrides = append([]string{"node.id=" + strconv.Itoa(i+2), "process.roles=broker"}, shared...)
		broker.overrides = append(broker.overrides, "super.users="+brokerSupers)
		c.Nodes = append(c.Nodes, broker)
		t.Cleanup(broker.Stop)
	}
	startTogether(c.Controllers)
	startTogether(c.Nodes)
	c.waitForBrokers(t, 3)
	return c
}

// TestForwardedRequestsAuthorizedOnlyByTheController: in Kafka a broker
// forwards CreateTopics, DeleteTopics, CreatePartitions, the config, ACL,
// quota, SCRAM, election, reassignment, feature and quorum requests to the
// active controller without authorizing them itself, and the controller
// authorizes them as the client (KafkaApis forwardToController,
// ConfigAdminManager.preprocess, ControllerApis). Here the client is a
// super user on the controller only: every forwarded request succeeds
// although the broker it reached would refuse it, while what the broker
// decides itself (broker logger levels, DescribeConfigs,
// DescribeUserScramCredentials) is refused there with Kafka's errors.
func TestForwardedRequestsAuthorizedOnlyByTheController(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := startAuthorizingDedicatedCluster(t, "User:ANONYMOUS", "User:nobody")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	broker := c.Nodes[0].Addr()
	const topic = "decided-by-the-controller"

	if err := createTopicVia(ctx, broker, topic, 1, 2); err != nil {
		t.Fatalf("CreateTopics via a broker: %v", err)
	}
	// CreatePartitions, IncrementalAlterConfigs on the topic, ElectLeaders,
	// ListPartitionReassignments and DeleteTopics, all through the broker.
	checkForwardedAdminAPIs(ctx, t, broker, topic+"-2")

	legacy := kmsg.NewPtrAlterConfigsRequest()
	lr := kmsg.NewAlterConfigsRequestResource()
	lr.ResourceType, lr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	lc := kmsg.NewAlterConfigsRequestResourceConfig()
	lc.Name, lc.Value = "retention.ms", strptr("7200000")
	lr.Configs = append(lr.Configs, lc)
	legacy.Resources = append(legacy.Resources, lr)
	if resp := requestOn[*kmsg.AlterConfigsResponse](ctx, t, broker, legacy); resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("AlterConfigs via a broker: %v", kerr.ErrorForCode(resp.Resources[0].ErrorCode))
	}

	acls := kmsg.NewPtrCreateACLsRequest()
	creation := kmsg.NewCreateACLsRequestCreation()
	creation.ResourceType, creation.ResourceName, creation.ResourcePatternType = kmsg.ACLResourceTypeTopic, topic, kmsg.ACLResourcePatternTypeLiteral
	creation.Principal, creation.Host = "User:carol", "*"
	creation.Operation, creation.PermissionType = kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	acls.Creations = append(acls.Creations, creation)
	if resp := requestOn[*kmsg.CreateACLsResponse](ctx, t, broker, acls); resp.Results[0].ErrorCode != 0 {
		t.Fatalf("CreateAcls via a broker: %v", kerr.ErrorForCode(resp.Results[0].ErrorCode))
	}

	quotas := kmsg.NewPtrAlterClientQuotasRequest()
	entry := kmsg.NewAlterClientQuotasRequestEntry()
	entity := kmsg.NewAlterClientQuotasRequestEntryEntity()
	entity.Type, entity.Name = "client-id", strptr("forwarded")
	entry.Entity = append(entry.Entity, entity)
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Value = "producer_byte_rate", 1048576
	entry.Ops = append(entry.Ops, op)
	quotas.Entries = append(quotas.Entries, entry)
	if resp := requestOn[*kmsg.AlterClientQuotasResponse](ctx, t, broker, quotas); resp.Entries[0].ErrorCode != 0 {
		t.Fatalf("AlterClientQuotas via a broker: %v", kerr.ErrorForCode(resp.Entries[0].ErrorCode))
	}

	scram := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	upsert := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	upsert.Name, upsert.Mechanism, upsert.Iterations = "carol", 2, 4096
	upsert.Salt, upsert.SaltedPassword = []byte("0123456789abcdef"), make([]byte, 64)
	scram.Upsertions = append(scram.Upsertions, upsert)
	if resp := requestOn[*kmsg.AlterUserSCRAMCredentialsResponse](ctx, t, broker, scram); len(resp.Results) != 1 || resp.Results[0].ErrorCode != 0 {
		t.Fatalf("AlterUserScramCredentials via a broker: %+v", resp.Results)
	}

	quorum := kmsg.NewPtrDescribeQuorumRequest()
	qt := kmsg.NewDescribeQuorumRequestTopic()
	qt.Topic = "__cluster_metadata"
	qt.Partitions = append(qt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	quorum.Topics = append(quorum.Topics, qt)
	if resp := requestOn[*kmsg.DescribeQuorumResponse](ctx, t, broker, quorum); resp.ErrorCode != 0 {
		t.Fatalf("DescribeQuorum via a broker: %v", kerr.ErrorForCode(resp.ErrorCode))
	}

	features := kmsg.NewPtrUpdateFeaturesRequest()
	features.TimeoutMillis, features.ValidateOnly = 10000, true
	update := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	update.Feature, update.MaxVersionLevel, update.UpgradeType = "group.version", 1, 1
	features.FeatureUpdates = append(features.FeatureUpdates, update)
	if resp := requestOn[*kmsg.UpdateFeaturesResponse](ctx, t, broker, features); resp.ErrorCode != 0 {
		t.Fatalf("UpdateFeatures via a broker: %v %s", kerr.ErrorForCode(resp.ErrorCode), derefOr(resp.ErrorMessage))
	}

	// What the broker decides itself, it authorizes itself.
	logger := requestOn[*kmsg.IncrementalAlterConfigsResponse](ctx, t, broker,
		incrementalAlter(kmsg.ConfigResourceTypeBrokerLogger, "2", kmsg.IncrementalAlterConfigOpSet, "root", strptr("INFO")))
	if logger.Resources[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("broker logger change on a broker that refuses it: %v, want CLUSTER_AUTHORIZATION_FAILED", kerr.ErrorForCode(logger.Resources[0].ErrorCode))
	}
	described := requestOn[*kmsg.DescribeConfigsResponse](ctx, t, broker, describeResource(kmsg.ConfigResourceTypeTopic, topic))
	if described.Resources[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("DescribeConfigs on a broker that refuses it: %v, want TOPIC_AUTHORIZATION_FAILED", kerr.ErrorForCode(described.Resources[0].ErrorCode))
	}
	users := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	user := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
	user.Name = "carol"
	users.Users = append(users.Users, user)
	du := requestOn[*kmsg.DescribeUserSCRAMCredentialsResponse](ctx, t, broker, users)
	if du.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(du.Results) != 1 || du.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("DescribeUserScramCredentials on a broker that refuses it: %+v, want CLUSTER_AUTHORIZATION_FAILED", du)
	}
}
