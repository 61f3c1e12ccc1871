package httpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/httpserve"
)

// produceRequestV3 is one record of POST
// /v3/clusters/{cluster_id}/topics/{topic}/records; a streamed body holds
// several, one JSON object after another.
type produceRequestV3 struct {
	PartitionID *int32         `json:"partition_id"`
	Headers     []headerV3     `json:"headers"`
	Key         *produceDataV3 `json:"key"`
	Value       *produceDataV3 `json:"value"`
	Timestamp   *time.Time     `json:"timestamp"`
}

type headerV3 struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"` // base64 or null
}

// produceDataV3 is a key or value: its type and data, and for the schema
// types which schema (schema_id, subject with schema_version, or the
// schema itself; none means the subject's latest).
type produceDataV3 struct {
	Type          string          `json:"type"`
	Data          json.RawMessage `json:"data"`
	SchemaID      *int            `json:"schema_id"`
	SchemaVersion *int            `json:"schema_version"`
	Subject       string          `json:"subject"`
	Schema        *string         `json:"schema"`
}

type dataSizeV3 struct {
	Type string `json:"type"`
	Size int    `json:"size"`
}

type produceResponseV3 struct {
	ErrorCode   int         `json:"error_code"`
	Message     string      `json:"message,omitempty"`
	ClusterID   string      `json:"cluster_id,omitempty"`
	TopicName   string      `json:"topic_name,omitempty"`
	PartitionID *int32      `json:"partition_id,omitempty"`
	Offset      *int64      `json:"offset,omitempty"`
	Timestamp   *string     `json:"timestamp,omitempty"`
	Key         *dataSizeV3 `json:"key,omitempty"`
	Value       *dataSizeV3 `json:"value,omitempty"`
}

// maxInFlightV3 bounds the records of one streamed request produced but
// not yet answered.
const maxInFlightV3 = 1000

// produceV3 serves the v3 records route: one record answered with its own
// status, or a stream (chunked body, or several objects) answered 200 with
// one JSON object a line, in order.
func (p *Proxy) produceV3(w http.ResponseWriter, r *request) {
	id, err := checkCluster(r)
	if err != nil {
		writeError(w, contentTypeV3, err)
		return
	}
	topic := r.PathValue("topic")
	partitions, err := topicPartitionCount(r.ctx, r.session, topic)
	if err != nil {
		var api *apiError
		if errors.As(err, &api) && api.code == 40401 {
			err = newError(http.StatusNotFound, 40403, "This server does not host this topic-partition.")
		}
		writeError(w, contentTypeV3, err)
		return
	}
	if r.ContentLength >= 0 {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, contentTypeV3, errTooLarge())
			return
		}
		decoder := json.NewDecoder(bytes.NewReader(body))
		var first json.RawMessage
		if err := decoder.Decode(&first); err != nil {
			writeError(w, contentTypeV3, errMalformed(err))
			return
		}
		if !decoder.More() {
			answer := p.produceOneV3(r, id, topic, partitions, first).wait()
			status := answer.ErrorCode
			if status < 100 || status > 599 {
				status = http.StatusBadRequest
			}
			httpserve.WriteJSON(w, status, contentTypeV3, answer)
			return
		}
		p.streamV3(w, r, id, topic, partitions, bytes.NewReader(body))
		return
	}
	p.streamV3(w, r, id, topic, partitions, r.Body)
}

// pendingV3 is a record's answer, ready or to come.
type pendingV3 struct {
	done   chan struct{}
	answer produceResponseV3
}

func (pending *pendingV3) wait() produceResponseV3 {
	<-pending.done
	return pending.answer
}

func readyV3(answer produceResponseV3) *pendingV3 {
	pending := &pendingV3{done: make(chan struct{}), answer: answer}
	close(pending.done)
	return pending
}

func (p *Proxy) streamV3(w http.ResponseWriter, r *request, id, topic string, partitions int32, body io.Reader) {
	// Answers go out while the body still streams in.
	_ = http.NewResponseController(w).EnableFullDuplex()
	w.Header().Set("Content-Type", contentTypeV3)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	queue := make(chan *pendingV3, maxInFlightV3)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for pending := range queue {
			line, _ := json.Marshal(pending.wait())
			_, _ = w.Write(append(line, '\n'))
			if flusher != nil && len(queue) == 0 {
				flusher.Flush()
			}
		}
	}()
	decoder := json.NewDecoder(body)
	for {
		var raw json.RawMessage
		err := decoder.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			api := errMalformed(err)
			if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
				api = errTooLarge()
			}
			queue <- readyV3(produceResponseV3{ErrorCode: api.status, Message: api.message})
			break
		}
		queue <- p.produceOneV3(r, id, topic, partitions, raw)
	}
	close(queue)
	<-writerDone
}

