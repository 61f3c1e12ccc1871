package clustertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// envelopeCluster starts a dedicated controller and a broker, every
// listener SASL_PLAINTEXT (SCRAM-SHA-512 for clients, PLAIN on the
// controller listener) and the authorizer on. The
// broker reaches the controller as User:broker, which is no super user:
// once setUp has run it may do CLUSTER_ACTION and nothing else, so an
// admin request it forwards succeeds only if the controller authorizes it
// as the client. Users admin (super), alice and bob share one password with
// broker.
func envelopeCluster(t *testing.T) (c *Cluster, as func(user string) kgo.Opt) {
	t.Helper()
	as = func(user string) kgo.Opt {
		return kgo.SASL(scram.Auth{User: user, Pass: saslClusterPassword}.AsSha512Mechanism())
	}
	// The controller listener takes PLAIN users from its JAAS config, so
	// the broker's own credential does not depend on the SCRAM users.
	plainUsers := ""
	for _, user := range []string{"broker", "alice"} {
		plainUsers += " user_" + user + `="` + saslClusterPassword + `"`
	}
	controllerJAAS := `org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="` +
		saslClusterPassword + `"` + plainUsers + ";"
	var users []string
	for _, user := range []string{"admin", "alice", "bob"} {
		users = append(users, "SCRAM-SHA-512=[name="+user+",password="+saslClusterPassword+"]")
	}
	c = &Cluster{ClientOpts: []kgo.Opt{as("admin")}}
	t.TempDir()
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range append(c.Controllers, c.Nodes...) {
				t.Logf("node %s log:\n%s", n.Addr(), n.Log())
			}
		}
	})
	c = startDedicatedCluster(t, c, 1, 1,
		"listener.security.protocol.map=PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
		"inter.broker.listener.name=PLAINTEXT",
		"sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN",
		"samsa.sasl.plain.allow.plaintext=true",
		"sasl.mechanism.controller.protocol=PLAIN",
		"sasl.mechanism.inter.broker.protocol=PLAIN",
		"listener.name.plaintext.plain.sasl.jaas.config="+controllerJAAS,
		"listener.name.controller.plain.sasl.jaas.config="+controllerJAAS,
		"samsa.scram.bootstrap.users="+strings.Join(users, ","),
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin",
		// Open until the ACLs below exist, so the broker can register.
		"allow.everyone.if.no.acl.found=true",
	)
	return c, as
}

