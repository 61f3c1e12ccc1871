package registry

import (
	"encoding/json"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzDecodeRecord feeds arbitrary _schemas keys and values to the decoder
// and the state: nothing may panic, and the state's invariants hold.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}`), []byte(`{"subject":"s","version":1,"id":1,"schema":"\"string\"","deleted":false}`))
	f.Add([]byte(`{"keytype":"CONFIG","magic":0}`), []byte(`{"compatibilityLevel":"FULL"}`))
	f.Add([]byte(`{"keytype":"MODE","subject":"s","magic":0}`), []byte(`{"mode":"IMPORT"}`))
	f.Add([]byte(`{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}`), []byte(`{"subject":"s","version":3}`))
	f.Add([]byte(`{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}`), []byte(nil))
	f.Add([]byte(`{"keytype":"NOOP","magic":0}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		s := newState()
		record, err := decodeRecord(key, value)
		if err != nil {
			return
		}
		s.apply(record)
		s.apply(record)
		for _, sub := range s.subjects {
			for _, v := range sub.versions {
				if s.schemas[v.ID] == nil {
					t.Fatalf("version %+v without its schema", v)
				}
				if v.ID > s.maxID {
					t.Fatalf("id %d above maxID %d", v.ID, s.maxID)
				}
			}
		}
		s.subjectNames(true, false, "")
		s.referencedBy("s", 1)
	})
}

// FuzzParseSchema feeds arbitrary text to each schema type's parser and,
// when it parses, to the compatibility rules against itself.
func FuzzParseSchema(f *testing.F) {
	f.Add(typeAvro, `{"type":"record","name":"R","fields":[{"name":"a","type":["null","int"],"default":null}]}`)
	f.Add(typeAvro, `"string"`)
	f.Add(typeJSON, `{"type":"object","properties":{"a":{"type":"string","maxLength":3}},"required":["a"]}`)
	f.Add(typeJSON, `{"$ref":"#/definitions/x","definitions":{"x":{"type":"integer"}}}`)
	f.Add(typeProtobuf, `syntax = "proto3"; package p; import "google/protobuf/timestamp.proto"; message M { google.protobuf.Timestamp t = 1; oneof o { int32 a = 2; } map<string,int32> m = 3; }`)
	f.Add(typeProtobuf, `CgZhLnByb3RvIgMKAU0=`)
	f.Fuzz(func(t *testing.T, schemaType, text string) {
		if len(text) > 1<<16 {
			return
		}
		parsed, err := parseSchema(schemaType, text, nil)
		if err != nil {
			return
		}
		if issues := checkCompatibility("FULL_TRANSITIVE", parsed, []parsedSchema{parsed}); len(issues) > 0 {
			t.Fatalf("a schema is not compatible with itself: %v", issues)
		}
		if _, err := parseSchema(schemaType, parsed.canonical(), nil); err != nil {
			t.Fatalf("the canonical form does not parse: %v", err)
		}
	})
}

// FuzzElectionAssign feeds arbitrary member metadata, as JoinGroup
// delivers it from other members, to the writer choice and decodes the
// assignment every member would receive.
func FuzzElectionAssign(f *testing.F) {
	f.Add([]byte(`{"version":1,"host":"h","port":8081,"scheme":"http","master_eligibility":true}`), []byte(`{"master_eligibility":false}`))
	f.Add([]byte(`null`), []byte(`{`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		members := []kmsg.JoinGroupResponseMember{{MemberID: "b", ProtocolMetadata: first}, {MemberID: "a", ProtocolMetadata: second}}
		out := assign(members)
		if len(out) != 2 {
			t.Fatalf("%d assignments for 2 members", len(out))
		}
		var got assignment
		if err := json.Unmarshal(out[0].MemberAssignment, &got); err != nil {
			t.Fatalf("assignment does not decode: %v", err)
		}
		if got.Error == assignmentErrorNone && (got.MasterIdentity == nil || (got.Master != "a" && got.Master != "b")) {
			t.Fatalf("bad assignment %+v", got)
		}
	})
}
