// Package metadata holds the cluster's metadata as typed records and the
// in-memory image built by applying them in order.
//
// Every change to topics, partitions, configs, brokers and producer-id blocks
// is written as records to the metadata log (partition __cluster_metadata-0)
// and then applied to an immutable Image; brokers answer from the newest
// Image. On one node the log is local and durable; the Raft quorum puts
// consensus under the same records without changing this package.
//
// # Record encoding
//
// Each metadata record is the value of one record in a RecordBatch v2 of the
// metadata log (the key is null):
//
//	uvarint  record type (see RecordType)
//	uvarint  record version (see below)
//	bytes    the record's fields as a JSON object, to the end of the value
//
// JSON keeps the records readable with `samsa dump-log` and lets fields be
// added compatibly; a decoder refuses unknown types and versions it does not
// know, so a newer log is never half-understood.
//
// # Record versions
//
// Every type is at version 0 except these:
//
//	PartitionRecord, PartitionChangeRecord
//	  v0  the fields without reassignment state
//	  v1  adds "addingReplicas" and "removingReplicas" (KIP-455): the
//	      replicas a partition reassignment is adding and removing; the
//	      reassignment's target is replicas minus removingReplicas
//
// A record is written at the lowest version that holds it: a partition
// record with no reassignment in progress is still version 0, so a log in
// which no reassignment ever ran stays readable by a decoder that knows
// only version 0. A version 0 record carrying version 1 fields is corrupt.
//
// In a PartitionChangeRecord, "replicas" absent means unchanged; present,
// it replaces the replica set together with "addingReplicas" and
// "removingReplicas" (absent: none), so one record starts, completes or
// cancels a reassignment.
package metadata

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/samsa-streaming/samsa/internal/log"
)

// RecordType identifies a metadata record's schema. The numbers follow
// Kafka's metadata record api keys where Kafka has the same record.
type RecordType uint16

// Record types.
const (
	TypeRegisterBroker  RecordType = 0
	TypeTopic           RecordType = 2
	TypePartition       RecordType = 3
	TypeConfig          RecordType = 4
	TypePartitionChange RecordType = 5
	TypeRemoveTopic     RecordType = 9
	TypeFeatureLevel    RecordType = 12
	TypeProducerIDs     RecordType = 15
	TypeNoOp            RecordType = 23
	TypeCluster         RecordType = 1000 // Samsa: the cluster id, written once
)

// ErrCorrupt marks a metadata record that cannot be decoded.
var ErrCorrupt = errors.New("metadata: corrupt record")

// UUID is a Kafka UUID (topic id, directory id).
type UUID [16]byte

// String renders the UUID as Kafka does: URL-safe base64 without padding.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// IsZero reports whether u is the zero UUID.
func (u UUID) IsZero() bool { return u == UUID{} }

// RandomUUID is log.RandomUUID as a UUID: a random id as Kafka's
// Uuid.randomUuid draws one, never reserved and never printing with a
// leading "-".
func RandomUUID() UUID { return UUID(log.RandomUUID()) }

// MarshalText implements encoding.TextMarshaler.
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (u *UUID) UnmarshalText(b []byte) error {
	// Decode writes as many bytes as the text holds: check the length first.
	if base64.RawURLEncoding.DecodedLen(len(b)) != len(u) {
		return fmt.Errorf("%w: bad uuid %q", ErrCorrupt, b)
	}
	n, err := base64.RawURLEncoding.Decode(u[:], b)
	if err != nil || n != 16 {
		return fmt.Errorf("%w: bad uuid %q", ErrCorrupt, b)
	}
	return nil
}

// Record is one typed metadata record.
type Record interface {
	Type() RecordType
}

// Endpoint is a listener a broker advertises.
type Endpoint struct {
	Name string `json:"name"`
	Host string `json:"host"`
	Port int32  `json:"port"`
}

