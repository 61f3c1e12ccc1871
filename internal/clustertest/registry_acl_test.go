package clustertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sr"
)

// TestRegistryClusterACLsForwarded: in a three-node cluster with SASL on
// the client listeners and the authorizer on, a write sent to a node that
// is not the registry's writer is forwarded, and the ACLs decide it on
// both sides: alice, allowed WRITE on her subject, registers through every
// node; bob, with no ACL, is refused with 403/40301 by every node, also
// when he marks his request as already forwarded to skip the first check.
func TestRegistryClusterACLsForwarded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	const password = "cluster-Registry-5e1d"
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="` + password +
		`" user_admin="` + password + `" user_alice="` + password + `" user_bob="` + password + `";`
	admin := kgo.SASL(plain.Auth{User: "admin", Pass: password}.AsMechanism())
	ports := []int{FreePort(t), FreePort(t), FreePort(t)}
	cluster := startClusterEach(t, &Cluster{ClientOpts: []kgo.Opt{admin}}, 3, func(i int) []string {
		return []string{"schema.registry.listeners=http://127.0.0.1:" + strconv.Itoa(ports[i])}
	},
		"listener.security.protocol.map=PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
		"sasl.enabled.mechanisms=PLAIN",
		"samsa.sasl.plain.allow.plaintext=true",
		"sasl.mechanism.inter.broker.protocol=PLAIN",
		"listener.name.plaintext.plain.sasl.jaas.config="+jaas,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		// The controller listener is PLAINTEXT: its peers are anonymous.
		"super.users=User:admin;User:ANONYMOUS",
	)
	defer func() {
		if t.Failed() {
			for _, node := range cluster.Nodes {
				t.Log(node.Log())
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	as := func(port int, user string) *sr.Client {
		client, err := sr.NewClient(sr.URLs(fmt.Sprintf("http://127.0.0.1:%d", port)), sr.BasicAuth(user, password))
		if err != nil {
			t.Fatal(err)
		}
		return client
	}
	// Every node reaches the writer: the election has settled.
	for _, port := range ports {
		client := as(port, "admin")
		WaitFor(t, 90*time.Second, func() error {
			return client.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatBackward})[0].Err
		})
	}

	kafka, err := kgo.NewClient(kgo.SeedBrokers(cluster.Nodes[0].Addr()), admin)
	if err != nil {
		t.Fatal(err)
	}
	defer kafka.Close()
	req := kmsg.NewPtrCreateACLsRequest()
	creation := kmsg.NewCreateACLsRequestCreation()
	creation.ResourceType, creation.ResourceName = kmsg.ACLResourceType(101), "orders-value" // SUBJECT
	creation.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
	creation.Principal, creation.Host = "User:alice", "*"
	creation.Operation, creation.PermissionType = kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
	req.Creations = append(req.Creations, creation)
	resp, err := req.RequestWith(ctx, kafka)
	if err != nil || resp.Results[0].ErrorCode != 0 {
		t.Fatalf("create ACL: %v %+v", err, resp)
	}

	// alice registers through each node; the ACL reaches every node's
	// authorizer through the metadata log, so poll.
	for i, port := range ports {
		alice := as(port, "alice")
		WaitFor(t, 30*time.Second, func() error {
			// RegisterSchema: one POST, which WRITE allows (CreateSchema
			// also reads the schema back, which needs READ).
			_, err := alice.RegisterSchema(ctx, "orders-value", sr.Schema{Schema: avroRecord("Order", i+1)}, -1, -1)
			return err
		})
	}
	if versions, err := as(ports[2], "alice").SubjectVersions(ctx, "orders-value"); err != nil || len(versions) != 3 {
		t.Fatalf("orders-value versions: %v %v", versions, err)
	}
	for _, port := range ports {
		_, err := as(port, "bob").RegisterSchema(ctx, "orders-value", sr.Schema{Schema: avroRecord("Order", 4)}, -1, -1)
		var responseError *sr.ResponseError
		if !errors.As(err, &responseError) || responseError.StatusCode != http.StatusForbidden || responseError.ErrorCode != 40301 {
			t.Fatalf("bob through port %d: %v", port, err)
		}
		// The forwarded marker skips forwarding, never the check.
		request, _ := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/subjects/orders-value/versions", port),
			strings.NewReader(`{"schema":"\"string\""}`))
		request.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		request.Header.Set("X-Samsa-Registry-Forwarded", "1")
		request.SetBasicAuth("bob", password)
		response, err := http.DefaultClient.Do(request)
		if err != nil {
			t.Fatal(err)
		}
		response.Body.Close()
		if response.StatusCode != http.StatusForbidden {
			t.Fatalf("bob's request marked forwarded through port %d: %d", port, response.StatusCode)
		}
	}
}
