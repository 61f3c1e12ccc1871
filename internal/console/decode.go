package console

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
)

// renderedBytesMax bounds the text shown for one key, value or header.
const renderedBytesMax = 16 << 10

// schemaCacheMax bounds the schemas the decoder keeps.
const schemaCacheMax = 1024

// rendered is a key, value or header shown on a page.
type rendered struct {
	Text      string
	Kind      string // "null", "text", "json", "hex", "avro", "json-schema", "protobuf"
	SchemaID  int
	Truncated bool
	Size      int
}

// decoder renders bytes, through the schema registry when there is one.
type decoder struct {
	registry *sr.Client
	mu       struct {
		sync.Mutex
		schemas map[int]decodedSchema
	}
}

type decodedSchema struct {
	kind string
	avro avro.Schema
	err  error
}

// newDecoder decodes through the registry at registryURL, logging in
// with user and password when user is set.
func newDecoder(registryURL, user, password string) *decoder {
	d := &decoder{}
	d.mu.schemas = map[int]decodedSchema{}
	if registryURL != "" {
		opts := []sr.ClientOpt{sr.URLs(registryURL)}
		if user != "" {
			opts = append(opts, sr.BasicAuth(user, password))
		}
		d.registry, _ = sr.NewClient(opts...)
	}
	return d
}

// render shows b in format (auto, text, json, hex). In auto, bytes framed
// for the schema registry (magic 0, 4-byte schema id) are decoded through
// it, JSON is pretty-printed, other UTF-8 is text, the rest hex.
func (d *decoder) render(ctx context.Context, b []byte, format string) rendered {
	if b == nil {
		return rendered{Kind: "null", Text: "null"}
	}
	out := rendered{Size: len(b)}
	switch format {
	case "hex":
		out.Kind, out.Text = "hex", hexText(b)
	case "text":
		out.Kind, out.Text = "text", toText(b)
	case "json":
		if pretty, ok := prettyJSON(b); ok {
			out.Kind, out.Text = "json", pretty
		} else {
			out.Kind, out.Text = "text", toText(b)
		}
	default:
		if decoded, ok := d.decodeRegistry(ctx, b); ok {
			return decoded
		}
		if pretty, ok := prettyJSON(b); ok {
			out.Kind, out.Text = "json", pretty
		} else if utf8.Valid(b) {
			out.Kind, out.Text = "text", string(b)
		} else {
			out.Kind, out.Text = "hex", hexText(b)
		}
	}
	return truncate(out)
}

func truncate(out rendered) rendered {
	if len(out.Text) > renderedBytesMax {
		cut := renderedBytesMax
		for cut > 0 && !utf8.RuneStart(out.Text[cut]) {
			cut--
		}
		out.Text, out.Truncated = out.Text[:cut], true
	}
	return out
}

func prettyJSON(b []byte) (string, bool) {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') || !json.Valid(trimmed) {
		return "", false
	}
	var out bytes.Buffer
	if json.Indent(&out, trimmed, "", "  ") != nil {
		return "", false
	}
	return out.String(), true
}

func hexText(b []byte) string {
	if len(b) > renderedBytesMax/3 {
		b = b[:renderedBytesMax/3]
	}
	return hex.Dump(b)
}

// decodeRegistry decodes Confluent's wire format: byte 0 is 0, bytes 1-4
// the schema id (big-endian), then the payload (Avro binary, JSON, or
// Protobuf message indexes and message).
func (d *decoder) decodeRegistry(ctx context.Context, b []byte) (rendered, bool) {
	if d.registry == nil || len(b) < 5 || b[0] != 0 {
		return rendered{}, false
	}
	id := int(binary.BigEndian.Uint32(b[1:5]))
	schema := d.schema(ctx, id)
	if schema.err != nil {
		return rendered{}, false
	}
	out := rendered{Kind: schema.kind, SchemaID: id, Size: len(b)}
	payload := b[5:]
	switch schema.kind {
	case "avro":
		var value any
		if err := avro.Unmarshal(schema.avro, payload, &value); err != nil {
			return rendered{}, false
		}
		text, err := json.MarshalIndent(value, "", "  ")
		if err != nil {
			return rendered{}, false
		}
		out.Text = string(text)
	case "json-schema":
		pretty, ok := prettyJSON(payload)
		if !ok {
			return rendered{}, false
		}
		out.Text = pretty
	default:
		out.Text = hexText(payload)
	}
	return truncate(out), true
}

func (d *decoder) schema(ctx context.Context, id int) decodedSchema {
	d.mu.Lock()
	cached, ok := d.mu.schemas[id]
	d.mu.Unlock()
	if ok {
		return cached
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var decoded decodedSchema
	schema, err := d.registry.SchemaByID(ctx, id)
	switch {
	case err != nil:
		var responseError *sr.ResponseError
		if !errors.As(err, &responseError) || responseError.StatusCode != 404 {
			// Not cached: the registry may be starting or unreachable.
			return decodedSchema{err: err}
		}
		// No such schema: these bytes only look framed. Remember that, so
		// a page of them asks the registry once.
		decoded.err = err
	case schema.Type == sr.TypeAvro:
		decoded.kind = "avro"
		decoded.avro, decoded.err = avro.Parse(schema.Schema)
	case schema.Type == sr.TypeJSON:
		decoded.kind = "json-schema"
	case schema.Type == sr.TypeProtobuf:
		decoded.kind = "protobuf"
	default:
		decoded.err = fmt.Errorf("schema %d: unknown type %v", id, schema.Type)
	}
	d.mu.Lock()
	if len(d.mu.schemas) >= schemaCacheMax {
		clear(d.mu.schemas)
	}
	d.mu.schemas[id] = decoded
	d.mu.Unlock()
	return decoded
}
