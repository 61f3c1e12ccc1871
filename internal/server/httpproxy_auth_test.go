package server

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// authorizedCall is call with HTTP basic credentials.
func authorizedCall(t *testing.T, user, password, method, url, contentType, body string, headers ...string) httpAnswer {
	t.Helper()
	credentials := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	return call(t, method, url, contentType, body, append([]string{"Authorization", "Basic " + credentials}, headers...)...)
}

// TestHTTPProxyActsAsPrincipal: with SASL and the authorizer on, the REST
// proxy takes HTTP basic auth against the SASL users (a SCRAM user, a
// PLAIN JAAS user, a SCRAM super user) and its Kafka requests run as that
// principal, so the ACLs decide; the v3 ACL routes manage them; a consumer
// instance answers only the principal that made it; no password reaches
// the log.
func TestHTTPProxyActsAsPrincipal(t *testing.T) {
	sn := startSASLNode(t, "schema.registry.listeners=http://127.0.0.1:0", "http.proxy.listeners=http://127.0.0.1:0",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin;User:ANONYMOUS", "offsets.topic.replication.factor=1")
	ctx := testContext(t)
	admin := sn.client(t, scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism())
	adm := kadm.NewClient(admin)
	altered, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: saslBobPassword}})
	if err != nil || altered.Error() != nil {
		t.Fatalf("alter scram: %v %v", err, altered.Error())
	}
	eventually(t, 10*time.Second, "bob's SCRAM credential is in the image", func() bool {
		_, ok := sn.node.controller.Image().ScramCredential("bob", int8(kadm.ScramSha256))
		return ok
	})
	for _, topic := range []string{"bob-topic", "secret-topic"} {
		if created, err := adm.CreateTopics(ctx, 1, 1, nil, topic); err != nil || created[topic].Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, created[topic].Err)
		}
	}
	acls := kadm.NewACLs().Topics("bob-topic").Allow("User:bob").Operations(kadm.OpWrite, kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral)
	if results, err := adm.CreateACLs(ctx, acls); err != nil || results[0].Err != nil {
		t.Fatalf("create acls: %v %+v", err, results)
	}
	base := "http://" + sn.node.HTTPProxyAddrs()[0].String()
	value := base64.StdEncoding.EncodeToString([]byte("v"))
	produce := fmt.Sprintf(`{"records":[{"value":%q}]}`, value)

	wantAnswer(t, "no credentials", call(t, "GET", base+"/topics", "", ""), 401, `"error_code":40101`)
	wantAnswer(t, "wrong password", authorizedCall(t, "bob", "wrong", "GET", base+"/topics", "", ""), 401, `"error_code":40101`)
	eventually(t, 10*time.Second, "bob may write bob-topic", func() bool {
		answer := authorizedCall(t, "bob", saslBobPassword, "POST", base+"/topics/bob-topic", typeV2Binary, produce)
		return answer.status == 200 && strings.Contains(answer.body, `"offset":`) && !strings.Contains(answer.body, `"error_code":5`)
	})
	wantAnswer(t, "bob may not see secret-topic", authorizedCall(t, "bob", saslBobPassword, "POST", base+"/topics/secret-topic", typeV2Binary, produce), 403, `"error_code":40301`)
	topics := authorizedCall(t, "bob", saslBobPassword, "GET", base+"/topics", "", "")
	if topics.status != 200 || !strings.Contains(topics.body, "bob-topic") || strings.Contains(topics.body, "secret-topic") {
		t.Fatalf("bob's topics: %d %s", topics.status, topics.body)
	}
	wantAnswer(t, "alice has no ACLs", authorizedCall(t, "alice", saslAlicePassword, "POST", base+"/topics/bob-topic", typeV2Binary, produce), 403, `"error_code":40301`)

	// The super user manages ACLs through v3: allow alice to read
	// bob-topic, list, then delete it.
	clusterID := sn.node.controller.Image().ClusterID
	aclsURL := base + "/v3/clusters/" + clusterID + "/acls"
	wantAnswer(t, "create acl", authorizedCall(t, "admin", saslAdminPassword, "POST", aclsURL, "application/json",
		`{"resource_type":"TOPIC","resource_name":"bob-topic","pattern_type":"LITERAL","principal":"User:alice","host":"*","operation":"READ","permission":"ALLOW"}`), 201)
	wantAnswer(t, "bob may not create acls", authorizedCall(t, "bob", saslBobPassword, "POST", aclsURL, "application/json",
		`{"resource_type":"TOPIC","resource_name":"secret-topic","pattern_type":"LITERAL","principal":"User:bob","host":"*","operation":"ALL","permission":"ALLOW"}`), 403, `"error_code":40301`)
	wantAnswer(t, "list acls", authorizedCall(t, "admin", saslAdminPassword, "GET", aclsURL+"?resource_type=TOPIC&resource_name=bob-topic", "", ""), 200,
		`"principal":"User:alice"`, `"operation":"READ"`, `"principal":"User:bob"`, `"operation":"WRITE"`)
	eventually(t, 10*time.Second, "alice sees bob-topic", func() bool {
		answer := authorizedCall(t, "alice", saslAlicePassword, "GET", base+"/topics", "", "")
		return answer.status == 200 && strings.Contains(answer.body, "bob-topic")
	})
	wantAnswer(t, "delete acls", authorizedCall(t, "admin", saslAdminPassword, "DELETE", aclsURL+"?resource_type=TOPIC&resource_name=bob-topic&principal=User:alice&pattern_type=LITERAL", "", ""), 200,
		`"principal":"User:alice"`)

	// An instance answers only its creator.
	wantAnswer(t, "bob's instance", authorizedCall(t, "bob", saslBobPassword, "POST", base+"/consumers/bob-group", typeV2, `{"name":"mine"}`), 200)
	wantAnswer(t, "not alice's", authorizedCall(t, "alice", saslAlicePassword, "GET", base+"/consumers/bob-group/instances/mine/subscription", "", ""), 404, `"error_code":40403`)
	wantAnswer(t, "bob's own", authorizedCall(t, "bob", saslBobPassword, "GET", base+"/consumers/bob-group/instances/mine/subscription", "", ""), 200)

	// Avro through the registry, which takes the same credentials and
	// decides by the ACLs on the subject: 403 until bob may write
	// and read it.
	avro := fmt.Sprintf(`{"value_schema":%q,"records":[{"value":{"name":"b","nick":null}}]}`, proxyAvroValue)
	wantAnswer(t, "bob may not register bob-topic-value", authorizedCall(t, "bob", saslBobPassword, "POST", base+"/topics/bob-topic", typeV2Avro, avro), 403, `"error_code":40301`)
	subject := authz.Binding{ResourceType: authz.ResourceSubject, ResourceName: "bob-topic", PatternType: authz.PatternPrefixed,
		Principal: "User:bob", Host: authz.Wildcard, Operation: authz.OpWrite, Permission: authz.PermissionAllow}
	readSubject := subject
	readSubject.Operation = authz.OpRead // the proxy reads the schema back by id
	createBindings(t, admin, sn.node, subject, readSubject)
	wantAnswer(t, "bob produces avro", authorizedCall(t, "bob", saslBobPassword, "POST", base+"/topics/bob-topic", typeV2Avro, avro), 200, `"value_schema_id":1`)
	if strings.Contains(sn.log.String(), saslBobPassword) {
		t.Fatal("a password reached the log")
	}
}
