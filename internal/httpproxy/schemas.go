package httpproxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/bufbuild/protocompile"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Schema formats, by the registry's schemaType names.
const (
	schemaTypeAvro     = "AVRO"
	schemaTypeJSON     = "JSON"
	schemaTypeProtobuf = "PROTOBUF"
)

// maxCachedSchemas bounds the schemas a session keeps parsed (Confluent's
// serializers cache 1000 per client, max.schemas.per.subject).
const maxCachedSchemas = 1000

// maxReferenceDepth bounds how deep schema references are followed.
const maxReferenceDepth = 16

// parsedSchema is a registered schema, parsed, ready to encode and decode
// values in Confluent's wire format:
//
//	byte 0      magic 0x00
//	bytes 1-4   schema id, big endian
//	protobuf    message indexes: zigzag varint count, then each index
//	            (a single 0x00 for the first message of the file)
//	rest        the payload: Avro binary, JSON text, protobuf binary
type parsedSchema struct {
	id         int
	schemaType string
	avro       *avro.Schema
	jsonSchema *jsonschema.Schema
	message    protoreflect.MessageDescriptor
}

// schemaCache resolves schemas through one session's registry client.
type schemaCache struct {
	registry *sr.Client
	mu       struct {
		sync.Mutex
		// Invariant: len(byID) <= maxCachedSchemas.
		byID map[int]*parsedSchema
	}
}

func newSchemaCache(registry *sr.Client) *schemaCache {
	c := &schemaCache{registry: registry}
	c.mu.byID = map[int]*parsedSchema{}
	return c
}

var errNoRegistry = errors.New("no schema registry is configured for the REST proxy (http.proxy.schema.registry.url)")

// byID returns the schema registered with id.
func (c *schemaCache) byID(ctx context.Context, id int) (*parsedSchema, error) {
	c.mu.Lock()
	cached, ok := c.mu.byID[id]
	c.mu.Unlock()
	if ok {
		return cached, nil
	}
	if c.registry == nil {
		return nil, errInvalidSchema(errNoRegistry)
	}
	schema, err := c.registry.SchemaByID(ctx, id)
	if err != nil {
		return nil, registryError(err)
	}
	parsed, err := c.parse(ctx, id, schema)
	if err != nil {
		return nil, errInvalidSchema(err)
	}
	c.mu.Lock()
	if len(c.mu.byID) >= maxCachedSchemas {
		for evict := range c.mu.byID {
			delete(c.mu.byID, evict)
			break
		}
	}
	c.mu.byID[id] = parsed
	c.mu.Unlock()
	return parsed, nil
}

// register registers text under subject (the REST proxy registers the
// schemas produce requests carry, as Confluent's does) and returns it
// parsed. An invalid schema answers 42205.
func (c *schemaCache) register(ctx context.Context, subject, schemaType, text string) (*parsedSchema, error) {
	if c.registry == nil {
		return nil, errInvalidSchema(errNoRegistry)
	}
	registered, err := c.registry.CreateSchema(ctx, subject, sr.Schema{Schema: text, Type: srType(schemaType)})
	if err != nil {
		var response *sr.ResponseError
		if errors.As(err, &response) && response.ErrorCode == 42201 {
			return nil, errInvalidSchema(errors.New(response.Message))
		}
		return nil, registryError(err)
	}
	return c.byID(ctx, registered.ID)
}

// byVersion returns version (0 for latest) of subject.
func (c *schemaCache) byVersion(ctx context.Context, subject string, version int) (*parsedSchema, error) {
	if c.registry == nil {
		return nil, errInvalidSchema(errNoRegistry)
	}
	if version == 0 {
		version = -1
	}
	schema, err := c.registry.SchemaByVersion(ctx, subject, version)
	if err != nil {
		return nil, registryError(err)
	}
	return c.byID(ctx, schema.ID)
}

func registryError(err error) error {
	var response *sr.ResponseError
	if errors.As(err, &response) {
		switch response.ErrorCode {
		case 40401, 40402, 40403:
			return errInvalidSchema(fmt.Errorf("schema registry: %s", response.Message))
		case 40101:
			return newError(401, 40101, "Unauthorized (schema registry)")
		case 40301:
			return newError(403, 40301, "schema registry: %s", response.Message)
		}
		return newError(500, 50002, "schema registry: %s", response.Message)
	}
	return newError(500, 50002, "schema registry: %v", err)
}

func srType(schemaType string) sr.SchemaType {
	switch schemaType {
	case schemaTypeJSON:
		return sr.TypeJSON
	case schemaTypeProtobuf:
		return sr.TypeProtobuf
	}
	return sr.TypeAvro
}

