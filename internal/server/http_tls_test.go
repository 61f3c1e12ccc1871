package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
)

// TestHTTPSRegistryAndProxy serves the schema registry and the REST proxy
// on https listeners with the broker's ssl.* keys and
// ssl.client.auth=required: a client with a certificate the truststore
// signs is served, one without is refused at the handshake, plain HTTP is
// refused, and the proxy reaches the https registry with the node's own
// keystore and truststore.
func TestHTTPSRegistryAndProxy(t *testing.T) {
	files := newTLSFiles(t)
	tn := startTestNode(t, append(files.brokerOverrides("required"),
		"schema.registry.listeners=https://127.0.0.1:0", "http.proxy.listeners=https://127.0.0.1:0")...)
	registryAddr, proxyAddr := tn.node.RegistryAddrs()[0].String(), tn.node.HTTPProxyAddrs()[0].String()
	withCertificate := &http.Client{Transport: &http.Transport{TLSClientConfig: files.clientConfig(true)}}
	withoutCertificate := &http.Client{Transport: &http.Transport{TLSClientConfig: files.clientConfig(false)}}

	response, err := withCertificate.Get("https://" + registryAddr + "/subjects")
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := io.ReadAll(response.Body); response.StatusCode != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("registry over https: %d %s", response.StatusCode, body)
	}
	response.Body.Close()
	if response, err := withoutCertificate.Get("https://" + registryAddr + "/subjects"); err == nil {
		// TLS 1.3 reports the refused certificate on the first read.
		_, err = io.ReadAll(response.Body)
		response.Body.Close()
		if err == nil && response.StatusCode == 200 {
			t.Fatal("a client without a certificate was served")
		}
	}
	if response, err := http.Get("http://" + registryAddr + "/subjects"); err == nil {
		response.Body.Close()
		if response.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain HTTP to the https listener: %d", response.StatusCode)
		}
	}

	client, err := sr.NewClient(sr.URLs("https://"+registryAddr), sr.DialTLSConfig(files.clientConfig(true)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateSchema(testContext(t), "tls-value", sr.Schema{Schema: avroUserV1}); err != nil {
		t.Fatalf("franz-go sr over https: %v", err)
	}

	mustCreateTopic(t, tn.admin(), "tls-topic", 1, nil)
	request, _ := http.NewRequest("POST", "https://"+proxyAddr+"/topics/tls-topic", strings.NewReader(
		fmt.Sprintf(`{"value_schema":%q,"records":[{"value":{"name":"tls"}}]}`, avroUserV1)))
	request.Header.Set("Content-Type", typeV2Avro)
	response, err = withCertificate.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(response.Body)
	response.Body.Close()
	if response.StatusCode != 200 || !strings.Contains(string(body), `"value_schema_id":1`) || !strings.Contains(string(body), `"offset":0`) {
		t.Fatalf("proxy over https to the https registry: %d %s", response.StatusCode, body)
	}
}

// TestHTTPProxyOverSASLSSL: on a node whose only SASL listener is
// SASL_SSL, the proxy's clients log in as the caller over TLS.
func TestHTTPProxyOverSASLSSL(t *testing.T) {
	files := newTLSFiles(t)
	tn := startTestNode(t, append(files.brokerOverrides("none"),
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"sasl.enabled.mechanisms=PLAIN",
		`listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="`+saslAlicePassword+`";`,
		"http.proxy.listeners=http://127.0.0.1:0")...)
	mustCreateTopic(t, tn.admin(), "sasl-ssl-topic", 1, nil)
	base := "http://" + tn.node.HTTPProxyAddrs()[0].String()
	wantAnswer(t, "no credentials", call(t, "GET", base+"/topics", "", ""), 401, `"error_code":40101`)
	wantAnswer(t, "alice produces", authorizedCall(t, "alice", saslAlicePassword, "POST", base+"/topics/sasl-ssl-topic", typeV2Binary, `{"records":[{"value":"AA=="}]}`), 200, `"offset":0`, `"error_code":null`)
}