// TestForwardedRequestsAuthorizedAsTheClient: a broker-only node forwards
// CreateTopics, IncrementalAlterConfigs, CreateAcls and a Metadata
// request's auto-creation to the controller in an Envelope (KIP-590), and
// the controller decides them as the client's
// principal: alice, who holds the ACLs, succeeds although the forwarding
// broker's own principal holds none of them; bob is refused with Kafka's
// errors. An Envelope from a principal without CLUSTER_ACTION is refused,
// and one the broker's principal sends with bob inside is decided as bob.
func TestForwardedRequestsAuthorizedAsTheClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c, as := envelopeCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	broker := c.Nodes[0].Addr()
	admin := kadm.NewClient(newClient(t, []string{broker}, as("admin")))
	acl := func(principal string, op kadm.ACLOperation) *kadm.ACLBuilder {
		return kadm.NewACLs().Allow(principal).Operations(op).ResourcePatternType(kadm.ACLPatternLiteral)
	}
	for _, b := range []*kadm.ACLBuilder{
		acl("User:broker", kadm.OpClusterAction).Clusters(),
		acl("User:alice", kadm.OpCreate).Clusters(),
		acl("User:alice", kadm.OpAlter).Clusters(),
		// A topic ACL for every topic, so none stays open to bob.
		acl("User:alice", kadm.OpAlterConfigs).Topics("*"),
		acl("User:alice", kadm.OpWrite).Topics("*"),
	} {
		results, err := admin.CreateACLs(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if r.Err != nil {
				t.Fatalf("create ACL: %v", r.Err)
			}
		}
	}
	alice := kadm.NewClient(newClient(t, []string{broker}, as("alice"), kgo.RequestRetries(3)))
	bob := kadm.NewClient(newClient(t, []string{broker}, as("bob"), kgo.RequestRetries(3)))

	// The broker is the only one clients see, so it is the controller they
	// send admin requests to, and it forwards them.
	WaitFor(t, 30*time.Second, func() error {
		created, err := alice.CreateTopic(ctx, 1, 1, nil, "alice-topic")
		if err == nil && created.Err != nil && !errors.Is(created.Err, kerr.TopicAlreadyExists) {
			return created.Err
		}
		return err
	})
	created, err := bob.CreateTopic(ctx, 1, 1, nil, "bob-topic")
	if !errors.Is(created.Err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob's CreateTopics: %v / %v, want TOPIC_AUTHORIZATION_FAILED", err, created.Err)
	}

	retention := "3600000"
	alter := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: &retention}}
	altered, err := alice.AlterTopicConfigs(ctx, alter, "alice-topic")
	if err != nil || len(altered) != 1 || altered[0].Err != nil {
		t.Fatalf("alice's IncrementalAlterConfigs: %v / %+v", err, altered)
	}
	altered, err = bob.AlterTopicConfigs(ctx, alter, "alice-topic")
	if err != nil || len(altered) != 1 || !errors.Is(altered[0].Err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob's IncrementalAlterConfigs: %v / %+v, want TOPIC_AUTHORIZATION_FAILED", err, altered)
	}

	results, err := alice.CreateACLs(ctx, acl("User:carol", kadm.OpRead).Topics("alice-topic"))
	if err != nil || len(results) != 1 || results[0].Err != nil {
		t.Fatalf("alice's CreateAcls: %v / %+v", err, results)
	}
	results, err = bob.CreateACLs(ctx, acl("User:bob", kadm.OpRead).Topics("alice-topic"))
	if err != nil || len(results) != 1 || !errors.Is(results[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("bob's CreateAcls: %v / %+v, want CLUSTER_AUTHORIZATION_FAILED", err, results)
	}

	// A Metadata request's auto-creation is forwarded as the client too:
	// alice may create topics, the broker's principal may not.
	producer := newClient(t, []string{broker}, as("alice"), kgo.AllowAutoTopicCreation(), kgo.RecordRetries(20))
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "alice-auto", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("alice's produce to an auto-created topic: %v", err)
	}

	// Envelopes sent straight to the controller listener.
	envelope := func(sender, inside string, topic string) (*kmsg.EnvelopeResponse, error) {
		auth := plain.Auth{User: sender, Pass: saslClusterPassword}.AsMechanism()
		cl := newClient(t, []string{c.Controllers[0].Addr()}, kgo.SASL(auth), kgo.RequestRetries(0))
		inner := kmsg.NewPtrCreateTopicsRequest()
		inner.Version, inner.TimeoutMillis = 7, 10000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
		inner.Topics = append(inner.Topics, rt)
		data := []byte{0, 19, 0, 7, 0, 0, 0, 42, 0xff, 0xff, 0} // key, version, correlation id, null client id, no tags
		req := kmsg.NewPtrEnvelopeRequest()
		req.RequestData = inner.AppendTo(data)
		principal := kmsg.NewDefaultPrincipalData()
		principal.Type, principal.Name = "User", inside
		req.RequestPrincipal = principal.AppendTo(nil)
		req.ClientHostAddress = net.IPv4(127, 0, 0, 1).To4()
		return req.RequestWith(ctx, cl.SeedBrokers()[0])
	}
	innerCode := func(resp *kmsg.EnvelopeResponse) (int16, error) {
		if len(resp.ResponseData) < 5 || resp.ResponseData[3] != 42 {
			return 0, fmt.Errorf("inner response header % x", resp.ResponseData)
		}
		inner := kmsg.NewPtrCreateTopicsResponse()
		inner.Version = 7
		if err := inner.ReadFrom(resp.ResponseData[5:]); err != nil {
			return 0, err
		}
		return inner.Topics[0].ErrorCode, nil
	}
	resp, err := envelope("alice", "alice", "direct-alice")
	if err != nil || resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice's own Envelope: %v / %+v, want CLUSTER_AUTHORIZATION_FAILED", err, resp)
	}
	resp, err = envelope("broker", "bob", "direct-bob")
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("the broker's Envelope for bob: %v / %+v", err, resp)
	}
	if code, err := innerCode(resp); err != nil || code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("bob's enveloped CreateTopics: code %d, %v; want TOPIC_AUTHORIZATION_FAILED", code, err)
	}
	resp, err = envelope("broker", "alice", "direct-alice")
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("the broker's Envelope for alice: %v / %+v", err, resp)
	}
	if code, err := innerCode(resp); err != nil || code != 0 {
		t.Fatalf("alice's enveloped CreateTopics: code %d, %v", code, err)
	}
	// Bad envelopes get Kafka's errors and the controller carries on.
	raw := func(mutate func(*kmsg.EnvelopeRequest)) int16 {
		t.Helper()
		auth := plain.Auth{User: "broker", Pass: saslClusterPassword}.AsMechanism()
		cl := newClient(t, []string{c.Controllers[0].Addr()}, kgo.SASL(auth), kgo.RequestRetries(0))
		req := kmsg.NewPtrEnvelopeRequest()
		inner := kmsg.NewPtrCreateTopicsRequest()
		inner.Version = 7
		req.RequestData = inner.AppendTo([]byte{0, 19, 0, 7, 0, 0, 0, 1, 0xff, 0xff, 0})
		principal := kmsg.NewDefaultPrincipalData()
		principal.Type, principal.Name = "User", "alice"
		req.RequestPrincipal = principal.AppendTo(nil)
		req.ClientHostAddress = net.IPv4(127, 0, 0, 1).To4()
		mutate(req)
		resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
		if err != nil {
			t.Fatalf("bad envelope: %v", err)
		}
		return resp.ErrorCode
	}
	for name, tc := range map[string]struct {
		mutate func(*kmsg.EnvelopeRequest)
		want   *kerr.Error
	}{
		"garbage principal": {func(r *kmsg.EnvelopeRequest) { r.RequestPrincipal = []byte{9, 9, 9} }, kerr.PrincipalDeserializationFailure},
		"3-byte address":    {func(r *kmsg.EnvelopeRequest) { r.ClientHostAddress = []byte{1, 2, 3} }, kerr.InvalidRequest},
		"garbage request":   {func(r *kmsg.EnvelopeRequest) { r.RequestData = []byte{0, 19, 0, 7, 0, 0, 0, 1, 0xff, 0xff, 0, 200} }, kerr.InvalidRequest},
		"not forwardable":   {func(r *kmsg.EnvelopeRequest) { r.RequestData = []byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0, 1, 1, 0} }, kerr.InvalidRequest},
		"truncated header":  {func(r *kmsg.EnvelopeRequest) { r.RequestData = []byte{0, 19} }, kerr.InvalidRequest},
	} {
		if got := raw(tc.mutate); got != tc.want.Code {
			t.Errorf("%s: envelope error %d, want %s", name, got, tc.want.Message)
		}
	}
	if _, err := alice.ListTopics(ctx); err != nil {
		t.Fatalf("the cluster after bad envelopes: %v", err)
	}

	for _, n := range append(c.Controllers, c.Nodes...) {
		if strings.Contains(n.Log(), saslClusterPassword) {
			t.Fatalf("node %s logged the password", n.Addr())
		}
	}
}