func typeName(t sr.SchemaType) string {
	switch t {
	case sr.TypeJSON:
		return schemaTypeJSON
	case sr.TypeProtobuf:
		return schemaTypeProtobuf
	}
	return schemaTypeAvro
}

// referencedSchemas fetches the schemas schema references, depth first,
// each once, dependencies before dependents.
func (c *schemaCache) referencedSchemas(ctx context.Context, references []sr.SchemaReference, depth int, seen map[string]bool, out *[]namedSchema) error {
	if depth > maxReferenceDepth {
		return fmt.Errorf("schema references nest deeper than %d", maxReferenceDepth)
	}
	for _, ref := range references {
		if seen[ref.Name] {
			continue
		}
		seen[ref.Name] = true
		referenced, err := c.registry.SchemaByVersion(ctx, ref.Subject, ref.Version)
		if err != nil {
			return fmt.Errorf("reference %s (%s version %d): %w", ref.Name, ref.Subject, ref.Version, err)
		}
		if err := c.referencedSchemas(ctx, referenced.References, depth+1, seen, out); err != nil {
			return err
		}
		*out = append(*out, namedSchema{name: ref.Name, text: referenced.Schema.Schema})
	}
	return nil
}

type namedSchema struct{ name, text string }

func (c *schemaCache) parse(ctx context.Context, id int, schema sr.Schema) (*parsedSchema, error) {
	var references []namedSchema
	if err := c.referencedSchemas(ctx, schema.References, 0, map[string]bool{}, &references); err != nil {
		return nil, err
	}
	parsed := &parsedSchema{id: id, schemaType: typeName(schema.Type)}
	var err error
	switch parsed.schemaType {
	case schemaTypeAvro:
		parsed.avro, err = parseAvro(schema.Schema, references)
	case schemaTypeJSON:
		parsed.jsonSchema, err = parseJSONSchema(schema.Schema, references)
	case schemaTypeProtobuf:
		parsed.message, err = parseProtobuf(schema.Schema, references)
	}
	if err != nil {
		return nil, err
	}
	return parsed, nil
}

func parseAvro(text string, references []namedSchema) (*avro.Schema, error) {
	var cache avro.SchemaCache
	for _, ref := range references {
		if _, err := cache.Parse(ref.text); err != nil {
			return nil, fmt.Errorf("reference %s: %w", ref.name, err)
		}
	}
	return cache.Parse(text)
}

func parseJSONSchema(text string, references []namedSchema) (*jsonschema.Schema, error) {
	compiler := jsonschema.NewCompiler()
	for _, ref := range references {
		document, err := jsonschema.UnmarshalJSON(strings.NewReader(ref.text))
		if err != nil {
			return nil, fmt.Errorf("reference %s: %w", ref.name, err)
		}
		if err := compiler.AddResource(ref.name, document); err != nil {
			return nil, err
		}
	}
	document, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	const root = "samsa-rest-proxy-root.json"
	if err := compiler.AddResource(root, document); err != nil {
		return nil, err
	}
	return compiler.Compile(root)
}

// protobufRoot is the file name the schema compiles as.
const protobufRoot = "samsa.rest.proxy.root.proto"

func parseProtobuf(text string, references []namedSchema) (protoreflect.MessageDescriptor, error) {
	sources := map[string]string{protobufRoot: text}
	for _, ref := range references {
		sources[ref.name] = ref.text
	}
	compiler := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: func(path string) (io.ReadCloser, error) {
				if source, ok := sources[path]; ok {
					return io.NopCloser(strings.NewReader(source)), nil
				}
				return nil, fmt.Errorf("import %q is not a reference of the schema", path)
			},
		}),
	}
	files, err := compiler.Compile(context.Background(), protobufRoot)
	if err != nil {
		return nil, err
	}
	messages := files[0].Messages()
	if messages.Len() == 0 {
		return nil, errors.New("the protobuf schema defines no message")
	}
	return messages.Get(0), nil
}

