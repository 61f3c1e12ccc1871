package server

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/config"
)

const avroPayment = `{"type":"record","name":"Payment","namespace":"example","fields":[{"name":"amount","type":"long"}]}`

// secureRegistryNode is a node whose only client listener is SASL_SSL,
// also the inter-broker listener (PLAIN as User:admin, a super user), with
// the authorizer on and the schema registry served: the registry's own
// client must use TLS and the inter-broker credentials to reach _schemas.
type secureRegistryNode struct {
	tn    *testNode
	files *tlsFiles
}

func startSecureRegistryNode(t *testing.T) *secureRegistryNode {
	t.Helper()
	files := newTLSFiles(t)
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="` + saslAdminPassword +
		`" user_admin="` + saslAdminPassword + `" user_alice="` + saslAlicePassword + `" user_bob="` + saslBobPassword + `";`
	tn := startTestNode(t, append(files.brokerOverrides("none"),
		"listeners=SASL_SSL://127.0.0.1:0",
		"inter.broker.listener.name=SASL_SSL",
		"sasl.enabled.mechanisms=PLAIN",
		"sasl.mechanism.inter.broker.protocol=PLAIN",
		"listener.name.sasl_ssl.plain.sasl.jaas.config="+jaas,
		"authorizer.class.name="+config.StandardAuthorizerClass,
		"super.users=User:admin",
		"schema.registry.listeners=http://127.0.0.1:0")...)
	return &secureRegistryNode{tn: tn, files: files}
}

func (s *secureRegistryNode) url() string { return "http://" + s.tn.node.RegistryAddrs()[0].String() }

