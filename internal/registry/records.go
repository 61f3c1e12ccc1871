package registry

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Key types of _schemas records, as Confluent names them.
const (
	keySchema        = "SCHEMA"
	keyConfig        = "CONFIG"
	keyMode          = "MODE"
	keyDeleteSubject = "DELETE_SUBJECT"
	keyClearSubject  = "CLEAR_SUBJECT"
	keyNoop          = "NOOP"
)

// ErrBadRecord marks a _schemas record this registry cannot decode; replay
// skips it and counts it rather than stopping.
var ErrBadRecord = errors.New("registry: undecodable _schemas record")

// recordKey is the JSON key of every _schemas record. Subject is nil for the
// global CONFIG and MODE records.
type recordKey struct {
	KeyType string  `json:"keytype"`
	Subject *string `json:"subject,omitempty"`
	Version int     `json:"version,omitempty"`
	Magic   int     `json:"magic"`
}

// reference names a schema another schema imports.
type reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// schemaValue is the value of a SCHEMA record.
type schemaValue struct {
	Subject    string          `json:"subject"`
	Version    int             `json:"version"`
	ID         int             `json:"id"`
	SchemaType string          `json:"schemaType,omitempty"`
	References []reference     `json:"references,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	RuleSet    json.RawMessage `json:"ruleSet,omitempty"`
	Schema     string          `json:"schema"`
	Deleted    bool            `json:"deleted"`
}

// configValue is the value of a CONFIG record.
type configValue struct {
	CompatibilityLevel string `json:"compatibilityLevel"`
}

// modeValue is the value of a MODE record.
type modeValue struct {
	Mode string `json:"mode"`
}

// deleteSubjectValue is the value of DELETE_SUBJECT and CLEAR_SUBJECT
// records: every version up to Version is soft deleted (DELETE_SUBJECT) or
// removed (CLEAR_SUBJECT).
type deleteSubjectValue struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// decodedRecord is one decoded _schemas record. Value fields are set per
// key type; Tombstone is a null value (a hard delete of the key).
type decodedRecord struct {
	Key       recordKey
	Tombstone bool
	Schema    schemaValue
	Config    configValue
	Mode      modeValue
	Delete    deleteSubjectValue
}

// decodeRecord decodes a _schemas key and value. Unknown key types decode
// as NOOP, so a newer writer's records do not stop replay.
func decodeRecord(key, value []byte) (decodedRecord, error) {
	var record decodedRecord
	if err := json.Unmarshal(key, &record.Key); err != nil {
		return record, fmt.Errorf("%w: key: %v", ErrBadRecord, err)
	}
	if value == nil || string(value) == "null" {
		record.Tombstone = true
		return record, nil
	}
	var err error
	switch record.Key.KeyType {
	case keySchema:
		err = json.Unmarshal(value, &record.Schema)
		if err == nil && (record.Schema.ID <= 0 || record.Schema.Version <= 0 || record.Schema.Subject == "") {
			err = errors.New("schema record without subject, version or id")
		}
	case keyConfig:
		err = json.Unmarshal(value, &record.Config)
	case keyMode:
		err = json.Unmarshal(value, &record.Mode)
	case keyDeleteSubject, keyClearSubject:
		err = json.Unmarshal(value, &record.Delete)
	default:
		record.Key.KeyType = keyNoop
	}
	if err != nil {
		return record, fmt.Errorf("%w: %s value: %v", ErrBadRecord, record.Key.KeyType, err)
	}
	return record, nil
}

func encodeJSON(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs of strings and numbers are encoded
	}
	return out
}

func subjectKey(keyType, subject string) []byte {
	return encodeJSON(recordKey{KeyType: keyType, Subject: &subject})
}

func globalKey(keyType string) []byte {
	return encodeJSON(recordKey{KeyType: keyType})
}

func schemaKey(subject string, version int) []byte {
	return encodeJSON(recordKey{KeyType: keySchema, Subject: &subject, Version: version, Magic: 1})
}
