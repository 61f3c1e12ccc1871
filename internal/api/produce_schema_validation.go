package api

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/samsa-streaming/samsa/internal/record"
)

// Schema id validation (Confluent Server's confluent.key.schema.validation
// and confluent.value.schema.validation topic configs).
//
// Behavior:
//   - Every non-null key (value) of a batch for a topic with the config on
//     must start with the schema registry's wire header, a zero magic byte
//     and a 4-byte big-endian schema id, and the id must be registered
//     under the subject <topic>-key (<topic>-value), TopicNameStrategy.
//   - The first record that fails refuses the whole batch with
//     INVALID_RECORD and a message naming the record's offset delta and
//     why, as Confluent Server refuses it; nothing of the batch is
//     appended.
//   - A registry that cannot be asked (none configured, unreachable within
//     schemaCheckTimeout) refuses the batch too: validation never lets an
//     unchecked record through.

// SchemaIDChecker answers whether a schema id is registered under a
// subject.
type SchemaIDChecker interface {
	Registered(ctx context.Context, subject string, id int32) (bool, error)
}

// schemaCheckTimeout bounds the registry lookups of one batch.
const schemaCheckTimeout = 10 * time.Second

// errNoSchemaHeader is data without the magic byte and schema id.
var errNoSchemaHeader = errors.New("does not start with the schema registry magic byte 0 and a 4-byte schema id")

// schemaIDOf reads the schema id at the start of data.
func schemaIDOf(data []byte) (int32, error) {
	if len(data) < 5 || data[0] != 0 {
		return 0, errNoSchemaHeader
	}
	return int32(binary.BigEndian.Uint32(data[1:5])), nil
}

// checkSchemaIDs answers "" when every key and value validated is
// registered, else the refusal message.
func (b *Broker) checkSchemaIDs(topic string, batch []byte, keys, values bool) string {
	if b.SchemaIDs == nil {
		return "schema id validation is on for topic " + topic + " but no schema registry is configured (confluent.schema.registry.url)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), schemaCheckTimeout)
	defer cancel()
	// A batch usually carries one id many times: ask once per id.
	known := map[[2]any]bool{}
	check := func(subject, field string, offsetDelta int32, data []byte) error {
		if data == nil {
			return nil
		}
		id, err := schemaIDOf(data)
		if err != nil {
			return fmt.Errorf("record %d: the %s %w", offsetDelta, field, err)
		}
		registered, seen := known[[2]any{subject, id}]
		if !seen {
			if registered, err = b.SchemaIDs.Registered(ctx, subject, id); err != nil {
				return fmt.Errorf("record %d: looking up schema id %d of subject %s: %w", offsetDelta, id, subject, err)
			}
			known[[2]any{subject, id}] = registered
		}
		if !registered {
			return fmt.Errorf("record %d: the %s's schema id %d is not registered under subject %s", offsetDelta, field, id, subject)
		}
		return nil
	}
	err := record.Records(batch, 0, func(r record.Record) error {
		if keys {
			if err := check(topic+"-key", "key", r.OffsetDelta, r.Key); err != nil {
				return err
			}
		}
		if values {
			return check(topic+"-value", "value", r.OffsetDelta, r.Value)
		}
		return nil
	})
	if err != nil {
		return "Log record failed schema validation: " + err.Error()
	}
	return ""
}