// kafka is a client of the SASL_SSL listener as user.
func (s *secureRegistryNode) kafka(t *testing.T, user, password string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.tn.node.Addrs()[0].String()), kgo.DialTLSConfig(s.files.clientConfig(false)),
		kgo.SASL(plain.Auth{User: user, Pass: password}.AsMechanism()), kgo.RetryTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func (s *secureRegistryNode) registry(t *testing.T, user, password string) *sr.Client {
	t.Helper()
	client, err := sr.NewClient(sr.URLs(s.url()), sr.BasicAuth(user, password))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// createACLs creates bindings as the super user and waits until the
// node's authorizer holds them.
func (s *secureRegistryNode) createACLs(t *testing.T, bindings ...authz.Binding) {
	t.Helper()
	createBindings(t, s.kafka(t, "admin", saslAdminPassword), s.tn.node, bindings...)
}

// createBindings creates bindings with CreateAcls through franz-go's kmsg,
// which takes any resource type (kadm names only Kafka's), and waits until
// node's authorizer holds them.
func createBindings(t *testing.T, admin *kgo.Client, node *Node, bindings ...authz.Binding) {
	t.Helper()
	authorizer := node.broker.Authorization.Authorizer
	want := authorizer.Index().Len() + len(bindings)
	req := kmsg.NewPtrCreateACLsRequest()
	for _, b := range bindings {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName = kmsg.ACLResourceType(b.ResourceType), b.ResourceName
		c.ResourcePatternType = kmsg.ACLResourcePatternType(b.PatternType)
		c.Principal, c.Host = b.Principal, b.Host
		c.Operation, c.PermissionType = kmsg.ACLOperation(b.Operation), kmsg.ACLPermissionType(b.Permission)
		req.Creations = append(req.Creations, c)
	}
	resp, err := req.RequestWith(testContext(t), admin)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range resp.Results {
		if res.ErrorCode != 0 {
			t.Fatalf("create %v: error %d %v", bindings[i], res.ErrorCode, res.ErrorMessage)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for authorizer.Index().Len() < want {
		if time.Now().After(deadline) {
			t.Fatal("the ACLs never reached the node's authorizer")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func subjectACL(principal, name string, pattern authz.PatternType, operation authz.Operation, permission authz.Permission) authz.Binding {
	return authz.Binding{ResourceType: authz.ResourceSubject, ResourceName: name, PatternType: pattern,
		Principal: principal, Host: authz.Wildcard, Operation: operation, Permission: permission}
}

func wantForbidden(t *testing.T, what string, err error) {
	t.Helper()
	var responseError *sr.ResponseError
	if !errors.As(err, &responseError) || responseError.StatusCode != http.StatusForbidden || responseError.ErrorCode != 40301 {
		t.Fatalf("%s: got %v, want HTTP 403 with error code 40301", what, err)
	}
}

// TestRegistryACLsFranzGo drives franz-go's sr client with basic auth
// against a node with only a SASL_SSL listener and the authorizer on: the
// registry's own client reaches _schemas over TLS as the inter-broker
// principal, and each route is decided by the ACLs on SUBJECT and
// REGISTRY resources created with CreateAcls: allowed calls succeed,
// denied ones get HTTP 403 with error_code 40301, and subjects alice may
// not describe are left out of GET /subjects and by-id listings.
func TestRegistryACLsFranzGo(t *testing.T) {
	node := startSecureRegistryNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The super user registers through the registry, whose own client
	// writes _schemas over SASL_SSL: item by item, the path this test is
	// about.
	admin := node.registry(t, "admin", saslAdminPassword)
	payments, err := admin.CreateSchema(ctx, "payments-value", sr.Schema{Schema: avroPayment})
	if err != nil {
		t.Fatalf("admin registers payments-value: %v", err)
	}

	alice := node.registry(t, "alice", saslAlicePassword)
	// No ACL at all: everything is denied (allow.everyone.if.no.acl.found
	// is false), listings are empty.
	_, err = alice.CreateSchema(ctx, "orders-value", sr.Schema{Schema: avroUserV1})
	wantForbidden(t, "register without ACLs", err)
	if subjects, err := alice.Subjects(ctx); err != nil || len(subjects) != 0 {
		t.Fatalf("subjects without ACLs: %v %v", subjects, err)
	}

	alicePrincipal := "User:alice"
	node.createACLs(t,
		subjectACL(alicePrincipal, "orders-", authz.PatternPrefixed, authz.OpWrite, authz.PermissionAllow),
		subjectACL(alicePrincipal, "orders-", authz.PatternPrefixed, authz.OpRead, authz.PermissionAllow),
		subjectACL(alicePrincipal, "orders-secret", authz.PatternLiteral, authz.OpAll, authz.PermissionDeny),
		authz.Binding{ResourceType: authz.ResourceRegistry, ResourceName: authz.RegistryName, PatternType: authz.PatternLiteral,
			Principal: alicePrincipal, Host: authz.Wildcard, Operation: authz.OpDescribeConfigs, Permission: authz.PermissionAllow},
	)

	// DescribeAcls with resource type ANY leaves the registry's ACLs out
	// (Kafka's Java client refuses an answer with a type it does not
	// know); naming SUBJECT (101) lists them.
	describe := func(resourceType kmsg.ACLResourceType) int {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType, req.ResourcePatternType = resourceType, kmsg.ACLResourcePatternTypeAny
		req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		resp, err := req.RequestWith(ctx, node.kafka(t, "admin", saslAdminPassword))
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("describe ACLs of type %d: %v %v", resourceType, err, resp)
		}
		n := 0
		for _, res := range resp.Resources {
			n += len(res.ACLs)
		}
		return n
	}
	onAny := describe(kmsg.ACLResourceTypeAny)
	onSubjects := describe(kmsg.ACLResourceType(authz.ResourceSubject))
	onRegistry := describe(kmsg.ACLResourceType(authz.ResourceRegistry))
	if onAny != 0 || onSubjects != 3 || onRegistry != 1 {
		t.Fatalf("DescribeAcls: %d with ANY, %d SUBJECT, %d REGISTRY; want 0, 3, 1", onAny, onSubjects, onRegistry)
	}

	// WRITE: registration.
	orders, err := alice.CreateSchema(ctx, "orders-value", sr.Schema{Schema: avroUserV1})
	if err != nil {
		t.Fatalf("alice registers orders-value: %v", err)
	}
	_, err = alice.CreateSchema(ctx, "payments-value", sr.Schema{Schema: avroPayment})
	wantForbidden(t, "register payments-value", err)
	_, err = alice.CreateSchema(ctx, "orders-secret", sr.Schema{Schema: avroUserV1})
	wantForbidden(t, "register orders-secret (DENY ALL)", err)

	// DESCRIBE: listings leave out what alice may not describe.
	if subjects, err := alice.Subjects(ctx); err != nil || !slices.Equal(subjects, []string{"orders-value"}) {
		t.Fatalf("alice's subjects: %v %v", subjects, err)
	}
	if subjects, err := admin.Subjects(ctx); err != nil || !slices.Equal(subjects, []string{"orders-value", "payments-value"}) {
		t.Fatalf("admin's subjects: %v %v", subjects, err)
	}
	if versions, err := alice.SubjectVersions(ctx, "orders-value"); err != nil || !slices.Equal(versions, []int{1}) {
		t.Fatalf("alice's versions of orders-value: %v %v", versions, err)
	}
	_, err = alice.SubjectVersions(ctx, "payments-value")
	wantForbidden(t, "versions of payments-value", err)

	// READ: by version, by id (through a subject that has it), lookup,
	// compatibility checks, and GET /schemas.
	if got, err := alice.SchemaByVersion(ctx, "orders-value", -1); err != nil || got.ID != orders.ID {
		t.Fatalf("alice reads orders-value: %+v %v", got, err)
	}
	_, err = alice.SchemaByVersion(ctx, "payments-value", -1)
	wantForbidden(t, "read payments-value", err)
	if got, err := alice.SchemaByID(ctx, orders.ID); err != nil || !strings.Contains(got.Schema, "User") {
		t.Fatalf("alice reads id %d: %+v %v", orders.ID, got, err)
	}
	_, err = alice.SchemaByID(ctx, payments.ID)
	wantForbidden(t, "read payments' id", err)
	_, err = alice.SubjectsByID(ctx, payments.ID)
	wantForbidden(t, "subjects of payments' id", err)
	if _, err := alice.LookupSchema(ctx, "orders-value", sr.Schema{Schema: avroUserV1}); err != nil {
		t.Fatalf("alice looks up orders-value: %v", err)
	}
	_, err = alice.LookupSchema(ctx, "payments-value", sr.Schema{Schema: avroPayment})
	wantForbidden(t, "look up payments-value", err)
	if result, err := alice.CheckCompatibility(ctx, "orders-value", -1, sr.Schema{Schema: avroUserV2}); err != nil || !result.Is {
		t.Fatalf("alice checks orders-value: %+v %v", result, err)
	}
	all, err := alice.AllSchemas(ctx)
	if err != nil || len(all) != 1 || all[0].Subject != "orders-value" {
		t.Fatalf("alice's GET /schemas: %+v %v", all, err)
	}

	// The same schema under a second subject: alice reads the id, and the
	// by-id listings name only the subject she may describe.
	if _, err := admin.CreateSchema(ctx, "audit-value", sr.Schema{Schema: avroUserV1}); err != nil {
		t.Fatal(err)
	}
	if subjects, err := alice.SubjectsByID(ctx, orders.ID); err != nil || !slices.Equal(subjects, []string{"orders-value"}) {
		t.Fatalf("alice's subjects of id %d: %v %v", orders.ID, subjects, err)
	}
	if subjects, err := admin.SubjectsByID(ctx, orders.ID); err != nil || !slices.Equal(subjects, []string{"audit-value", "orders-value"}) {
		t.Fatalf("admin's subjects of id %d: %v %v", orders.ID, subjects, err)
	}

	// Config and mode: DESCRIBE_CONFIGS on the registry reads the global
	// level; changing it, or a subject's, needs ALTER_CONFIGS.
	if results := alice.Compatibility(ctx); len(results) != 1 || results[0].Err != nil || results[0].Level != sr.CompatBackward {
		t.Fatalf("alice reads the global level: %+v", results)
	}
	results := alice.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatNone})
	wantForbidden(t, "set the global level", results[0].Err)
	results = alice.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatNone}, "orders-value")
	wantForbidden(t, "set orders-value's level", results[0].Err)
	modes := alice.SetMode(ctx, sr.ModeReadOnly)
	wantForbidden(t, "set the global mode", modes[0].Err)
	if results := admin.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatFull}, "orders-value"); results[0].Err != nil {
		t.Fatalf("admin sets orders-value's level: %v", results[0].Err)
	}

	// DELETE needs DELETE: alice holds none.
	_, err = alice.DeleteSubject(ctx, "orders-value", sr.SoftDelete)
	wantForbidden(t, "delete orders-value", err)
	node.createACLs(t, subjectACL(alicePrincipal, "orders-value", authz.PatternLiteral, authz.OpDelete, authz.PermissionAllow))
	if versions, err := alice.DeleteSubject(ctx, "orders-value", sr.SoftDelete); err != nil || !slices.Equal(versions, []int{1}) {
		t.Fatalf("alice deletes orders-value: %v %v", versions, err)
	}

	// The raw answer: HTTP 403 with Confluent's error JSON.
	request, _ := http.NewRequestWithContext(ctx, http.MethodPost, node.url()+"/subjects/payments-value/versions",
		strings.NewReader(`{"schema":"\"string\""}`))
	request.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	request.SetBasicAuth("alice", saslAlicePassword)
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimSpace(readBody(t, response))
	if response.StatusCode != http.StatusForbidden || body != `{"error_code":40301,"message":"User is denied operation Write on Subject: payments-value"}` {
		t.Fatalf("raw denial: %d %s", response.StatusCode, body)
	}
	// bob, with no ACL, sees nothing and the node keeps serving.
	bob := node.registry(t, "bob", saslBobPassword)
	if subjects, err := bob.Subjects(ctx); err != nil || len(subjects) != 0 {
		t.Fatalf("bob's subjects: %v %v", subjects, err)
	}
	if subjects, err := admin.Subjects(ctx); err != nil || !slices.Equal(subjects, []string{"audit-value", "payments-value"}) {
		t.Fatalf("admin's subjects at the end: %v %v", subjects, err)
	}
}

