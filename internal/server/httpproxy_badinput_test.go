package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestHTTPProxyBadInput sends the REST proxy what clients get wrong and
// checks each answer is Confluent's status and error code, that nothing
// bad reached the topic, and that the proxy keeps serving.
func TestHTTPProxyBadInput(t *testing.T) {
	tn := startProxyNode(t, "http.proxy.max.request.bytes=2048", "http.proxy.consumer.max.instances=2")
	base := proxyURL(tn)
	adm := tn.admin()
	mustCreateTopic(t, adm, "bad-input", 2, nil)
	avroSchema := fmt.Sprintf("%q", proxyAvroValue)
	cases := []struct {
		name, method, path, contentType, body string
		status, code                          int
	}{
		{"malformed JSON", "POST", "/topics/bad-input", typeV2Binary, `{"records":[`, 400, 400},
		{"two JSON values", "POST", "/topics/bad-input", typeV2Binary, `{"records":[]}{}`, 400, 400},
		{"unknown format", "POST", "/topics/bad-input", "application/vnd.kafka.xml.v2+json", `{"records":[{"value":"AA=="}]}`, 415, 415},
		{"plain JSON for produce", "POST", "/topics/bad-input", "application/json", `{"records":[{"value":"AA=="}]}`, 415, 415},
		{"not base64", "POST", "/topics/bad-input", typeV2Binary, `{"records":[{"value":"not base64!"}]}`, 422, 422},
		{"no records", "POST", "/topics/bad-input", typeV2Binary, `{"records":[]}`, 422, 422},
		{"unknown topic", "POST", "/topics/nope", typeV2Binary, `{"records":[{"value":"AA=="}]}`, 404, 40401},
		{"unknown partition", "POST", "/topics/bad-input/partitions/7", typeV2Binary, `{"records":[{"value":"AA=="}]}`, 404, 40402},
		{"record partition out of range", "POST", "/topics/bad-input", typeV2Binary, `{"records":[{"value":"AA==","partition":2}]}`, 404, 40402},
		{"avro without value schema", "POST", "/topics/bad-input", typeV2Avro, `{"records":[{"value":{"name":"x"}}]}`, 422, 42202},
		{"avro key without key schema", "POST", "/topics/bad-input", typeV2Avro, `{"value_schema":` + avroSchema + `,"records":[{"key":"k","value":{"name":"x","nick":null}}]}`, 422, 42201},
		{"invalid avro schema", "POST", "/topics/bad-input", typeV2Avro, `{"value_schema":"{\"type\":\"record\"}","records":[{"value":{}}]}`, 422, 42205},
		{"unknown schema id", "POST", "/topics/bad-input", typeV2Avro, `{"value_schema_id":9999,"records":[{"value":{}}]}`, 422, 42205},
		{"value the schema refuses", "POST", "/topics/bad-input", typeV2Avro, `{"value_schema":` + avroSchema + `,"records":[{"value":{"name":7}}]}`, 422, 42203},
		{"invalid protobuf schema", "POST", "/topics/bad-input", typeV2Protobuf, `{"value_schema":"message {","records":[{"value":{}}]}`, 422, 42205},
		{"oversize body", "POST", "/topics/bad-input", typeV2Binary, `{"records":[{"value":"` + strings.Repeat("A", 4096) + `"}]}`, 413, 413},
		{"unknown consumer format", "POST", "/consumers/bad-group", typeV2, `{"format":"xml"}`, 422, 42204},
		{"bad auto.offset.reset", "POST", "/consumers/bad-group", typeV2, `{"auto.offset.reset":"sometimes"}`, 422, 42204},
		{"malformed consumer body", "POST", "/consumers/bad-group", typeV2, `{"format":`, 400, 400},
		{"wrong consumer body type", "POST", "/consumers/bad-group", "text/plain", `{}`, 415, 415},
		{"unknown instance", "GET", "/consumers/bad-group/instances/nobody/records", "", "", 404, 40403},
		{"unknown route", "GET", "/nowhere", "", "", 404, 404},
		{"metadata of an unknown topic", "GET", "/topics/nope", "", "", 404, 40401},
		{"metadata of an unknown partition", "GET", "/topics/bad-input/partitions/9", "", "", 404, 40402},
		{"offsets of an unknown partition", "GET", "/topics/bad-input/partitions/9/offsets", "", "", 404, 40402},
		{"unacceptable Accept", "GET", "/topics", "", "", 406, 406},
		{"v3 malformed record", "POST", "/v3/clusters/CLUSTER/topics/bad-input/records", "application/json", `{"value":`, 400, 400},
		{"v3 unknown data type", "POST", "/v3/clusters/CLUSTER/topics/bad-input/records", "application/json", `{"value":{"type":"XML","data":"x"}}`, 400, 400},
		{"v3 malformed topic", "POST", "/v3/clusters/CLUSTER/topics", "application/json", `{"topic_name":`, 400, 400},
		{"v3 no partitions", "POST", "/v3/clusters/CLUSTER/topics", "application/json", `{"topic_name":"t","partitions_count":0}`, 400, 40002},
		{"v3 bad acl", "POST", "/v3/clusters/CLUSTER/acls", "application/json", `{"resource_type":"TABLE","resource_name":"x","principal":"User:a","operation":"READ","permission":"ALLOW"}`, 400, 40002},
	}
	clusterID := tn.node.controller.Image().ClusterID
	for _, c := range cases {
		var headers []string
		if c.status == 406 {
			headers = []string{"Accept", "text/html"}
		}
		answer := call(t, c.method, base+strings.ReplaceAll(c.path, "CLUSTER", clusterID), c.contentType, c.body, headers...)
		wantAnswer(t, c.name, answer, c.status, fmt.Sprintf(`"error_code":%d`, c.code), `"message":`)
	}

	// Nothing of the above reached the topic.
	ends, err := adm.ListEndOffsets(testContext(t), "bad-input")
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(end kadm.ListedOffset) {
		if end.Offset != 0 {
			t.Errorf("partition %d holds %d records", end.Partition, end.Offset)
		}
	})

	// A consumer that is neither subscribed nor assigned cannot read.
	created := call(t, "POST", base+"/consumers/bad-group", typeV2, `{"name":"idle"}`)
	wantAnswer(t, "create", created, 200)
	wantAnswer(t, "read unsubscribed", call(t, "GET", base+"/consumers/bad-group/instances/idle/records", "", "", "Accept", typeV2Binary), 409, `"error_code":40903`)
	wantAnswer(t, "second", call(t, "POST", base+"/consumers/bad-group", typeV2, `{"name":"other"}`), 200)
	wantAnswer(t, "over the instance bound", call(t, "POST", base+"/consumers/bad-group", typeV2, `{"name":"third"}`), 429, `"error_code":429`, "http.proxy.consumer.max.instances")
	wantAnswer(t, "delete frees a slot", call(t, "DELETE", base+"/consumers/bad-group/instances/other", typeV2, ""), 204)
	wantAnswer(t, "third after delete", call(t, "POST", base+"/consumers/bad-group", typeV2, `{"name":"third"}`), 200)

	// Still serving.
	wantAnswer(t, "topics after bad input", call(t, "GET", base+"/topics", "", ""), 200, `"bad-input"`)
}

