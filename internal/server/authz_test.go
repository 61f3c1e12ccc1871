package server

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

func metadataTopics(t *testing.T, env *matrixEnv, topics []string, topicOps bool) *kmsg.MetadataResponse {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	if topics != nil {
		req.Topics = []kmsg.MetadataRequestTopic{}
		for _, name := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = strp(name)
			req.Topics = append(req.Topics, rt)
		}
	}
	req.IncludeTopicAuthorizedOperations = topicOps
	req.AllowAutoTopicCreation = true
	return env.send(req).(*kmsg.MetadataResponse)
}

func listedTopics(resp *kmsg.MetadataResponse) []string {
	var names []string
	for _, mt := range resp.Topics {
		if mt.Topic != nil {
			names = append(names, *mt.Topic)
		}
	}
	slices.Sort(names)
	return names
}

// Metadata for all topics leaves out what the principal may not describe;
// named, an unauthorized topic answers TOPIC_AUTHORIZATION_FAILED whether or
// not it exists, never UNKNOWN_TOPIC_OR_PARTITION.
func TestAuthorizationMetadataHides(t *testing.T) {
	p := "User:ANONYMOUS"
	env := newMatrixEnv(t, p)
	if got := listedTopics(metadataTopics(t, env, nil, false)); len(got) != 0 {
		t.Fatalf("all-topics metadata without ACLs lists %v", got)
	}
	env.setACLs([]authz.Binding{allow(p, authz.ResourceTopic, matrixTopic, authz.OpRead)})
	if got := listedTopics(metadataTopics(t, env, nil, false)); !slices.Equal(got, []string{matrixTopic}) {
		t.Fatalf("all-topics metadata with READ on %s lists %v", matrixTopic, got)
	}
	resp := metadataTopics(t, env, []string{"authz-doomed", "no-such-topic"}, false)
	for _, mt := range resp.Topics {
		if mt.ErrorCode != kerr.TopicAuthorizationFailed.Code || len(mt.Partitions) != 0 {
			t.Fatalf("%s: got %v with %d partitions", *mt.Topic, kerr.ErrorForCode(mt.ErrorCode), len(mt.Partitions))
		}
	}
	// Auto-creation needs CREATE: with DESCRIBE only, still denied.
	env.setACLs([]authz.Binding{allow(p, authz.ResourceTopic, "auto-made", authz.OpDescribe)})
	if code := metadataTopics(t, env, []string{"auto-made"}, false).Topics[0].ErrorCode; code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("auto-create without CREATE: %v", kerr.ErrorForCode(code))
	}
	env.setACLs([]authz.Binding{allow(p, authz.ResourceTopic, "auto-made", authz.OpDescribe), allow(p, authz.ResourceTopic, "auto-made", authz.OpCreate)})
	if code := metadataTopics(t, env, []string{"auto-made"}, false).Topics[0].ErrorCode; code == kerr.TopicAuthorizationFailed.Code {
		t.Fatal("auto-create with CREATE still denied")
	}
	// KIP-430: the topic's authorized operations when asked.
	env.setACLs([]authz.Binding{allow(p, authz.ResourceTopic, matrixTopic, authz.OpWrite)})
	mt := metadataTopics(t, env, []string{matrixTopic}, true).Topics[0]
	want := int32(1<<authz.OpWrite | 1<<authz.OpDescribe)
	if mt.ErrorCode != 0 || mt.AuthorizedOperations != want {
		t.Fatalf("authorized operations: %v, %b, want %b", kerr.ErrorForCode(mt.ErrorCode), mt.AuthorizedOperations, want)
	}
}

