package metadata

import (
	"maps"
	"sort"
)

// SCRAM credentials (KIP-554). A UserScramCredentialRecord sets one user's
// credential for one mechanism (Kafka's ScramMechanism code: 1
// SCRAM-SHA-256, 2 SCRAM-SHA-512); a RemoveUserScramCredentialRecord
// deletes it. The record holds the salt, the stored key, the server key and
// the iteration count, never the password (or the salted password).
//
//	UserScramCredentialRecord (type 11, version 0)
//	  {"name": "alice", "mechanism": 2, "salt": "<base64>",
//	   "storedKey": "<base64>", "serverKey": "<base64>", "iterations": 8192}
//	RemoveUserScramCredentialRecord (type 22, version 0)
//	  {"name": "alice", "mechanism": 2}

// Record types of SCRAM credentials, Kafka's numbers.
const (
	TypeUserScramCredential       RecordType = 11
	TypeRemoveUserScramCredential RecordType = 22
)

// UserScramCredentialRecord sets a user's credential for a mechanism.
type UserScramCredentialRecord struct {
	Name       string `json:"name"`
	Mechanism  int8   `json:"mechanism"`
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"storedKey"`
	ServerKey  []byte `json:"serverKey"`
	Iterations int32  `json:"iterations"`
}

// RemoveUserScramCredentialRecord deletes a user's credential for a
// mechanism.
type RemoveUserScramCredentialRecord struct {
	Name      string `json:"name"`
	Mechanism int8   `json:"mechanism"`
}

// Type implementations.
func (*UserScramCredentialRecord) Type() RecordType       { return TypeUserScramCredential }
func (*RemoveUserScramCredentialRecord) Type() RecordType { return TypeRemoveUserScramCredential }

// ScramKey names one stored credential.
type ScramKey struct {
	User      string
	Mechanism int8
}

// ScramCredential is a stored SCRAM credential.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// ScramCredential returns the credential of user for mechanism.
func (img *Image) ScramCredential(user string, mechanism int8) (ScramCredential, bool) {
	c, ok := img.scram[ScramKey{user, mechanism}]
	return c, ok
}

// ScramUsers returns every stored credential's key, sorted by user, then
// mechanism.
func (img *Image) ScramUsers() []ScramKey {
	keys := make([]ScramKey, 0, len(img.scram))
	for k := range img.scram {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].User != keys[j].User {
			return keys[i].User < keys[j].User
		}
		return keys[i].Mechanism < keys[j].Mechanism
	})
	return keys
}

// applyScram applies a SCRAM record to a freshly cloned image; false for
// other records.
func (img *Image) applyScram(r Record) bool {
	switch r := r.(type) {
	case *UserScramCredentialRecord:
		img.scram = maps.Clone(img.scram)
		if img.scram == nil {
			img.scram = map[ScramKey]ScramCredential{}
		}
		img.scram[ScramKey{r.Name, r.Mechanism}] = ScramCredential{Salt: r.Salt, StoredKey: r.StoredKey, ServerKey: r.ServerKey, Iterations: r.Iterations}
	case *RemoveUserScramCredentialRecord:
		img.scram = maps.Clone(img.scram)
		delete(img.scram, ScramKey{r.Name, r.Mechanism})
	default:
		return false
	}
	return true
}

// scramRecords rebuild the credentials in a snapshot.
func (img *Image) scramRecords() []Record {
	var recs []Record
	for _, k := range img.ScramUsers() {
		c := img.scram[k]
		recs = append(recs, &UserScramCredentialRecord{Name: k.User, Mechanism: k.Mechanism, Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations})
	}
	return recs
}

// decodeScramRecord returns an empty record of a SCRAM type, or nil.
func decodeScramRecord(t RecordType) Record {
	switch t {
	case TypeUserScramCredential:
		return new(UserScramCredentialRecord)
	case TypeRemoveUserScramCredential:
		return new(RemoveUserScramCredentialRecord)
	}
	return nil
}
