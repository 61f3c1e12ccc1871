// Package registry is a schema registry compatible with Confluent Schema
// Registry's REST API, stored in the _schemas topic in Confluent's own
// record formats, so Confluent's serializers, clients and scripts work
// against it unchanged and a Confluent registry could read the topic.
//
// # Storage
//
// _schemas has one partition and cleanup.policy=compact; the registry
// creates it at start if absent. Every key and value is a JSON object:
//
//	key                                                    value
//	{"keytype":"SCHEMA","subject":S,"version":V,"magic":1}  {"subject":S,"version":V,"id":ID,
//	                                                         "schemaType":T,   (absent for AVRO)
//	                                                         "references":[{"name":N,"subject":S2,"version":V2}],
//	                                                         "schema":TEXT,"deleted":false}
//	{"keytype":"CONFIG","subject":S|absent,"magic":0}       {"compatibilityLevel":"BACKWARD"}
//	{"keytype":"MODE","subject":S|absent,"magic":0}         {"mode":"READWRITE"}
//	{"keytype":"DELETE_SUBJECT","subject":S,"magic":0}      {"subject":S,"version":LATEST}
//	{"keytype":"CLEAR_SUBJECT","subject":S,"magic":0}       {"subject":S,"version":LATEST}
//	{"keytype":"NOOP","magic":0}                            (ignored)
//
// A soft delete of a version rewrites its SCHEMA value with "deleted":true;
// a soft delete of a subject writes DELETE_SUBJECT (every version up to
// LATEST is deleted); a hard delete writes a null value (tombstone) for
// each SCHEMA key, and for the subject's CONFIG and MODE keys. An absent
// subject in CONFIG or MODE is the global setting. Records this registry
// cannot decode are skipped and counted, never fatal.
//
// # State and writes
//
// The state (state.go) is built only by applying records in log order;
// it holds no clocks, locks or I/O. A write catches up to the end offset of
// _schemas-0, computes its records against that state under the lock,
// produces them with acks=all, and answers once the consumer has applied
// them, so every answer reflects the log. Ids are the largest id seen
// plus one; identical content (type, stored text and references) keeps one
// id across subjects; registering content a subject already has returns
// its id without writing.
//
// The registry talks to the node through an in-process franz-go client on
// the node's own inter-broker listener (inter.broker.listener.name, else
// security.inter.broker.protocol), with that listener's TLS and the
// inter-broker SASL credentials (sasl.mechanism.inter.broker.protocol and
// the listener's JAAS username and password), rather than through
// internal APIs, so it works on a node whose listeners all need SASL_SSL
// and acts as the inter-broker principal under the authorizer. The
// topic is then read and written exactly as any Kafka client would, with
// replication, acks and compaction applied by the broker, and the registry
// keeps no second path into the log.
//
// One writer for the cluster: every node's registry joins Confluent's
// writer election, the group schema-registry with protocol type "sr"
// (election.go; static membership per node.id, so a restarted node takes
// its place back at once). The group leader names the writer in every
// member's assignment; a node that is not the writer forwards writes to
// the writer's URL (50003 when it cannot) and, once the write succeeded,
// catches up before answering, so a client reads its own write from any
// node. Reads are served by every node from its own replay. Within the
// writer, a mutex serializes writes. The election is the group leader's
// choice, not the leader of _schemas-0: the writer needs the other nodes'
// URLs, which the group carries and the partition metadata does not.
//
// # Authorization
//
// With the node's authorizer on, every route is checked against ACLs on
// Samsa's SUBJECT and REGISTRY resource types (authorize.go has the table
// of routes and operations); a denied request gets HTTP 403 with
// error_code 40301, and listings leave out subjects the principal may not
// describe (or read, for /schemas).
//
// # Schema types
//
// AVRO is parsed and checked by github.com/hamba/avro/v2, whose
// SchemaCompatibility implements Avro's schema resolution rules; the
// stored form is the submitted JSON with insignificant whitespace removed.
// PROTOBUF text is compiled by github.com/bufbuild/protocompile (with
// google/protobuf and confluent/ imports built in); a base64
// FileDescriptorProto is accepted too. JSON schemas are compiled by
// github.com/santhosh-tekuri/jsonschema/v6 (draft 7 by default) with every
// URL not named by a reference refused. Protobuf and JSON Schema
// compatibility apply Confluent's change rules, named as Confluent names
// them (FIELD_KIND_CHANGED, PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL, ...).
package registry
