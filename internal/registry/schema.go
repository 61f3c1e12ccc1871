package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// errInvalidSchema wraps every parse failure; handlers answer 42201.
var errInvalidSchema = errors.New("invalid schema")

// dependency is one schema a schema imports, with the name it is imported
// by (an Avro full name, a .proto file name, a JSON Schema $ref URL).
// Dependencies are listed leaves first.
type dependency struct {
	Name       string
	SchemaType string
	Schema     string
}

// parsedSchema is a schema parsed by its type's library.
type parsedSchema interface {
	// canonical is the form stored in _schemas and compared for identity.
	canonical() string
	// readIssues lists why this schema, as the reader, cannot read data
	// written with writer; none when it can. writer has the same type.
	readIssues(writer parsedSchema) []string
}

// parseSchema parses text as schemaType with its dependencies. A panic in
// a parsing library (hamba/avro panics on some malformed unions) is
// answered as an invalid schema, never let through to the caller.
func parseSchema(schemaType, text string, dependencies []dependency) (parsed parsedSchema, err error) {
	defer func() {
		if recovered := recover(); recovered != nil {
			parsed, err = nil, fmt.Errorf("%w: the %s parser failed on this input: %v", errInvalidSchema, schemaType, recovered)
		}
	}()
	switch schemaType {
	case typeAvro:
		parsed, err = parseAvro(text, dependencies)
	case typeProtobuf:
		parsed, err = parseProtobuf(text, dependencies)
	case typeJSON:
		parsed, err = parseJSONSchema(text, dependencies)
	default:
		return nil, fmt.Errorf("%w: unknown schema type %q", errInvalidSchema, schemaType)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidSchema, err)
	}
	return parsed, nil
}

// compactJSON removes insignificant whitespace, keeping key order: the
// compact form Confluent stores for Avro and JSON Schema text.
func compactJSON(text string) (string, error) {
	var out bytes.Buffer
	if err := json.Compact(&out, []byte(text)); err != nil {
		return "", err
	}
	return out.String(), nil
}

// Compatibility levels.
var compatibilityLevels = map[string]bool{
	"BACKWARD": true, "BACKWARD_TRANSITIVE": true, "FORWARD": true, "FORWARD_TRANSITIVE": true,
	"FULL": true, "FULL_TRANSITIVE": true, "NONE": true,
}

// checkCompatibility reports why candidate may not follow previous (the
// subject's live versions, oldest first) at level; none when it may. Only
// the latest version is checked unless the level is transitive.
func checkCompatibility(level string, candidate parsedSchema, previous []parsedSchema) []string {
	if level == "NONE" || len(previous) == 0 {
		return nil
	}
	against := previous[len(previous)-1:]
	transitive := level == "BACKWARD_TRANSITIVE" || level == "FORWARD_TRANSITIVE" || level == "FULL_TRANSITIVE"
	if transitive {
		against = previous
	}
	backward := level == "BACKWARD" || level == "BACKWARD_TRANSITIVE" || level == "FULL" || level == "FULL_TRANSITIVE"
	forward := level == "FORWARD" || level == "FORWARD_TRANSITIVE" || level == "FULL" || level == "FULL_TRANSITIVE"
	var issues []string
	for i := len(against) - 1; i >= 0; i-- {
		old := against[i]
		if backward {
			for _, issue := range candidate.readIssues(old) {
				issues = append(issues, "backward: "+issue)
			}
		}
		if forward {
			for _, issue := range old.readIssues(candidate) {
				issues = append(issues, "forward: "+issue)
			}
		}
	}
	return issues
}