// RegisterBrokerRecord registers (or re-registers) a broker and its endpoints.
type RegisterBrokerRecord struct {
	BrokerID  int32      `json:"brokerId"`
	Endpoints []Endpoint `json:"endpoints"`
	Rack      *string    `json:"rack,omitempty"`
	Fenced    bool       `json:"fenced"`
}

// TopicRecord creates a topic.
type TopicRecord struct {
	Name    string `json:"name"`
	TopicID UUID   `json:"topicId"`
}

// PartitionRecord creates a partition (or replaces its whole state).
type PartitionRecord struct {
	TopicID        UUID    `json:"topicId"`
	Partition      int32   `json:"partitionId"`
	Replicas       []int32 `json:"replicas"`
	ISR            []int32 `json:"isr"`
	Leader         int32   `json:"leader"`
	LeaderEpoch    int32   `json:"leaderEpoch"`
	PartitionEpoch int32   `json:"partitionEpoch"`
	// AddingReplicas and RemovingReplicas (version 1) are the reassignment
	// in progress, if any.
	AddingReplicas   []int32 `json:"addingReplicas,omitempty"`
	RemovingReplicas []int32 `json:"removingReplicas,omitempty"`
}

// PartitionChangeRecord changes the leader, ISR or replicas of a partition.
// Nil fields are unchanged, except that a record setting Replicas also sets
// AddingReplicas and RemovingReplicas (nil: none).
type PartitionChangeRecord struct {
	TopicID   UUID    `json:"topicId"`
	Partition int32   `json:"partitionId"`
	Leader    *int32  `json:"leader,omitempty"`
	ISR       []int32 `json:"isr,omitempty"`
	Replicas  []int32 `json:"replicas,omitempty"`
	// AddingReplicas and RemovingReplicas (version 1) go with Replicas.
	AddingReplicas   []int32 `json:"addingReplicas,omitempty"`
	RemovingReplicas []int32 `json:"removingReplicas,omitempty"`
}

// Config resource types, as in DescribeConfigs.
const (
	ResourceTopic  int8 = 2
	ResourceBroker int8 = 4
	// ResourceGroup holds group configs (Kafka's GROUP, 32).
	ResourceGroup int8 = 32
)

// ConfigRecord sets (Value non-nil) or removes (Value nil) a dynamic config.
// ResourceName is a topic name, a broker id, or "" for the cluster-wide
// broker default.
type ConfigRecord struct {
	ResourceType int8    `json:"resourceType"`
	ResourceName string  `json:"resourceName"`
	Name         string  `json:"name"`
	Value        *string `json:"value"`
}

// RemoveTopicRecord deletes a topic and all its partitions and configs.
type RemoveTopicRecord struct {
	TopicID UUID `json:"topicId"`
}

// ProducerIDsRecord allocates the block of producer ids below NextProducerID
// to BrokerID.
type ProducerIDsRecord struct {
	BrokerID       int32 `json:"brokerId"`
	NextProducerID int64 `json:"nextProducerId"`
}

// NoOpRecord changes nothing. A new active controller commits one to learn
// that it has applied everything committed before it.
type NoOpRecord struct{}

// ClusterRecord names the cluster. It is the first record of a new log.
type ClusterRecord struct {
	ClusterID string `json:"clusterId"`
}

// Type implementations.
func (*RegisterBrokerRecord) Type() RecordType  { return TypeRegisterBroker }
func (*TopicRecord) Type() RecordType           { return TypeTopic }
func (*PartitionRecord) Type() RecordType       { return TypePartition }
func (*PartitionChangeRecord) Type() RecordType { return TypePartitionChange }
func (*ConfigRecord) Type() RecordType          { return TypeConfig }
func (*RemoveTopicRecord) Type() RecordType     { return TypeRemoveTopic }
func (*ProducerIDsRecord) Type() RecordType     { return TypeProducerIDs }
func (*NoOpRecord) Type() RecordType            { return TypeNoOp }
func (*ClusterRecord) Type() RecordType         { return TypeCluster }
func (*FeatureLevelRecord) Type() RecordType    { return TypeFeatureLevel }

