package server

// The authorization matrix, after Kafka's AuthorizerIntegrationTest: for
// every API, a request from a principal without the ACLs Kafka requires
// answers Kafka's error, and the same request with exactly those ACLs does
// not. The principal is a parameter: on plaintext listeners it is
// User:ANONYMOUS; with SASL the same cases run with the authenticated user
// (set matrixPrincipal and the client's SASL options).

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/controller"
)

const (
	matrixTopic = "authz-topic"
	matrixGroup = "authz-group"
	matrixTxnID = "authz-txn"
)

// matrixCase is one row: the request, where its error code is, the ACLs it
// needs and the code a principal without them gets.
type matrixCase struct {
	name string
	// base are ACLs present in both runs; acls are added for the second.
	base   []authz.Binding
	acls   []authz.Binding
	denied *kerr.Error
	build  func(env *matrixEnv) kmsg.Request
	code   func(resp kmsg.Response) int16
}

// matrixEnv is a node with the fixtures the cases name.
type matrixEnv struct {
	t         *testing.T
	tn        *testNode
	principal string
	client    *kgo.Client
	topicID   [16]byte
}

func allow(principal string, rt authz.ResourceType, name string, op authz.Operation) authz.Binding {
	return authz.Binding{ResourceType: rt, ResourceName: name, PatternType: authz.PatternLiteral,
		Principal: principal, Host: "*", Operation: op, Permission: authz.PermissionAllow}
}

// newMatrixEnv starts an authorizing node with extra config and creates the
// fixtures through the controller, so the principal under test needs no
// ACL for them.
func newMatrixEnv(t *testing.T, principal string, extra ...string) *matrixEnv {
	t.Helper()
	over := append([]string{"authorizer.class.name=" + "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"offsets.topic.replication.factor=1", "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1"}, extra...)
	tn := startTestNode(t, over...)
	// Clients send AddPartitionsToTxn at v3 at most: v4+ is the brokers'
	// verification batch, which needs CLUSTER_ACTION.
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(24, 3)
	env := &matrixEnv{t: t, tn: tn, principal: principal, client: tn.client(kgo.MaxVersions(versions))}
	ctx := testContext(t)
	for _, name := range []string{matrixTopic, "authz-doomed", "authz-grow"} {
		res := tn.node.controller.CreateTopics(ctx, []controller.CreateTopic{{Name: name, NumPartitions: 1, ReplicationFactor: 1}}, false)
		if res[0].ErrorCode != 0 {
			t.Fatalf("create %s: %v", name, kerr.ErrorForCode(res[0].ErrorCode))
		}
		if name == matrixTopic {
			env.topicID = res[0].TopicID
		}
	}
	eventually(t, 10*time.Second, "the fixture topic has a leader", func() bool {
		p := tn.node.partitions.Get(matrixTopic, 0)
		return p != nil && p.LeaderID() == 1
	})
	return env
}

// setACLs replaces every ACL with acls.
func (env *matrixEnv) setACLs(acls []authz.Binding) {
	env.t.Helper()
	ctx := testContext(env.t)
	for _, res := range env.tn.node.controller.DeleteACLs(ctx, []authz.Filter{authz.MatchAll}) {
		if res.ErrorCode != 0 {
			env.t.Fatalf("delete ACLs: %v", kerr.ErrorForCode(res.ErrorCode))
		}
	}
	for _, res := range env.tn.node.controller.CreateACLs(ctx, acls) {
		if res.ErrorCode != 0 {
			env.t.Fatalf("create ACLs: %s", res.ErrorMessage)
		}
	}
}

// send sends req straight to the node, bypassing the client's routing
// (which would ask FindCoordinator or Metadata first).
func (env *matrixEnv) send(req kmsg.Request) kmsg.Response {
	env.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := env.client.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		env.t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

func TestAuthorizationMatrix(t *testing.T) {
	runAuthorizationMatrix(t, "User:ANONYMOUS")
}

func runAuthorizationMatrix(t *testing.T, principal string) {
	env := newMatrixEnv(t, principal)
	for _, c := range matrixCases(principal) {
		t.Run(c.name, func(t *testing.T) {
			env.t = t
			env.setACLs(c.base)
			if got := c.code(env.send(c.build(env))); got != c.denied.Code {
				t.Fatalf("without ACLs: got %v, want %v", kerr.ErrorForCode(got), c.denied)
			}
			env.setACLs(append(slices.Clone(c.base), c.acls...))
			got := c.code(env.send(c.build(env)))
			if got == c.denied.Code {
				t.Fatalf("with %v: still %v", c.acls, c.denied)
			}
			t.Logf("with the ACLs: %v", kerr.ErrorForCode(got))
		})
	}
}

// TestAuthorizationSuperUser runs every case as a super user with no ACL:
// nothing is denied.
func TestAuthorizationSuperUser(t *testing.T) {
	principal := "User:ANONYMOUS"
	env := newMatrixEnv(t, principal, "super.users=User:admin;"+principal)
	for _, c := range matrixCases(principal) {
		t.Run(c.name, func(t *testing.T) {
			env.t = t
			if got := c.code(env.send(c.build(env))); got == c.denied.Code {
				t.Fatalf("super user denied: %v", c.denied)
			}
		})
	}
}
