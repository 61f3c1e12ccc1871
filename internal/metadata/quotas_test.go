package metadata

import (
	"reflect"
	"testing"

	"github.com/samsa-streaming/samsa/internal/quota"
)

func quotaRecords() []Record {
	rate, percent, conns := 1048576.0, 50.0, 10.0
	return []Record{
		QuotaRecordOf(quota.Entity{User: quota.NamedPart("alice")}, quota.ProducerByteRate, &rate),
		QuotaRecordOf(quota.Entity{User: quota.NamedPart("alice"), ClientID: quota.DefaultPart}, quota.RequestPercentage, &percent),
		QuotaRecordOf(quota.Entity{ClientID: quota.DefaultPart}, quota.ConsumerByteRate, &rate),
		QuotaRecordOf(quota.Entity{IP: quota.NamedPart("10.0.0.1")}, quota.ConnectionCreationRate, &conns),
	}
}

func TestClientQuotaRecordsApply(t *testing.T) {
	img := EmptyImage().Apply(1, quotaRecords())
	q := img.ClientQuotas()
	if q.Len() != 4 {
		t.Fatalf("%d entities, want 4", q.Len())
	}
	bound, bucket, ok := q.Resolve(quota.ProducerByteRate, "alice", "app")
	if !ok || bound != 1048576 || bucket != (quota.Bucket{User: "alice"}) {
		t.Fatalf("resolve: %v %+v %v", bound, bucket, ok)
	}
	if v, ok := q.ResolveIP("10.0.0.1"); !ok || v != 10 {
		t.Fatalf("ip: %v %v", v, ok)
	}
	// Removing the last key of an entity drops the entity; the old image
	// keeps it.
	next := img.Apply(2, []Record{QuotaRecordOf(quota.Entity{User: quota.NamedPart("alice")}, quota.ProducerByteRate, nil)})
	if next.ClientQuotas().Len() != 3 || img.ClientQuotas().Len() != 4 {
		t.Fatalf("after removal: %d, old %d", next.ClientQuotas().Len(), img.ClientQuotas().Len())
	}
	// Snapshots carry the quotas.
	b, err := EncodeSnapshot(img)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSnapshot(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Records(), img.Records()) {
		t.Fatalf("snapshot differs:\n%+v\n%+v", back.Records(), img.Records())
	}
}

func TestClientQuotaRecordCorrupt(t *testing.T) {
	for _, body := range []string{
		`{"entity":[{"entityType":"group","entityName":"g"}],"key":"producer_byte_rate","value":1}`,
		`{"entity":[],"key":"producer_byte_rate","value":1}`,
		`{"entity":[{"entityType":"user","entityName":""}],"key":"producer_byte_rate","value":1}`,
		`{"entity":[{"entityType":"ip","entityName":"x"}],"key":"connection_creation_rate","value":1}`,
		`{"entity":[{"entityType":"user","entityName":"a"}],"key":"producer_byte_rate","value":-1}`,
		`{"entity":[{"entityType":"user","entityName":"a"}],"key":"","value":1}`,
		`{"entity":[{"entityType":"user","entityName":"a"}],"key":"producer_byte_rate","value":"x"}`,
	} {
		if _, err := Decode(append([]byte{byte(TypeClientQuota), 0}, body...)); err == nil {
			t.Errorf("decoded %s", body)
		}
	}
	good := `{"entity":[{"entityType":"user","entityName":null}],"key":"producer_byte_rate","value":0,"remove":true}`
	if _, err := Decode(append([]byte{byte(TypeClientQuota), 0}, good...)); err != nil {
		t.Errorf("removal of a default user's quota: %v", err)
	}
}

func FuzzDecodeClientQuota(f *testing.F) {
	for _, r := range quotaRecords() {
		b, _ := Encode(nil, r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		img := EmptyImage().Apply(1, []Record{r})
		again, err := EncodeSnapshot(img)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeSnapshot(again, 1); err != nil {
			t.Fatalf("re-encoded snapshot does not decode: %v", err)
		}
	})
}
