package api

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/samsa-streaming/samsa/internal/record"
)

// registeredIDs is a checker knowing one id per subject.
type registeredIDs map[string]int32

func (r registeredIDs) Registered(_ context.Context, subject string, id int32) (bool, error) {
	known, ok := r[subject]
	return ok && known == id, nil
}

func schemaFramed(id int32, payload string) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), payload...)
}

// FuzzSchemaIDValidation builds a batch from fuzzed keys and values (in
// every codec) and checks the validator answers without panicking, and
// accepts exactly the batches whose key and value carry the registered
// ids.
func FuzzSchemaIDValidation(f *testing.F) {
	f.Add(schemaFramed(7, "v"), schemaFramed(3, "k"), int8(0))
	f.Add([]byte("plain"), []byte(nil), int8(1))
	f.Add([]byte{0, 0, 0}, []byte{0}, int8(4))
	b := &Broker{SchemaIDs: registeredIDs{"t-value": 7, "t-key": 3}}
	f.Fuzz(func(t *testing.T, value, key []byte, codec int8) {
		opts := record.DefaultBuildOptions()
		opts.Compression = int8(uint8(codec) % 5)
		batch, err := record.Build(opts, []record.Record{{Key: key, Value: value}})
		if err != nil {
			t.Skip()
		}
		message := b.checkSchemaIDs("t", batch, true, true)
		keyOK := key == nil || (len(key) >= 5 && key[0] == 0 && binary.BigEndian.Uint32(key[1:5]) == 3)
		valueOK := value == nil || (len(value) >= 5 && value[0] == 0 && binary.BigEndian.Uint32(value[1:5]) == 7)
		if (message == "") != (keyOK && valueOK) {
			t.Fatalf("key %x value %x: %q", key, value, message)
		}
		if message != "" && !strings.HasPrefix(message, "Log record failed schema validation") {
			t.Fatalf("message %q", message)
		}
	})
}
