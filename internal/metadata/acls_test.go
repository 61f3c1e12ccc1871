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
