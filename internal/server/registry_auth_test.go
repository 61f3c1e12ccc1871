package server

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/twmb/franz-go/pkg/sr"
)

// startSASLRegistryNode is a SASL node serving the schema registry, with
// the SCRAM user bob created through the node with
// AlterUserScramCredentials.
func startSASLRegistryNode(t *testing.T) *saslNode {
	t.Helper()
	sn := startSASLNode(t, "schema.registry.listeners=http://127.0.0.1:0")
	adm := kadm.NewClient(sn.client(t, scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism()))
	altered, err := adm.AlterUserSCRAMs(testContext(t), nil, []kadm.UpsertSCRAM{{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: saslBobPassword}})
	if err != nil || altered.Error() != nil {
		t.Fatalf("alter scram: %v %v", err, altered.Error())
	}
	// The credential reaches the image through the metadata log; wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := sn.node.controller.Image().ScramCredential("bob", int8(kadm.ScramSha256)); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("bob's SCRAM credential never reached the metadata image")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return sn
}

func saslRegistryURL(sn *saslNode) string {
	return "http://" + sn.node.RegistryAddrs()[0].String()
}

// TestRegistryBasicAuthFranzGo: with a SASL listener, franz-go's sr client
// with sr.BasicAuth works as a SCRAM user and as a PLAIN JAAS user; no
// credentials, a wrong password and an unknown user all get the same 401
// with error_code 40101, and the node's log never holds a password.
func TestRegistryBasicAuthFranzGo(t *testing.T) {
	sn := startSASLRegistryNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url := saslRegistryURL(sn)

	for _, user := range []struct{ name, password string }{{"bob", saslBobPassword}, {"alice", saslAlicePassword}} {
		client, err := sr.NewClient(sr.URLs(url), sr.BasicAuth(user.name, user.password))
		if err != nil {
			t.Fatal(err)
		}
		subject := "auth-" + user.name + "-value"
		registered, err := client.CreateSchema(ctx, subject, sr.Schema{Schema: avroUserV1})
		if err != nil {
			t.Fatalf("%s: create schema: %v", user.name, err)
		}
		fetched, err := client.SchemaByID(ctx, registered.ID)
		if err != nil || !strings.Contains(fetched.Schema, "User") {
			t.Fatalf("%s: schema by id: %v %+v", user.name, err, fetched)
		}
	}

	refused := []struct {
		name string
		opts []sr.ClientOpt
	}{
		{"no credentials", nil},
		{"wrong password", []sr.ClientOpt{sr.BasicAuth("bob", "not-"+saslBobPassword)}},
		{"unknown user", []sr.ClientOpt{sr.BasicAuth("mallory", saslBobPassword)}},
		{"JAAS user with SCRAM user's password", []sr.ClientOpt{sr.BasicAuth("alice", saslBobPassword)}},
	}
	for _, c := range refused {
		client, err := sr.NewClient(append([]sr.ClientOpt{sr.URLs(url)}, c.opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.Subjects(ctx)
		wantResponseError(t, err, 40101)
		_, err = client.CreateSchema(ctx, "refused-value", sr.Schema{Schema: avroUserV1})
		wantResponseError(t, err, 40101)
	}

	// The raw answer: status, challenge and Confluent's error body, the
	// same for an unknown user as for a wrong password.
	var bodies []string
	for _, credentials := range [][2]string{{"bob", "wrong"}, {"nobody", "wrong"}} {
		request, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/subjects", nil)
		request.SetBasicAuth(credentials[0], credentials[1])
		response, err := http.DefaultClient.Do(request)
		if err != nil {
			t.Fatal(err)
		}
		body := readBody(t, response)
		if response.StatusCode != http.StatusUnauthorized || response.Header.Get("WWW-Authenticate") != `Basic realm="samsa"` {
			t.Fatalf("%s: %d %v", credentials[0], response.StatusCode, response.Header)
		}
		bodies = append(bodies, body)
	}
	if bodies[0] != bodies[1] || !strings.Contains(bodies[0], `"error_code":40101`) || !strings.Contains(bodies[0], `"message":"Unauthorized"`) {
		t.Fatalf("401 bodies %q and %q", bodies[0], bodies[1])
	}
	// The registry kept serving after the refusals.
	client, _ := sr.NewClient(sr.URLs(url), sr.BasicAuth("bob", saslBobPassword))
	if subjects, err := client.Subjects(ctx); err != nil || len(subjects) != 2 {
		t.Fatalf("subjects after refusals: %v %v", subjects, err)
	}
	if strings.Contains(sn.log.String(), saslBobPassword) || strings.Contains(sn.log.String(), saslAlicePassword) {
		t.Fatal("the node's log contains a password")
	}
}

// TestRegistryBasicAuthPrincipal: the principal handed to handlers is
// User:<name> of the authenticated user.
func TestRegistryBasicAuthPrincipal(t *testing.T) {
	sn := startSASLRegistryNode(t)
	authenticator, err := registryAuthenticator(sn.node.cfg, sn.node.controller.Image)
	if err != nil || authenticator == nil {
		t.Fatalf("authenticator: %v %v", authenticator, err)
	}
	for _, c := range []struct{ user, password, principal string }{
		{"bob", saslBobPassword, "User:bob"},
		{"alice", saslAlicePassword, "User:alice"},
		{"admin", saslAdminPassword, "User:admin"},
		{"bob", "", ""},
		{"", saslBobPassword, ""},
	} {
		request, _ := http.NewRequest(http.MethodGet, "http://registry/subjects", nil)
		request.SetBasicAuth(c.user, c.password)
		principal, err := authenticator.Authenticate(request)
		if string(principal) != c.principal || (err == nil) != (c.principal != "") {
			t.Errorf("%q: got %q %v, want %q", c.user, principal, err, c.principal)
		}
	}
}

// TestRegistryWithoutSASLIsAnonymous: without a SASL listener the registry
// asks for no credentials, as before.
func TestRegistryWithoutSASLIsAnonymous(t *testing.T) {
	tn := startTestNode(t, "schema.registry.listeners=http://127.0.0.1:0")
	authenticator, err := registryAuthenticator(tn.node.cfg, tn.node.controller.Image)
	if err != nil || authenticator != nil {
		t.Fatalf("authenticator without SASL: %v %v", authenticator, err)
	}
	client := registryClient(t, tn)
	if _, err := client.Subjects(testContext(t)); err != nil {
		t.Fatal(err)
	}
}

// TestRegistryBasicAuthConfluentPython runs confluent-kafka-python's
// SchemaRegistryClient with basic.auth.user.info as the SCRAM user bob
// (testdata/registry_confluent.py), then without credentials and with a
// wrong password, which get 401/40101; with the newest confluent-kafka from
// PyPI (REGISTRY_PYTHON) and with Debian's at /usr/bin/python3, as
// TestRegistryConfluentPython does.
func TestRegistryBasicAuthConfluentPython(t *testing.T) {
	runs := []struct{ name, python, formats, probe string }{
		{"pypi", os.Getenv("REGISTRY_PYTHON"), "avro,json,protobuf",
			"import confluent_kafka.schema_registry.avro, confluent_kafka.schema_registry.json_schema, confluent_kafka.schema_registry.protobuf"},
		{"debian", "/usr/bin/python3", "json,protobuf",
			"import confluent_kafka.schema_registry.json_schema, confluent_kafka.schema_registry.protobuf"},
	}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			if run.python == "" {
				t.Skip("REGISTRY_PYTHON is not set (an interpreter with pip install 'confluent-kafka[avro,json,protobuf]')")
			}
			if out, err := exec.Command(run.python, "-c", run.probe).CombinedOutput(); err != nil {
				t.Skipf("%s lacks the schema registry serializers: %s", run.python, out)
			}
			sn := startSASLRegistryNode(t)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			bootstrap := sn.node.Addrs()[0].String()
			out, err := exec.CommandContext(ctx, run.python, "testdata/registry_confluent.py", bootstrap, saslRegistryURL(sn), run.formats, "bob:"+saslBobPassword).CombinedOutput()
			if err != nil {
				t.Fatalf("confluent-kafka-python: %v\n%s", err, out)
			}
			for _, format := range append(strings.Split(run.formats, ","), "client") {
				if !strings.Contains(string(out), "ok "+format) {
					t.Errorf("missing ok %s in\n%s", format, out)
				}
			}
			refused, err := exec.CommandContext(ctx, run.python, "-c", refusedScript, saslRegistryURL(sn)).CombinedOutput()
			if err != nil || !strings.Contains(string(refused), "ok refused") {
				t.Fatalf("refused confluent-kafka-python: %v\n%s", err, refused)
			}
		})
	}
}

// refusedScript asks for the subjects without credentials and with a wrong
// password, and wants 401/40101 both times.
const refusedScript = `
import sys
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
for info in [None, "bob:wrong"]:
    config = {"url": sys.argv[1]}
    if info:
        config["basic.auth.user.info"] = info
    try:
        SchemaRegistryClient(config).get_subjects()
        sys.exit("accepted " + str(info))
    except SchemaRegistryError as e:
        assert e.http_status_code == 401 and e.error_code == 40101, (e.http_status_code, e.error_code)
print("ok refused")
`

func readBody(t *testing.T, response *http.Response) string {
	t.Helper()
	defer response.Body.Close()
	body, err := io.ReadAll(response.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
