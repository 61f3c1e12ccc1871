package registry

import (
	"github.com/hamba/avro/v2"
)

// avroSchema is an Avro schema parsed by hamba/avro, whose
// SchemaCompatibility implements the Avro specification's schema
// resolution rules, the same rules Confluent's Avro check applies.
type avroSchema struct {
	text   string
	schema avro.Schema
}

func parseAvro(text string, dependencies []dependency) (parsedSchema, error) {
	compact, err := compactJSON(text)
	if err != nil {
		return nil, err
	}
	cache := &avro.SchemaCache{}
	for _, dep := range dependencies {
		if dep.SchemaType != typeAvro {
			continue
		}
		if _, err := avro.ParseWithCache(dep.Schema, "", cache); err != nil {
			return nil, err
		}
	}
	schema, err := avro.ParseWithCache(compact, "", cache)
	if err != nil {
		return nil, err
	}
	return &avroSchema{text: compact, schema: schema}, nil
}

func (s *avroSchema) canonical() string { return s.text }

func (s *avroSchema) readIssues(writer parsedSchema) []string {
	other, ok := writer.(*avroSchema)
	if !ok {
		return []string{"schema type changed"}
	}
	if err := avro.NewSchemaCompatibility().Compatible(s.schema, other.schema); err != nil {
		return []string{err.Error()}
	}
	return nil
}
