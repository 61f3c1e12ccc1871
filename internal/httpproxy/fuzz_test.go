package httpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// fuzzRequest is a request over a session with no registry and no
// connected clients: decoders run, nothing reaches Kafka.
func fuzzRequest(method, body string) *request {
	r, _ := http.NewRequest(method, "http://proxy/", strings.NewReader(body))
	return &request{Request: r, session: &session{schemas: newSchemaCache(nil)}, ctx: context.Background()}
}

// wantAPIError fails unless err is nil or one of Confluent's answers.
func wantAPIError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var api *apiError
	if !errors.As(err, &api) || api.status < 400 || api.status > 599 || api.message == "" {
		t.Fatalf("not an API error: %v", err)
	}
}

// FuzzProduceV2Body decodes v2 produce bodies and their binary and JSON
// records, and the schema fields of the schema formats.
func FuzzProduceV2Body(f *testing.F) {
	f.Add(`{"records":[{"key":"a2V5","value":"dmFsdWU=","partition":1}]}`)
	f.Add(`{"records":[{"value":{"a":[1,2,{"b":null}]}}]}`)
	f.Add(`{"value_schema":"\"string\"","value_schema_id":3,"records":[{"value":"x"}]}`)
	f.Add(`{"records":[{"value":"not base64"}]}`)
	f.Add(`{"records":`)
	f.Fuzz(func(t *testing.T, body string) {
		r := fuzzRequest("POST", body)
		var decoded produceRequestV2
		if err := readBody(r, &decoded, false); err != nil {
			wantAPIError(t, err)
			return
		}
		for _, record := range decoded.Records {
			for _, format := range []format{formatBinary, formatJSON} {
				_, err := encodeV2Data(format, nil, record.Value)
				wantAPIError(t, err)
			}
		}
		_, err := resolveSchemaV2(r, "t-value", schemaTypeAvro, decoded.ValueSchema, decoded.ValueSchemaID, errValueSchemaMissing)
		wantAPIError(t, err)
	})
}

// FuzzProduceV3Body decodes v3 record bodies and every data type.
func FuzzProduceV3Body(f *testing.F) {
	f.Add(`{"partition_id":0,"headers":[{"name":"h","value":"aGk="}],"key":{"type":"STRING","data":"k"},"value":{"type":"JSON","data":{"a":1}}}`)
	f.Add(`{"value":{"type":"BINARY","data":"AAE="},"timestamp":"2024-01-02T03:04:05Z"}`)
	f.Add(`{"value":{"type":"AVRO","schema_id":1,"data":{}}}`)
	f.Add(`{"value":{"schema":"{}","subject":"s","data":1}}`)
	f.Add(`{"value":{"type":"XML"}}`)
	f.Fuzz(func(t *testing.T, body string) {
		r := fuzzRequest("POST", "")
		var decoded produceRequestV3
		if err := decodeStrict([]byte(body), &decoded); err != nil {
			wantAPIError(t, err)
			return
		}
		for _, header := range decoded.Headers {
			_, _ = decodeBinary(header.Value)
		}
		for _, data := range []*produceDataV3{decoded.Key, decoded.Value} {
			_, _, err := encodeV3Data(r, "t-value", data)
			wantAPIError(t, err)
		}
	})
}

// FuzzConsumerBodies decodes the consumer routes' bodies: create,
// offsets, partitions.
func FuzzConsumerBodies(f *testing.F) {
	f.Add(`{"name":"c","format":"avro","auto.offset.reset":"earliest","auto.commit.enable":"false","fetch.min.bytes":"1","consumer.request.timeout.ms":"100"}`)
	f.Add(`{"offsets":[{"topic":"t","partition":0,"offset":3,"metadata":"m"}]}`)
	f.Add(`{"partitions":[{"topic":"t","partition":1}]}`)
	f.Add(`{"format":"xml"}`)
	f.Add(``)
	p := &Proxy{config: Config{RequestTimeoutMs: 30000, ConsumerRequestTimeoutMs: 1000}}
	f.Fuzz(func(t *testing.T, body string) {
		var create createConsumerRequest
		if err := readBody(fuzzRequest("POST", body), &create, true); err == nil {
			settings, name, err := p.consumerSettingsOf(create)
			wantAPIError(t, err)
			if err == nil && (name == "" || settings.format == "" || settings.requestTimeoutMs > 30000) {
				t.Fatalf("settings %+v name %q", settings, name)
			}
		} else {
			wantAPIError(t, err)
		}
		_, err := readOffsets(fuzzRequest("POST", body), true)
		wantAPIError(t, err)
		_, err = readPartitions(fuzzRequest("POST", body), false)
		wantAPIError(t, err)
	})
}