// TestHTTPProxyInstanceExpiry: an instance unused for
// http.proxy.consumer.instance.timeout.ms is closed and leaves its group.
func TestHTTPProxyInstanceExpiry(t *testing.T) {
	tn := startProxyNode(t, "http.proxy.consumer.instance.timeout.ms=300")
	base := proxyURL(tn)
	adm := tn.admin()
	mustCreateTopic(t, adm, "expiry", 1, nil)
	wantAnswer(t, "create", call(t, "POST", base+"/consumers/expiry-group", typeV2, `{"name":"brief","auto.offset.reset":"earliest"}`), 200)
	instance := base + "/consumers/expiry-group/instances/brief"
	wantAnswer(t, "subscribe", call(t, "POST", instance+"/subscription", typeV2, `{"topics":["expiry"]}`), 204)
	// Reading keeps the instance alive and makes it join the group.
	deadline := time.Now().Add(20 * time.Second)
	for {
		wantAnswer(t, "records", call(t, "GET", instance+"/records?timeout=100", "", "", "Accept", typeV2Binary), 200)
		described, err := adm.DescribeGroups(testContext(t), "expiry-group")
		if err == nil && len(described["expiry-group"].Members) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the instance never joined its group: %+v %v", described, err)
		}
	}
	// Left alone, it expires and leaves the group.
	deadline = time.Now().Add(20 * time.Second)
	for {
		described, err := adm.DescribeGroups(testContext(t), "expiry-group")
		if err == nil && len(described["expiry-group"].Members) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the instance did not leave its group: %+v %v", described, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	wantAnswer(t, "expired", call(t, "GET", instance+"/records", "", "", "Accept", typeV2Binary), 404, `"error_code":40403`)
}
