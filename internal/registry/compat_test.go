package registry

import (
	"testing"
)

// compatCase is one change kind: from old to new, and whether each level
// accepts it (checked against the one previous version).
type compatCase struct {
	name                    string
	schemaType              string
	old, updated            string
	backward, forward, full bool
}

func TestCompatibilityMatrix(t *testing.T) {
	const avroBase = `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`
	const jsonBase = `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`
	const jsonOpen = `{"type":"object","properties":{"a":{"type":"string"}}}`
	const protoBase = `syntax = "proto3"; package p; message M { int32 a = 1; string s = 2; }`
	cases := []compatCase{
		// Avro, by the specification's resolution rules.
		{"avro add field with default", typeAvro, avroBase, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"string","default":""}]}`, true, true, true},
		{"avro add field without default", typeAvro, avroBase, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"string"}]}`, false, true, false},
		{"avro remove field without default", typeAvro, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"string"}]}`, avroBase, true, false, false},
		{"avro promote int to long", typeAvro, avroBase, `{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}`, true, false, false},
		{"avro change int to string", typeAvro, avroBase, `{"type":"record","name":"R","fields":[{"name":"a","type":"string"}]}`, false, false, false},
		{"avro rename record", typeAvro, avroBase, `{"type":"record","name":"S","fields":[{"name":"a","type":"int"}]}`, false, false, false},
		{"avro add enum symbol", typeAvro, `{"type":"enum","name":"E","symbols":["A"]}`, `{"type":"enum","name":"E","symbols":["A","B"]}`, true, false, false},
		{"avro widen to union", typeAvro, avroBase, `{"type":"record","name":"R","fields":[{"name":"a","type":["null","int"]}]}`, true, false, false},

		// JSON Schema, by Confluent's change rules.
		{"json add property to closed model", typeJSON, jsonBase, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}},"additionalProperties":false}`, true, false, false},
		{"json add property to open model", typeJSON, jsonOpen, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}`, false, true, false},
		{"json remove property from open model", typeJSON, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}`, jsonOpen, true, false, false},
		{"json remove property from closed model", typeJSON, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}},"additionalProperties":false}`, jsonBase, false, true, false},
		{"json add required", typeJSON, jsonBase, `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, false, true, false},
		{"json change type", typeJSON, jsonBase, `{"type":"object","properties":{"a":{"type":"boolean"}},"additionalProperties":false}`, false, false, false},
		{"json extend integer to number", typeJSON, `{"type":"integer"}`, `{"type":"number"}`, true, false, false},
		{"json add maxLength", typeJSON, `{"type":"string"}`, `{"type":"string","maxLength":5}`, false, true, false},
		{"json increase maxLength", typeJSON, `{"type":"string","maxLength":5}`, `{"type":"string","maxLength":9}`, true, false, false},
		{"json extend enum", typeJSON, `{"enum":["a"]}`, `{"enum":["a","b"]}`, true, false, false},
		{"json open a closed model", typeJSON, jsonBase, jsonOpen, true, false, false},

		// Protobuf, by Confluent's change rules; a forward check applies them to
		// the reverse change, so adding a message is not forward compatible.
		{"protobuf add field", typeProtobuf, protoBase, `syntax = "proto3"; package p; message M { int32 a = 1; string s = 2; bool b = 3; }`, true, true, true},
		{"protobuf remove field", typeProtobuf, protoBase, `syntax = "proto3"; package p; message M { int32 a = 1; }`, true, true, true},
		{"protobuf rename field", typeProtobuf, protoBase, `syntax = "proto3"; package p; message M { int32 renamed = 1; string s = 2; }`, true, true, true},
		{"protobuf int32 to int64", typeProtobuf, protoBase, `syntax = "proto3"; package p; message M { int64 a = 1; string s = 2; }`, true, true, true},
		{"protobuf string to bytes", typeProtobuf, protoBase, `syntax = "proto3"; package p; message M { int32 a = 1; bytes s = 2; }`, true, true, true},
		{"protobuf int32 to string", typeProtobuf, protoBase, `syntax = "proto3"; package p; message M { string a = 1; string s = 2; }`, false, false, false},
		{"protobuf int32 to sint32", typeProtobuf, protoBase, `syntax = "proto3"; package p; message M { sint32 a = 1; string s = 2; }`, false, false, false},
		{"protobuf remove message", typeProtobuf, `syntax = "proto3"; package p; message M { int32 a = 1; } message N { int32 b = 1; }`, `syntax = "proto3"; package p; message M { int32 a = 1; }`, false, true, false},
		{"protobuf add message", typeProtobuf, `syntax = "proto3"; package p; message M { int32 a = 1; }`, `syntax = "proto3"; package p; message M { int32 a = 1; } message N { int32 b = 1; }`, true, false, false},
		{"protobuf change package", typeProtobuf, protoBase, `syntax = "proto3"; package q; message M { int32 a = 1; string s = 2; }`, false, false, false},
		{"protobuf move one field into a new oneof", typeProtobuf, protoBase, `syntax = "proto3"; package p; message M { oneof o { int32 a = 1; } string s = 2; }`, true, false, false},
		{"protobuf move two fields into a new oneof", typeProtobuf, protoBase, `syntax = "proto3"; package p; message M { oneof o { int32 a = 1; string s = 2; } }`, false, false, false},
		{"protobuf remove oneof", typeProtobuf, `syntax = "proto3"; package p; message M { oneof o { int32 a = 1; } }`, `syntax = "proto3"; package p; message M { int32 a = 1; }`, false, true, false},
		{"protobuf repeated numeric", typeProtobuf, protoBase, `syntax = "proto3"; package p; message M { repeated int32 a = 1; string s = 2; }`, false, false, false},
		{"protobuf repeated string", typeProtobuf, protoBase, `syntax = "proto3"; package p; message M { int32 a = 1; repeated string s = 2; }`, true, true, true},
		{"protobuf add proto2 required", typeProtobuf, `syntax = "proto2"; package p; message M { optional int32 a = 1; }`, `syntax = "proto2"; package p; message M { optional int32 a = 1; required int32 b = 2; }`, false, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, err := parseSchema(c.schemaType, c.old, nil)
			if err != nil {
				t.Fatalf("old: %v", err)
			}
			updated, err := parseSchema(c.schemaType, c.updated, nil)
			if err != nil {
				t.Fatalf("new: %v", err)
			}
			for _, level := range []struct {
				name string
				want bool
			}{{"BACKWARD", c.backward}, {"FORWARD", c.forward}, {"FULL", c.full}, {"NONE", true}} {
				issues := checkCompatibility(level.name, updated, []parsedSchema{old})
				if got := len(issues) == 0; got != level.want {
					t.Errorf("%s: compatible=%v, want %v (issues %v)", level.name, got, level.want, issues)
				}
			}
		})
	}
}

// TestCompatibilityTransitive checks that transitive levels compare with
// every previous version and the others with the latest only.
func TestCompatibilityTransitive(t *testing.T) {
	v1, _ := parseSchema(typeAvro, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`, nil)
	v2, _ := parseSchema(typeAvro, `{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":0}]}`, nil)
	// v3 drops a's default and a; a reader of v3 reads v2 data but v1 data
	// lacks b, which has no default.
	v3, _ := parseSchema(typeAvro, `{"type":"record","name":"R","fields":[{"name":"b","type":"int","default":1},{"name":"c","type":"int"}]}`, nil)
	v3ok, _ := parseSchema(typeAvro, `{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":0},{"name":"b","type":"int","default":1}]}`, nil)
	if issues := checkCompatibility("BACKWARD", v3ok, []parsedSchema{v1, v2}); len(issues) > 0 {
		t.Fatalf("backward: %v", issues)
	}
	if issues := checkCompatibility("BACKWARD_TRANSITIVE", v3, []parsedSchema{v1, v2}); len(issues) == 0 {
		t.Fatal("backward transitive accepted a field without default")
	}
}