// DENY beats ALLOW; prefixed ACLs apply to every topic they start; User:*
// matches the principal.
func TestAuthorizationDenyPrefixWildcard(t *testing.T) {
	p := "User:ANONYMOUS"
	env := newMatrixEnv(t, p)
	cases := matrixCases(p)
	i := slices.IndexFunc(cases, func(c matrixCase) bool { return c.name == "Produce" })
	if i < 0 {
		t.Fatal("no Produce case in the matrix")
	}
	produce := cases[i]
	code := func() int16 { return produce.code(env.send(produce.build(env))) }
	prefixed := authz.Binding{ResourceType: authz.ResourceTopic, ResourceName: "authz-", PatternType: authz.PatternPrefixed,
		Principal: p, Host: "*", Operation: authz.OpWrite, Permission: authz.PermissionAllow}
	env.setACLs([]authz.Binding{prefixed})
	if got := code(); got != 0 {
		t.Fatalf("prefixed ALLOW: %v", kerr.ErrorForCode(got))
	}
	deny := allow(p, authz.ResourceTopic, matrixTopic, authz.OpWrite)
	deny.Permission = authz.PermissionDeny
	env.setACLs([]authz.Binding{prefixed, deny})
	if got := code(); got != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("DENY beside ALLOW: %v", kerr.ErrorForCode(got))
	}
	env.setACLs([]authz.Binding{allow("User:*", authz.ResourceTopic, matrixTopic, authz.OpAll)})
	if got := code(); got != 0 {
		t.Fatalf("User:* ALL: %v", kerr.ErrorForCode(got))
	}
	otherHost := allow(p, authz.ResourceTopic, matrixTopic, authz.OpWrite)
	otherHost.Host = "10.9.9.9"
	env.setACLs([]authz.Binding{otherHost})
	if got := code(); got != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("ALLOW for another host: %v", kerr.ErrorForCode(got))
	}
	// Denials are counted.
	if n := scrape(t, env.tn)[`samsa_authorizer_denials_total{operation="WRITE",resource_type="TOPIC"}`]; n < 2 {
		t.Fatalf("denials counted: %v", n)
	}
}

// ListGroups lists every group with DESCRIBE on the cluster, otherwise only
// the groups the principal may describe.
func TestAuthorizationListGroupsFilters(t *testing.T) {
	p := "User:ANONYMOUS"
	env := newMatrixEnv(t, p)
	ctx := testContext(t)
	env.setACLs([]authz.Binding{allow(p, authz.ResourceGroup, "*", authz.OpRead), allow(p, authz.ResourceTopic, matrixTopic, authz.OpRead)})
	adm := kadm.NewClient(env.client)
	for _, g := range []string{"seen-group", "hidden-group"} {
		if _, err := adm.CommitOffsets(ctx, g, kadm.Offsets{matrixTopic: {0: {At: 0, LeaderEpoch: -1}}}); err != nil {
			t.Fatalf("commit for %s: %v", g, err)
		}
	}
	list := func() []string {
		groups, err := adm.ListGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		names := groups.Groups()
		slices.Sort(names)
		return names
	}
	env.setACLs([]authz.Binding{allow(p, authz.ResourceGroup, "seen-group", authz.OpDescribe)})
	if got := list(); !slices.Equal(got, []string{"seen-group"}) {
		t.Fatalf("ListGroups with DESCRIBE on one group: %v", got)
	}
	env.setACLs([]authz.Binding{allow(p, authz.ResourceCluster, authz.ClusterName, authz.OpDescribe)})
	if got := list(); !slices.Equal(got, []string{"hidden-group", "seen-group"}) {
		t.Fatalf("ListGroups with DESCRIBE on the cluster: %v", got)
	}
}

