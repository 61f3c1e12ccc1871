package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

func framed(id int, payload string) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), payload...)
}

// TestSchemaIDValidation: with confluent.value.schema.validation (and
// later confluent.key.schema.validation) on, Produce accepts records whose
// value carries the id of a schema registered under <topic>-value, and
// refuses with INVALID_RECORD, as Confluent Server does, a value with no
// schema header, an unknown id, or an id registered only under another
// subject; nothing refused reaches the log. The REST proxy's schema
// formats pass, its binary format is refused.
func TestSchemaIDValidation(t *testing.T) {
	tn := startProxyNode(t)
	adm := tn.admin()
	ctx := testContext(t)
	on := "true"
	mustCreateTopic(t, adm, "validated", 1, map[string]*string{"confluent.value.schema.validation": &on})
	registry := registryClient(t, tn)
	own, err := registry.CreateSchema(ctx, "validated-value", sr.Schema{Schema: avroUserV1})
	if err != nil {
		t.Fatal(err)
	}
	other, err := registry.CreateSchema(ctx, "elsewhere-value", sr.Schema{Schema: `{"type":"record","name":"Other","fields":[{"name":"x","type":"int"}]}`})
	if err != nil {
		t.Fatal(err)
	}
	client := tn.client(kgo.RecordRetries(1))
	produce := func(key, value []byte) error {
		return client.ProduceSync(ctx, &kgo.Record{Topic: "validated", Key: key, Value: value}).FirstErr()
	}
	if err := produce([]byte("any key"), framed(own.ID, "\x06ann")); err != nil {
		t.Fatalf("registered id: %v", err)
	}
	if err := produce(nil, nil); err != nil {
		t.Fatalf("tombstone: %v", err)
	}
	for name, value := range map[string][]byte{
		"no header":            []byte("plain text"),
		"short":                {0, 0, 1},
		"wrong magic":          append([]byte{1}, framed(own.ID, "x")[1:]...),
		"unknown id":           framed(9999, "x"),
		"another subject's id": framed(other.ID, "x"),
	} {
		if err := produce(nil, value); !errors.Is(err, kerr.InvalidRecord) {
			t.Errorf("%s: %v, want INVALID_RECORD", name, err)
		}
	}
	// Key validation, switched on at runtime.
	altered, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "confluent.key.schema.validation", Value: &on}}, "validated")
	if err != nil || altered[0].Err != nil {
		t.Fatalf("alter: %v %v", err, altered)
	}
	eventually(t, 10*time.Second, "key validation applies", func() bool {
		return errors.Is(produce([]byte("plain key"), framed(own.ID, "\x06ann")), kerr.InvalidRecord)
	})
	keySchema, err := registry.CreateSchema(ctx, "validated-key", sr.Schema{Schema: `"string"`})
	if err != nil {
		t.Fatal(err)
	}
	if err := produce(framed(keySchema.ID, "\x02k"), framed(own.ID, "\x06ann")); err != nil {
		t.Fatalf("registered key and value: %v", err)
	}
	ends, err := adm.ListEndOffsets(ctx, "validated")
	if end, _ := ends.Lookup("validated", 0); err != nil || end.Offset != 3 {
		t.Fatalf("the log holds %d records, want the 3 accepted: %v", end.Offset, err)
	}

	// Through the REST proxy: Avro is framed and registered, so it passes;
	// binary is refused per record.
	base := proxyURL(tn)
	wantAnswer(t, "proxy avro", call(t, "POST", base+"/topics/validated", typeV2Avro,
		fmt.Sprintf(`{"key_schema":"\"string\"","value_schema":%q,"records":[{"key":"k","value":{"name":"zed"}}]}`, avroUserV1)), 200, `"offset":3`)
	refused := call(t, "POST", base+"/topics/validated", typeV2Binary, `{"records":[{"key":"AA==","value":"AA=="}]}`)
	if refused.status != 200 || !strings.Contains(refused.body, `"error_code":50002`) || !strings.Contains(refused.body, "INVALID_RECORD") {
		t.Fatalf("proxy binary: %d %s", refused.status, refused.body)
	}
}