// produceOneV3 decodes and produces one record.
func (p *Proxy) produceOneV3(r *request, id, topic string, partitions int32, raw json.RawMessage) *pendingV3 {
	fail := func(err error) *pendingV3 {
		api := kafkaError(err)
		return readyV3(produceResponseV3{ErrorCode: api.status, Message: api.message})
	}
	var body produceRequestV3
	if err := decodeStrict(raw, &body); err != nil {
		return fail(err)
	}
	record := &kgo.Record{Topic: topic}
	if body.PartitionID != nil {
		if *body.PartitionID < 0 || *body.PartitionID >= partitions {
			return fail(newError(http.StatusNotFound, 40403, "This server does not host this topic-partition."))
		}
		withPartition(record, *body.PartitionID)
	}
	if body.Timestamp != nil {
		record.Timestamp = *body.Timestamp
	}
	for _, header := range body.Headers {
		value, err := decodeBinary(header.Value)
		if err != nil {
			return fail(errBadRequest("header %s: %v", header.Name, err))
		}
		record.Headers = append(record.Headers, kgo.RecordHeader{Key: header.Name, Value: value})
	}
	var keyType, valueType string
	var err error
	if record.Key, keyType, err = encodeV3Data(r, topic+"-key", body.Key); err != nil {
		return fail(err)
	}
	if record.Value, valueType, err = encodeV3Data(r, topic+"-value", body.Value); err != nil {
		return fail(err)
	}
	pending := &pendingV3{done: make(chan struct{})}
	r.session.client.Produce(r.ctx, record, func(produced *kgo.Record, err error) {
		defer close(pending.done)
		if err != nil {
			api := kafkaError(err)
			pending.answer = produceResponseV3{ErrorCode: api.status, Message: api.message}
			return
		}
		partition, offset := produced.Partition, produced.Offset
		timestamp := produced.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z07:00")
		pending.answer = produceResponseV3{
			ErrorCode: http.StatusOK, ClusterID: id, TopicName: topic, PartitionID: &partition, Offset: &offset, Timestamp: &timestamp,
		}
		if body.Key != nil {
			pending.answer.Key = &dataSizeV3{Type: keyType, Size: len(produced.Key)}
		}
		if body.Value != nil {
			pending.answer.Value = &dataSizeV3{Type: valueType, Size: len(produced.Value)}
		}
	})
	return pending
}

// encodeV3Data encodes a key or value and names its type as answered.
func encodeV3Data(r *request, subject string, data *produceDataV3) ([]byte, string, error) {
	if data == nil {
		return nil, "", nil
	}
	kind := strings.ToUpper(data.Type)
	if kind == "" {
		kind = "BINARY"
		if data.SchemaID != nil || data.SchemaVersion != nil || data.Schema != nil {
			kind = "AVRO"
		}
	}
	if data.Subject != "" {
		subject = data.Subject
	}
	switch kind {
	case "BINARY":
		bytes, err := decodeBinary(data.Data)
		if err != nil {
			return nil, "", errBadRequest("%v", err)
		}
		return bytes, kind, nil
	case "JSON":
		if isNull(data.Data) {
			return nil, kind, nil
		}
		return compactJSON(data.Data), kind, nil
	case "STRING":
		if isNull(data.Data) {
			return nil, kind, nil
		}
		var text string
		if err := json.Unmarshal(data.Data, &text); err != nil {
			return nil, "", errBadRequest("STRING data must be a JSON string")
		}
		return []byte(text), kind, nil
	case "AVRO", "JSONSCHEMA", "PROTOBUF":
	default:
		return nil, "", errBadRequest("unknown data type %q, expected BINARY, JSON, STRING, AVRO, JSONSCHEMA or PROTOBUF", data.Type)
	}
	schemaType := map[string]string{"AVRO": schemaTypeAvro, "JSONSCHEMA": schemaTypeJSON, "PROTOBUF": schemaTypeProtobuf}[kind]
	var schema *parsedSchema
	var err error
	switch {
	case data.SchemaID != nil:
		schema, err = r.session.schemas.byID(r.ctx, *data.SchemaID)
	case data.Schema != nil:
		schema, err = r.session.schemas.register(r.ctx, subject, schemaType, *data.Schema)
	case data.SchemaVersion != nil:
		schema, err = r.session.schemas.byVersion(r.ctx, subject, *data.SchemaVersion)
	default:
		schema, err = r.session.schemas.byVersion(r.ctx, subject, 0)
	}
	if err != nil {
		return nil, "", err
	}
	if schema.schemaType != schemaType {
		return nil, "", errInvalidSchema(errSchemaTypeMismatch(schema.id, schema.schemaType, schemaType))
	}
	if isNull(data.Data) {
		return nil, kind, nil
	}
	encoded, err := schema.encode(data.Data)
	if err != nil {
		return nil, "", err
	}
	return encoded, kind, nil
}