// The ACL APIs through kadm as a super user: create, describe with filters,
// delete; malformed bindings answer INVALID_REQUEST and the node keeps
// serving.
func TestACLAdminAPIs(t *testing.T) {
	env := newMatrixEnv(t, "User:ANONYMOUS", "super.users=User:ANONYMOUS")
	ctx := testContext(t)
	adm := kadm.NewClient(env.client)
	builder := kadm.NewACLs().Allow("User:alice").Topics("orders").Groups("billing").
		Operations(kadm.OpRead, kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral)
	created, err := adm.CreateACLs(ctx, builder)
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 4 {
		t.Fatalf("created %d results, want 4", len(created))
	}
	for _, c := range created {
		if c.Err != nil {
			t.Fatalf("create %s %s: %v", c.Name, c.Operation, c.Err)
		}
	}
	prefixed := kadm.NewACLs().Deny("User:bob").Topics("secret-").Operations(kadm.OpAll).ResourcePatternType(kadm.ACLPatternPrefixed)
	if _, err := adm.CreateACLs(ctx, prefixed); err != nil {
		t.Fatal(err)
	}
	described, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().Allow().AllowHosts().Deny().DenyHosts().
		Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, d := range described {
		if d.Err != nil {
			t.Fatalf("describe: %v", d.Err)
		}
		total += len(d.Described)
	}
	if total != 5 {
		t.Fatalf("described %d ACLs, want 5: %+v", total, described)
	}
	// MATCH finds the prefixed ACL that applies to a topic name.
	matched, err := adm.DescribeACLs(ctx, kadm.NewACLs().Topics("secret-plans").Deny().DenyHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternMatch))
	if err != nil || len(matched) != 1 || len(matched[0].Described) != 1 || matched[0].Described[0].Name != "secret-" {
		t.Fatalf("MATCH: %v %+v", err, matched)
	}
	deleted, err := adm.DeleteACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts().AnyResource().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(deleted[0].Deleted); n != 4 {
		t.Fatalf("deleted %d, want 4: %+v", n, deleted)
	}
	if n := env.tn.node.controller.Image().ACLs().Len(); n != 1 {
		t.Fatalf("%d ACLs left, want 1", n)
	}

	// Malformed bindings, raw: each answers INVALID_REQUEST.
	bad := []kmsg.CreateACLsRequestCreation{
		creation(kmsg.ACLResourceType(99), "x", kmsg.ACLResourcePatternTypeLiteral, "User:a", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow),
		creation(kmsg.ACLResourceTypeAny, "x", kmsg.ACLResourcePatternTypeLiteral, "User:a", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow),
		creation(kmsg.ACLResourceTypeTopic, "x", kmsg.ACLResourcePatternTypeMatch, "User:a", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow),
		creation(kmsg.ACLResourceTypeTopic, "x", kmsg.ACLResourcePatternTypeLiteral, "", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow),
		creation(kmsg.ACLResourceTypeTopic, "x", kmsg.ACLResourcePatternTypeLiteral, "alice", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow),
		creation(kmsg.ACLResourceTypeTopic, "", kmsg.ACLResourcePatternTypeLiteral, "User:a", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow),
		creation(kmsg.ACLResourceTypeTopic, "x", kmsg.ACLResourcePatternTypeLiteral, "User:a", kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAllow),
		creation(kmsg.ACLResourceTypeTopic, "x", kmsg.ACLResourcePatternTypeLiteral, "User:a", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAny),
		creation(kmsg.ACLResourceTypeCluster, "not-the-cluster", kmsg.ACLResourcePatternTypeLiteral, "User:a", kmsg.ACLOperationAlter, kmsg.ACLPermissionTypeAllow),
	}
	req := kmsg.NewPtrCreateACLsRequest()
	req.Creations = bad
	resp := env.send(req).(*kmsg.CreateACLsResponse)
	for i, res := range resp.Results {
		if res.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("bad binding %d: %v", i, kerr.ErrorForCode(res.ErrorCode))
		}
	}
	dreq := kmsg.NewPtrDescribeACLsRequest()
	dreq.ResourceType = kmsg.ACLResourceType(42)
	dreq.Operation, dreq.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	// Kafka 4.4 answers a code it does not define with no ACLs, not an error.
	if described := env.send(dreq).(*kmsg.DescribeACLsResponse); described.ErrorCode != 0 || len(described.Resources) != 0 {
		t.Errorf("describe with an unknown resource type: %v, %d resources", kerr.ErrorForCode(described.ErrorCode), len(described.Resources))
	}
	if n := env.tn.node.controller.Image().ACLs().Len(); n != 1 {
		t.Fatalf("malformed bindings changed the ACLs: %d", n)
	}
	// Still serving.
	if _, err := adm.ListTopics(ctx); err != nil {
		t.Fatalf("node after bad bindings: %v", err)
	}
}

func creation(rt kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, principal string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pattern
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", op, perm
	return c
}

// Without an authorizer the ACL APIs answer SECURITY_DISABLED.
func TestACLAPIsSecurityDisabled(t *testing.T) {
	tn := startTestNode(t)
	ctx := testContext(t)
	adm := tn.admin()
	created, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:a").Topics("t").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil || len(created) != 1 || created[0].Err != kerr.SecurityDisabled {
		t.Fatalf("create: %v %+v", err, created)
	}
	described, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().Allow().AllowHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil || len(described) == 0 || described[0].Err != kerr.SecurityDisabled {
		t.Fatalf("describe: %v %+v", err, described)
	}
	// Produce still works unauthenticated and unauthorized.
	cl := tn.client(kgo.AllowAutoTopicCreation())
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "open", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