// TestRegistryACLsConfluentPython runs confluent-kafka-python's
// SchemaRegistryClient (the newest from PyPI, REGISTRY_PYTHON, as
// TestRegistryBasicAuthConfluentPython) as alice against the same kind of
// node: a registration under a subject she may write succeeds, one under
// another subject raises SchemaRegistryError 403/40301, and get_subjects
// lists only what she may describe.
func TestRegistryACLsConfluentPython(t *testing.T) {
	python := os.Getenv("REGISTRY_PYTHON")
	if python == "" {
		t.Skip("REGISTRY_PYTHON is not set (an interpreter with pip install 'confluent-kafka[avro,json,protobuf]')")
	}
	if out, err := exec.Command(python, "-c", "import confluent_kafka.schema_registry").CombinedOutput(); err != nil {
		t.Skipf("%s lacks confluent_kafka.schema_registry: %s", python, out)
	}
	node := startSecureRegistryNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := node.registry(t, "admin", saslAdminPassword).CreateSchema(ctx, "payments-value", sr.Schema{Schema: avroPayment}); err != nil {
		t.Fatal(err)
	}
	node.createACLs(t, subjectACL("User:alice", "orders-value", authz.PatternLiteral, authz.OpWrite, authz.PermissionAllow))
	out, err := exec.CommandContext(ctx, python, "-c", aclScript, node.url(), "alice:"+saslAlicePassword, avroUserV1).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok acls") {
		t.Fatalf("confluent-kafka-python: %v\n%s", err, out)
	}
}

// aclScript registers under orders-value (allowed) and payments-value
// (denied: 403/40301) and lists the subjects (orders-value only).
const aclScript = `
import sys
from confluent_kafka.schema_registry import SchemaRegistryClient, Schema
from confluent_kafka.schema_registry.error import SchemaRegistryError
client = SchemaRegistryClient({"url": sys.argv[1], "basic.auth.user.info": sys.argv[2]})
schema = Schema(sys.argv[3], "AVRO")
schema_id = client.register_schema("orders-value", schema)
assert schema_id > 0, schema_id
try:
    client.register_schema("payments-value", schema)
    sys.exit("registered under payments-value")
except SchemaRegistryError as e:
    assert e.http_status_code == 403 and e.error_code == 40301, (e.http_status_code, e.error_code, e.error_message)
subjects = client.get_subjects()
assert subjects == ["orders-value"], subjects
print("ok acls")
`
