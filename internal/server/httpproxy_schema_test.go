package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const (
	typeV2JSONSchema = "application/vnd.kafka.jsonschema.v2+json"
	typeV2Protobuf   = "application/vnd.kafka.protobuf.v2+json"

	proxyAvroValue = `{"type":"record","name":"Person","namespace":"rest","fields":[{"name":"name","type":"string"},{"name":"nick","type":["null","string"],"default":null}]}`
	proxyJSONValue = `{"type":"object","properties":{"n":{"type":"integer"},"tag":{"type":"string"}},"required":["n"]}`
	proxyProto     = `syntax = "proto3"; package rest; message Event { string id = 1; int32 count = 2; message Inner { bool ok = 1; } Inner inner = 3; }`
)

// consumeThroughProxy creates an instance in format, subscribes it to
// topic from the start and reads want records.
func consumeThroughProxy(t *testing.T, base, group, topic string, format string, accept string, want int) []v2Record {
	t.Helper()
	created := call(t, "POST", base+"/consumers/"+group, typeV2, fmt.Sprintf(`{"format":%q,"auto.offset.reset":"earliest"}`, format))
	wantAnswer(t, "create "+format+" consumer", created, 200)
	var instance struct {
		BaseURI string `json:"base_uri"`
	}
	created.decode(t, &instance)
	wantAnswer(t, "subscribe", call(t, "POST", instance.BaseURI+"/subscription", typeV2, fmt.Sprintf(`{"topics":[%q]}`, topic)), 204)
	records := pollRecords(t, instance.BaseURI, accept, want)
	wantAnswer(t, "delete", call(t, "DELETE", instance.BaseURI, typeV2, ""), 204)
	return records
}

// TestHTTPProxySchemaFormats produces Avro, JSON Schema and Protobuf
// through the v2 and v3 produce routes (the proxy registering the schemas
// in the node's registry), reads them back through proxy consumers in the
// same formats, and checks the bytes on the topic are Confluent's wire
// format by decoding them with confluent-kafka-python's deserializers; the
// record Python produces with its AvroSerializer reads back through the
// proxy.
func TestHTTPProxySchemaFormats(t *testing.T) {
	tn := startProxyNode(t)
	base := proxyURL(tn)
	adm := tn.admin()
	for _, topic := range []string{"rest-avro", "rest-jsonschema", "rest-protobuf", "rest-from-python"} {
		mustCreateTopic(t, adm, topic, 1, nil)
	}

	produced := call(t, "POST", base+"/topics/rest-avro", typeV2Avro, fmt.Sprintf(`{"key_schema":"\"string\"","value_schema":%q,"records":[{"key":"k1","value":{"name":"ann","nick":{"string":"a"}}}]}`, proxyAvroValue))
	wantAnswer(t, "produce avro", produced, 200, `"key_schema_id":`, `"value_schema_id":`)
	var offsets v2Offsets
	produced.decode(t, &offsets)
	second := call(t, "POST", base+"/topics/rest-avro", typeV2Avro, fmt.Sprintf(`{"value_schema_id":%d,"records":[{"value":{"name":"bob","nick":null}}]}`, *offsets.ValueSchemaID))
	wantAnswer(t, "produce avro by id", second, 200, fmt.Sprintf(`"value_schema_id":%d`, *offsets.ValueSchemaID), `"offset":1`)
	avroRecords := consumeThroughProxy(t, base, "rest-avro-group", "rest-avro", "avro", typeV2Avro, 2)
	if string(avroRecords[0].Key) != `"k1"` || string(avroRecords[0].Value) != `{"name":"ann","nick":{"string":"a"}}` || string(avroRecords[1].Value) != `{"name":"bob","nick":null}` {
		t.Fatalf("avro records: %s / %s / %s", avroRecords[0].Key, avroRecords[0].Value, avroRecords[1].Value)
	}

	wantAnswer(t, "produce jsonschema", call(t, "POST", base+"/topics/rest-jsonschema", typeV2JSONSchema, fmt.Sprintf(`{"value_schema":%q,"records":[{"value":{"n":5,"tag":"x"}}]}`, proxyJSONValue)), 200, `"value_schema_id":`)
	wantAnswer(t, "jsonschema refuses", call(t, "POST", base+"/topics/rest-jsonschema", typeV2JSONSchema, fmt.Sprintf(`{"value_schema":%q,"records":[{"value":{"n":"five"}}]}`, proxyJSONValue)), 422, `"error_code":42203`)
	jsonRecords := consumeThroughProxy(t, base, "rest-json-group", "rest-jsonschema", "jsonschema", typeV2JSONSchema, 1)
	if string(jsonRecords[0].Value) != `{"n":5,"tag":"x"}` {
		t.Fatalf("jsonschema record: %s", jsonRecords[0].Value)
	}

	wantAnswer(t, "produce protobuf", call(t, "POST", base+"/topics/rest-protobuf", typeV2Protobuf, fmt.Sprintf(`{"value_schema":%q,"records":[{"value":{"id":"e1","count":2,"inner":{"ok":true}}}]}`, proxyProto)), 200, `"value_schema_id":`)
	protoRecords := consumeThroughProxy(t, base, "rest-proto-group", "rest-protobuf", "protobuf", typeV2Protobuf, 1)
	var event map[string]any
	if err := json.Unmarshal(protoRecords[0].Value, &event); err != nil || event["id"] != "e1" || event["count"] != float64(2) || event["inner"].(map[string]any)["ok"] != true {
		t.Fatalf("protobuf record: %s %v", protoRecords[0].Value, err)
	}

	// v3 with a schema id, and with the subject's latest schema.
	clusterID := tn.node.controller.Image().ClusterID
	records := base + "/v3/clusters/" + clusterID + "/topics/rest-avro/records"
	wantAnswer(t, "v3 avro by id", call(t, "POST", records, "application/json", fmt.Sprintf(`{"value":{"type":"AVRO","schema_id":%d,"data":{"name":"cy","nick":{"string":"c"}}}}`, *offsets.ValueSchemaID)), 200, `"offset":2`, `"type":"AVRO"`)
	wantAnswer(t, "v3 avro latest", call(t, "POST", records, "application/json", `{"value":{"type":"AVRO","data":{"name":"di","nick":null}}}`), 200, `"offset":3`)
	wantAnswer(t, "v3 avro refuses", call(t, "POST", records, "application/json", `{"value":{"type":"AVRO","data":{"nick":null}}}`), 422, `"error_code":422`, "missing required field")

	// confluent-kafka-python decodes what the proxy wrote.
	python := os.Getenv("REGISTRY_PYTHON")
	if python == "" {
		t.Skip("REGISTRY_PYTHON is not set (an interpreter with pip install 'confluent-kafka[avro,json,protobuf]')")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "testdata/httpproxy_confluent.py", tn.addr(), registryURL(tn), "rest-avro", "rest-jsonschema", "rest-from-python").CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("confluent-kafka-python: %v", err)
	}
	for _, want := range []string{`avro {"name": "ann", "nick": "a"}`, `avro {"name": "bob", "nick": null}`, `json {"n": 5, "tag": "x"}`, "ok read", "ok produced"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("python output lacks %q", want)
		}
	}
	fromPython := consumeThroughProxy(t, base, "rest-python-group", "rest-from-python", "avro", typeV2Avro, 1)
	if string(fromPython[0].Value) != `{"word":"python","count":7}` {
		t.Fatalf("record from python: %s", fromPython[0].Value)
	}
}