// maxRecordVersion is the newest version of each record type this decoder
// knows; types not listed are at version 0.
var maxRecordVersion = map[RecordType]uint64{
	TypePartition:       1,
	TypePartitionChange: 1,
}

// recordVersion is the lowest version that holds r.
func recordVersion(r Record) uint64 {
	switch r := r.(type) {
	case *PartitionRecord:
		if len(r.AddingReplicas) > 0 || len(r.RemovingReplicas) > 0 {
			return 1
		}
	case *PartitionChangeRecord:
		if len(r.AddingReplicas) > 0 || len(r.RemovingReplicas) > 0 {
			return 1
		}
	}
	return 0
}

// Encode appends the encoding of r to dst.
func Encode(dst []byte, r Record) ([]byte, error) {
	if c, ok := r.(*PartitionChangeRecord); ok && len(c.Replicas) == 0 && (len(c.AddingReplicas) > 0 || len(c.RemovingReplicas) > 0) {
		return dst, fmt.Errorf("metadata: encode %T: adding or removing replicas without replicas", r)
	}
	body, err := json.Marshal(r)
	if err != nil {
		return dst, fmt.Errorf("metadata: encode %T: %w", r, err)
	}
	dst = binary.AppendUvarint(dst, uint64(r.Type()))
	dst = binary.AppendUvarint(dst, recordVersion(r))
	return append(dst, body...), nil
}

// Decode decodes one record value.
func Decode(b []byte) (Record, error) {
	typ, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, fmt.Errorf("%w: bad type varint", ErrCorrupt)
	}
	b = b[n:]
	version, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, fmt.Errorf("%w: bad version varint", ErrCorrupt)
	}
	b = b[n:]
	if version > maxRecordVersion[RecordType(typ)] {
		return nil, fmt.Errorf("%w: type %d version %d unknown", ErrCorrupt, typ, version)
	}
	var r Record
	switch RecordType(typ) {
	case TypeRegisterBroker:
		r = new(RegisterBrokerRecord)
	case TypeTopic:
		r = new(TopicRecord)
	case TypePartition:
		r = new(PartitionRecord)
	case TypePartitionChange:
		r = new(PartitionChangeRecord)
	case TypeConfig:
		r = new(ConfigRecord)
	case TypeRemoveTopic:
		r = new(RemoveTopicRecord)
	case TypeProducerIDs:
		r = new(ProducerIDsRecord)
	case TypeCluster:
		r = new(ClusterRecord)
	case TypeNoOp:
		r = new(NoOpRecord)
	case TypeFeatureLevel:
		r = new(FeatureLevelRecord)
	case TypeAccessControlEntry:
		r = new(AccessControlEntryRecord)
	case TypeRemoveAccessControlEntry:
		r = new(RemoveAccessControlEntryRecord)
	case TypeClientQuota:
		r = new(ClientQuotaRecord)
	default:
		if r = decodeScramRecord(RecordType(typ)); r == nil {
			r = decodeTokenRecord(RecordType(typ))
		}
		if r == nil {
			return nil, fmt.Errorf("%w: unknown type %d", ErrCorrupt, typ)
		}
	}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("%w: type %d: %v", ErrCorrupt, typ, err)
	}
	if recordVersion(r) > version {
		return nil, fmt.Errorf("%w: type %d version %d carries fields of version %d", ErrCorrupt, typ, version, recordVersion(r))
	}
	if c, ok := r.(*PartitionChangeRecord); ok && len(c.Replicas) == 0 && (len(c.AddingReplicas) > 0 || len(c.RemovingReplicas) > 0) {
		return nil, fmt.Errorf("%w: partition change with adding or removing replicas but no replicas", ErrCorrupt)
	}
	if q, ok := r.(*ClientQuotaRecord); ok {
		if err := checkClientQuota(q); err != nil {
			return nil, err
		}
	}
	return r, nil
}
