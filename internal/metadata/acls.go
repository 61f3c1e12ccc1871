package metadata

import (
	"bytes"
	"maps"
	"slices"
)

// AccessControlEntryRecord adds an ACL (Kafka's record type 6). The codes
// are Kafka's: resourceType (TOPIC 2, GROUP 3, CLUSTER 4, TRANSACTIONAL_ID
// 5, DELEGATION_TOKEN 6, USER 7), patternType (LITERAL 3, PREFIXED 4),
// operation (ALL 2 ... TWO_PHASE_COMMIT 15) and permissionType (DENY 2,
// ALLOW 3). Principal is "User:name"; Host an IP address or "*".
//
//	{"id":"<uuid>","resourceType":2,"resourceName":"orders","patternType":3,
//	 "principal":"User:alice","host":"*","operation":3,"permissionType":3}
type AccessControlEntryRecord struct {
	ID             UUID   `json:"id"`
	ResourceType   int8   `json:"resourceType"`
	ResourceName   string `json:"resourceName"`
	PatternType    int8   `json:"patternType"`
	Principal      string `json:"principal"`
	Host           string `json:"host"`
	Operation      int8   `json:"operation"`
	PermissionType int8   `json:"permissionType"`
}

// RemoveAccessControlEntryRecord removes the ACL with ID (Kafka's record
// type 7).
type RemoveAccessControlEntryRecord struct {
	ID UUID `json:"id"`
}

// Record types of ACLs, Kafka's numbers.
const (
	TypeAccessControlEntry       RecordType = 6
	TypeRemoveAccessControlEntry RecordType = 7
)

func (*AccessControlEntryRecord) Type() RecordType       { return TypeAccessControlEntry }
func (*RemoveAccessControlEntryRecord) Type() RecordType { return TypeRemoveAccessControlEntry }

// ACLSet is the image's ACLs by id. It is immutable once published; an
// image shares it with the image it was cloned from until an ACL record
// changes it, so comparing pointers tells whether the ACLs changed.
type ACLSet struct {
	byID map[UUID]AccessControlEntryRecord
}

var emptyACLs = &ACLSet{byID: map[UUID]AccessControlEntryRecord{}}

// Len is the number of ACLs.
func (s *ACLSet) Len() int { return len(s.byID) }

// Get returns the ACL with id.
func (s *ACLSet) Get(id UUID) (AccessControlEntryRecord, bool) {
	r, ok := s.byID[id]
	return r, ok
}

// All returns the ACLs ordered by id.
func (s *ACLSet) All() []AccessControlEntryRecord {
	out := slices.Collect(maps.Values(s.byID))
	slices.SortFunc(out, func(a, b AccessControlEntryRecord) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	return out
}

// ACLs is the image's ACL set (never nil).
func (img *Image) ACLs() *ACLSet {
	if img.acls == nil {
		return emptyACLs
	}
	return img.acls
}

// applyACL applies an ACL record, copying the set the first time this image
// changes it.
func (img *Image) applyACL(r Record) {
	if !img.aclsOwned {
		img.acls = &ACLSet{byID: maps.Clone(img.ACLs().byID)}
		img.aclsOwned = true
	}
	switch r := r.(type) {
	case *AccessControlEntryRecord:
		img.acls.byID[r.ID] = *r
	case *RemoveAccessControlEntryRecord:
		delete(img.acls.byID, r.ID)
	}
}

// aclRecords are the records that rebuild the ACLs, for a snapshot.
func (img *Image) aclRecords() []Record {
	var out []Record
	for _, r := range img.ACLs().All() {
		out = append(out, &r)
	}
	return out
}
