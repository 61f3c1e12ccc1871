package metadata

import (
	"reflect"
	"testing"
)

func TestACLRecordsApplyAndSnapshot(t *testing.T) {
	add := &AccessControlEntryRecord{ID: UUID{9}, ResourceType: 2, ResourceName: "orders", PatternType: 3,
		Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3}
	for _, r := range []Record{add, &RemoveAccessControlEntryRecord{ID: UUID{9}}} {
		b, err := Encode(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Fatalf("round trip of %T: got %+v, %v", r, got, err)
		}
	}
	base := EmptyImage().Apply(0, []Record{&ClusterRecord{ClusterID: "c"}})
	withACL := base.Apply(1, []Record{add})
	if base.ACLs().Len() != 0 || withACL.ACLs().Len() != 1 {
		t.Fatalf("ACL counts: base %d, after add %d", base.ACLs().Len(), withACL.ACLs().Len())
	}
	// An unrelated change shares the ACL set; an ACL change replaces it.
	unrelated := withACL.Apply(2, []Record{&NoOpRecord{}})
	if unrelated.ACLs() != withACL.ACLs() {
		t.Fatal("an unrelated record copied the ACL set")
	}
	snap, err := EncodeSnapshot(unrelated)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := DecodeSnapshot(snap, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := restored.ACLs().Get(UUID{9}); !ok || got != *add {
		t.Fatalf("snapshot lost the ACL: %+v %v", got, ok)
	}
	removed := unrelated.Apply(3, []Record{&RemoveAccessControlEntryRecord{ID: UUID{9}}})
	if removed.ACLs().Len() != 0 || unrelated.ACLs().Len() != 1 {
		t.Fatal("remove changed the older image or did not remove")
	}
}

// FuzzDecodeACLRecords decodes arbitrary bytes seeded with ACL records;
// whatever decodes must encode again and apply to an image without
// panicking, the ACL set holding only what was added.
func FuzzDecodeACLRecords(f *testing.F) {
	for _, r := range []Record{
		&AccessControlEntryRecord{ID: UUID{1}, ResourceType: 2, ResourceName: "t", PatternType: 4, Principal: "User:*", Host: "*", Operation: 2, PermissionType: 2},
		&AccessControlEntryRecord{ID: UUID{2}, ResourceType: 4, ResourceName: "kafka-cluster", PatternType: 3, Principal: "User:a", Host: "10.0.0.1", Operation: 9, PermissionType: 3},
		&RemoveAccessControlEntryRecord{ID: UUID{1}},
	} {
		b, _ := Encode(nil, r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(nil, r)
		if err != nil {
			t.Fatalf("decoded record does not encode: %v", err)
		}
		if _, err := Decode(again); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		img := EmptyImage().Apply(0, []Record{r})
		if _, added := r.(*AccessControlEntryRecord); !added && img.ACLs().Len() != 0 {
			t.Fatalf("%T added an ACL", r)
		}
	})
}
