package httpproxy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"
)

// format is a v2 embedded format: how keys and values sit in the JSON of a
// request or answer.
type format string

const (
	formatBinary     format = "binary"
	formatJSON       format = "json"
	formatAvro       format = "avro"
	formatJSONSchema format = "jsonschema"
	formatProtobuf   format = "protobuf"
)

// contentType is the v2 media type of the format,
// application/vnd.kafka.<format>.v2+json.
func (f format) contentType() string { return "application/vnd.kafka." + string(f) + ".v2+json" }

// schemaType is the registry schema type of a schema format, "" for
// binary and json.
func (f format) schemaType() string {
	switch f {
	case formatAvro:
		return schemaTypeAvro
	case formatJSONSchema:
		return schemaTypeJSON
	case formatProtobuf:
		return schemaTypeProtobuf
	}
	return ""
}

func parseFormat(name string) (format, bool) {
	switch f := format(strings.ToLower(name)); f {
	case formatBinary, formatJSON, formatAvro, formatJSONSchema, formatProtobuf:
		return f, true
	}
	return "", false
}

// formatOfMediaType reads the format out of
// application/vnd.kafka.<format>.v2+json.
func formatOfMediaType(header string) (format, bool) {
	mediaType, _, err := mime.ParseMediaType(header)
	if err != nil {
		return "", false
	}
	name, ok := strings.CutPrefix(strings.ToLower(mediaType), "application/vnd.kafka.")
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, ".v2+json")
	if !ok {
		return "", false
	}
	return parseFormat(name)
}

// isNull reports whether a JSON value is absent or null.
func isNull(value json.RawMessage) bool {
	return len(value) == 0 || string(value) == "null"
}

var errNotBase64 = errors.New("binary data must be a base64 string")

// decodeBinary reads a binary-format key or value: a base64 string, or
// null for no bytes.
func decodeBinary(value json.RawMessage) ([]byte, error) {
	if isNull(value) {
		return nil, nil
	}
	var text string
	if err := json.Unmarshal(value, &text); err != nil {
		return nil, errNotBase64
	}
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotBase64, err)
	}
	return data, nil
}

// encodeBinary is the JSON of binary data: a base64 string, or null.
func encodeBinary(data []byte) json.RawMessage {
	if data == nil {
		return json.RawMessage("null")
	}
	encoded, _ := json.Marshal(base64.StdEncoding.EncodeToString(data))
	return encoded
}

var errNotJSON = errors.New("the record's data is not JSON")

// compactJSON is value without insignificant whitespace, as Confluent's
// proxy writes the JSON it parsed. value is already known to be valid JSON.
func compactJSON(value json.RawMessage) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, value); err != nil {
		return append([]byte(nil), value...)
	}
	return out.Bytes()
}
