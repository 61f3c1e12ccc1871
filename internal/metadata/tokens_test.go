package metadata

import (
	"reflect"
	"testing"
)

// Token records encode and decode, apply without changing older images,
// and survive a snapshot (Records) round trip.
func TestDelegationTokenRecords(t *testing.T) {
	create := &DelegationTokenRecord{Owner: "User:alice", Requester: "User:admin", Renewers: []string{"User:bob"},
		IssueTimestamp: 1, MaxTimestamp: 100, ExpirationTimestamp: 10, TokenID: "id-1"}
	for _, r := range []Record{create, &RemoveDelegationTokenRecord{TokenID: "id-1"}} {
		b, err := Encode(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(b)
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Fatalf("round trip of %T: %+v, %v", r, back, err)
		}
	}
	first := EmptyImage().Apply(1, []Record{create, &DelegationTokenRecord{Owner: "User:carol", Requester: "User:carol", TokenID: "id-2", MaxTimestamp: 5, ExpirationTimestamp: 5}})
	second := first.Apply(2, []Record{&RemoveDelegationTokenRecord{TokenID: "id-2"}})
	if len(first.DelegationTokens()) != 2 || len(second.DelegationTokens()) != 1 {
		t.Fatalf("tokens: first %d, second %d", len(first.DelegationTokens()), len(second.DelegationTokens()))
	}
	token, ok := second.DelegationToken("id-1")
	if !ok || !token.OwnerOrRenewer("User:bob") || !token.OwnerOrRenewer("User:admin") || token.OwnerOrRenewer("User:carol") {
		t.Fatalf("token %+v", token)
	}
	rebuilt := EmptyImage().Apply(2, second.Records())
	if !reflect.DeepEqual(rebuilt.DelegationTokens(), second.DelegationTokens()) {
		t.Fatalf("snapshot round trip: %+v, want %+v", rebuilt.DelegationTokens(), second.DelegationTokens())
	}
}

// FuzzDecodeTokenRecords decodes arbitrary bytes seeded with token records;
// whatever decodes applies to an image and re-encodes.
func FuzzDecodeTokenRecords(f *testing.F) {
	for _, r := range []Record{
		&DelegationTokenRecord{Owner: "User:a", Requester: "User:b", Renewers: []string{"User:c"}, TokenID: "t", MaxTimestamp: 9},
		&RemoveDelegationTokenRecord{TokenID: "t"},
	} {
		b, _ := Encode(nil, r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		EmptyImage().Apply(1, []Record{r})
		if _, err := Encode(nil, r); err != nil {
			t.Fatalf("decoded record does not encode: %v", err)
		}
	})
}