// FuzzACLQuery parses v3 ACL filters from query strings and bindings from
// bodies.
func FuzzACLQuery(f *testing.F) {
	f.Add("resource_type=TOPIC&resource_name=t&pattern_type=LITERAL&principal=User:a&host=*&operation=READ&permission=ALLOW")
	f.Add("resource_type=ANY&operation=describe_configs")
	f.Add("pattern_type=%zz")
	f.Fuzz(func(t *testing.T, query string) {
		values, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		_, err = parseACL(aclFromQuery(values), true)
		wantAPIError(t, err)
		binding, err := parseACL(aclFromQuery(values), false)
		wantAPIError(t, err)
		if err == nil && (binding.name == nil || binding.principal == nil || binding.host == nil) {
			t.Fatalf("a binding without a name, principal or host: %+v", binding)
		}
	})
}

// FuzzMediaTypes parses Content-Type and Accept headers.
func FuzzMediaTypes(f *testing.F) {
	f.Add("application/vnd.kafka.avro.v2+json")
	f.Add("application/vnd.kafka.binary.v2+json; charset=utf-8, application/json;q=0.5")
	f.Add("*/*")
	f.Fuzz(func(t *testing.T, header string) {
		if f, ok := formatOfMediaType(header); ok && !strings.Contains(f.contentType(), string(f)) {
			t.Fatalf("format %q", f)
		}
		_, _ = acceptedFormat(header)
		_ = acceptable(header, contentTypeV2)
	})
}

// FuzzSchemaPayloads decodes record bytes under Avro, JSON Schema and
// Protobuf schemas, as a consumer instance does, and encodes JSON under
// them, as produce does.
func FuzzSchemaPayloads(f *testing.F) {
	avroSchema, err := parseAvro(`{"type":"record","name":"R","fields":[{"name":"a","type":["null","string"]},{"name":"b","type":{"type":"array","items":"long"}}]}`, nil)
	if err != nil {
		f.Fatal(err)
	}
	jsonSchema, err := parseJSONSchema(`{"type":"object","properties":{"a":{"type":"string"}}}`, nil)
	if err != nil {
		f.Fatal(err)
	}
	message, err := parseProtobuf(`syntax = "proto3"; message M { string a = 1; repeated int64 b = 2; message N { bool c = 1; } }`, nil)
	if err != nil {
		f.Fatal(err)
	}
	schemas := []*parsedSchema{
		{id: 1, schemaType: schemaTypeAvro, avro: avroSchema},
		{id: 2, schemaType: schemaTypeJSON, jsonSchema: jsonSchema},
		{id: 3, schemaType: schemaTypeProtobuf, message: message},
	}
	f.Add([]byte{0, 0, 0, 0, 1, 2, 2, 'h', 'i', 2, 4, 0}, `{"a":{"string":"hi"},"b":[1,2]}`)
	f.Add([]byte{0, 0, 0, 0, 3, 0, 0x0a, 1, 'x'}, `{"a":"x","b":["1"]}`)
	f.Add([]byte{0, 0, 0, 0, 3, 4, 0, 2, 0x08, 1}, `{}`)
	f.Add([]byte{1, 2}, `[`)
	f.Fuzz(func(t *testing.T, data []byte, value string) {
		id, payload, err := schemaID(data)
		for _, schema := range schemas {
			if err == nil {
				if decoded, err := schema.decode(payload); err == nil && !json.Valid(decoded) {
					t.Fatalf("schema %d decoded %x to invalid JSON %q", id, payload, decoded)
				}
			}
			if !json.Valid([]byte(value)) {
				continue
			}
			encoded, err := schema.encode(json.RawMessage(value))
			wantAPIError(t, err)
			if err == nil {
				gotID, rest, err := schemaID(encoded)
				if err != nil || gotID != schema.id {
					t.Fatalf("encoded %x: id %d %v", encoded, gotID, err)
				}
				if _, err := schema.decode(rest); err != nil {
					t.Fatalf("schema %d: %s encoded to %x which does not decode: %v", schema.id, value, encoded, err)
				}
			}
		}
	})
}