// encode turns a JSON value into Confluent's wire format under the schema.
// A value the schema does not admit answers 42203.
func (p *parsedSchema) encode(value json.RawMessage) ([]byte, error) {
	out := binary.BigEndian.AppendUint32([]byte{0}, uint32(p.id))
	switch p.schemaType {
	case schemaTypeAvro:
		var native any
		if err := p.avro.DecodeJSON(value, &native); err != nil {
			return nil, errConversion(err)
		}
		encoded, err := p.avro.AppendEncode(out, native)
		if err != nil {
			return nil, errConversion(err)
		}
		return encoded, nil
	case schemaTypeJSON:
		instance, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
		if err != nil {
			return nil, errConversion(err)
		}
		if err := p.jsonSchema.Validate(instance); err != nil {
			return nil, errConversion(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, value); err != nil {
			return nil, errConversion(err)
		}
		return append(out, compact.Bytes()...), nil
	default:
		message := dynamicpb.NewMessage(p.message)
		if err := protojson.Unmarshal(value, message); err != nil {
			return nil, errConversion(err)
		}
		out = append(out, messageIndexes(p.message)...)
		encoded, err := proto.MarshalOptions{}.MarshalAppend(out, message)
		if err != nil {
			return nil, errConversion(err)
		}
		return encoded, nil
	}
}

// messageIndexes is the index path of message in its file, encoded as
// Confluent's serializers do.
func messageIndexes(message protoreflect.MessageDescriptor) []byte {
	var path []int
	for d := protoreflect.Descriptor(message); ; {
		md, ok := d.(protoreflect.MessageDescriptor)
		if !ok {
			break
		}
		path = append([]int{md.Index()}, path...)
		d = md.Parent()
	}
	if len(path) == 1 && path[0] == 0 {
		return []byte{0}
	}
	out := protowire.AppendVarint(nil, protowire.EncodeZigZag(int64(len(path))))
	for _, index := range path {
		out = protowire.AppendVarint(out, protowire.EncodeZigZag(int64(index)))
	}
	return out
}

// errNotSchemaFramed is data that does not start with the magic byte and a
// schema id.
var errNotSchemaFramed = errors.New("the data does not start with the schema registry magic byte and a schema id")

// schemaID reads the schema id of Confluent's wire format.
func schemaID(data []byte) (int, []byte, error) {
	if len(data) < 5 || data[0] != 0 {
		return 0, nil, errNotSchemaFramed
	}
	return int(binary.BigEndian.Uint32(data[1:5])), data[5:], nil
}

// decode turns a payload (after the magic byte and id) into the JSON the
// REST proxy answers: Avro's JSON encoding, the JSON document, or the
// protobuf message's canonical JSON.
func (p *parsedSchema) decode(payload []byte) (json.RawMessage, error) {
	switch p.schemaType {
	case schemaTypeAvro:
		var native any
		rest, err := p.avro.Decode(payload, &native, avro.TaggedUnions())
		if err != nil {
			return nil, err
		}
		if len(rest) != 0 {
			return nil, fmt.Errorf("%d bytes after the Avro value", len(rest))
		}
		return p.avro.EncodeJSON(native, avro.TaggedUnions())
	case schemaTypeJSON:
		if !json.Valid(payload) {
			return nil, errors.New("the payload is not JSON")
		}
		return json.RawMessage(payload), nil
	default:
		descriptor, rest, err := messageAt(p.message.ParentFile(), payload)
		if err != nil {
			return nil, err
		}
		message := dynamicpb.NewMessage(descriptor)
		if err := proto.Unmarshal(rest, message); err != nil {
			return nil, err
		}
		return protojson.Marshal(message)
	}
}

// maxMessageIndexes bounds the index path read from a payload.
const maxMessageIndexes = 64

// messageAt reads the message index path at the start of payload and
// returns the message it names in file.
func messageAt(file protoreflect.FileDescriptor, payload []byte) (protoreflect.MessageDescriptor, []byte, error) {
	count, n := protowire.ConsumeVarint(payload)
	if n < 0 {
		return nil, nil, errors.New("truncated protobuf message indexes")
	}
	payload = payload[n:]
	length := protowire.DecodeZigZag(count)
	if length < 0 || length > maxMessageIndexes {
		return nil, nil, fmt.Errorf("%d protobuf message indexes", length)
	}
	path := []int64{0}
	if length > 0 {
		path = path[:0]
		for range length {
			index, n := protowire.ConsumeVarint(payload)
			if n < 0 {
				return nil, nil, errors.New("truncated protobuf message indexes")
			}
			payload = payload[n:]
			path = append(path, protowire.DecodeZigZag(index))
		}
	}
	messages := file.Messages()
	var message protoreflect.MessageDescriptor
	for _, index := range path {
		if index < 0 || int(index) >= messages.Len() {
			return nil, nil, fmt.Errorf("protobuf message index %d out of range", index)
		}
		message = messages.Get(int(index))
		messages = message.Messages()
	}
	return message, payload, nil
}
