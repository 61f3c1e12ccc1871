package httpproxy

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// produceRequestV2 is the body of POST /topics/{topic} and
// /topics/{topic}/partitions/{partition}.
type produceRequestV2 struct {
	KeySchema     *string           `json:"key_schema"`
	KeySchemaID   *int              `json:"key_schema_id"`
	ValueSchema   *string           `json:"value_schema"`
	ValueSchemaID *int              `json:"value_schema_id"`
	Records       []produceRecordV2 `json:"records"`
}

type produceRecordV2 struct {
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Partition *int32          `json:"partition"`
}

type produceOffsetV2 struct {
	Partition *int32  `json:"partition"`
	Offset    *int64  `json:"offset"`
	ErrorCode *int    `json:"error_code"`
	Error     *string `json:"error"`
}

type produceResponseV2 struct {
	KeySchemaID   *int              `json:"key_schema_id"`
	ValueSchemaID *int              `json:"value_schema_id"`
	Offsets       []produceOffsetV2 `json:"offsets"`
}

// maxProduceRecords bounds the records of one v2 produce request; the body
// bound (http.proxy.max.request.bytes) bounds their bytes.
const maxProduceRecords = 100000

// produceV2 serves both v2 produce routes; partition is -1 for the topic
// route.
func (p *Proxy) produceV2(r *request) (int, any, error) {
	format, ok := formatOfMediaType(r.Header.Get("Content-Type"))
	if !ok {
		return 0, nil, errUnsupportedMediaType()
	}
	topic := r.PathValue("topic")
	routePartition := int32(-1)
	if text := r.PathValue("partition"); text != "" {
		n, err := strconv.ParseInt(text, 10, 32)
		if err != nil || n < 0 {
			return 0, nil, errPartitionNotFound()
		}
		routePartition = int32(n)
	}
	var body produceRequestV2
	if err := readBody(r, &body, false); err != nil {
		return 0, nil, err
	}
	if len(body.Records) == 0 {
		return 0, nil, errUnprocessable("records may not be empty")
	}
	if len(body.Records) > maxProduceRecords {
		return 0, nil, errUnprocessable("at most %d records per request", maxProduceRecords)
	}
	partitions, err := topicPartitionCount(r.ctx, r.session, topic)
	if err != nil {
		return 0, nil, err
	}
	if routePartition >= partitions {
		return 0, nil, errPartitionNotFound()
	}
	for _, record := range body.Records {
		if record.Partition != nil && (*record.Partition < 0 || *record.Partition >= partitions) {
			return 0, nil, errPartitionNotFound()
		}
	}
	records, answer, err := p.encodeV2(r, format, topic, &body)
	if err != nil {
		return 0, nil, err
	}
	for i, record := range body.Records {
		switch {
		case routePartition >= 0:
			withPartition(records[i], routePartition)
		case record.Partition != nil:
			withPartition(records[i], *record.Partition)
		}
	}
	answer.Offsets = produceAll(r.ctx, r.session.client, records)
	return http.StatusOK, answer, nil
}

// encodeV2 turns the request's records into Kafka records in format.
func (p *Proxy) encodeV2(r *request, format format, topic string, body *produceRequestV2) ([]*kgo.Record, *produceResponseV2, error) {
	answer := &produceResponseV2{}
	var keySchema, valueSchema *parsedSchema
	if schemaType := format.schemaType(); schemaType != "" {
		var err error
		hasKeys, hasValues := false, false
		for _, record := range body.Records {
			hasKeys = hasKeys || !isNull(record.Key)
			hasValues = hasValues || !isNull(record.Value)
		}
		if hasKeys {
			if keySchema, err = resolveSchemaV2(r, topic+"-key", schemaType, body.KeySchema, body.KeySchemaID, errKeySchemaMissing); err != nil {
				return nil, nil, err
			}
			answer.KeySchemaID = &keySchema.id
		}
		if hasValues {
			if valueSchema, err = resolveSchemaV2(r, topic+"-value", schemaType, body.ValueSchema, body.ValueSchemaID, errValueSchemaMissing); err != nil {
				return nil, nil, err
			}
			answer.ValueSchemaID = &valueSchema.id
		}
	}
	records := make([]*kgo.Record, len(body.Records))
	for i, record := range body.Records {
		key, err := encodeV2Data(format, keySchema, record.Key)
		if err != nil {
			return nil, nil, err
		}
		value, err := encodeV2Data(format, valueSchema, record.Value)
		if err != nil {
			return nil, nil, err
		}
		records[i] = &kgo.Record{Topic: topic, Key: key, Value: value}
	}
	return records, answer, nil
}

func resolveSchemaV2(r *request, subject, schemaType string, text *string, id *int, missing func() *apiError) (*parsedSchema, error) {
	switch {
	case id != nil:
		schema, err := r.session.schemas.byID(r.ctx, *id)
		if err != nil {
			return nil, err
		}
		if schema.schemaType != schemaType {
			return nil, errInvalidSchema(errSchemaTypeMismatch(*id, schema.schemaType, schemaType))
		}
		return schema, nil
	case text != nil:
		return r.session.schemas.register(r.ctx, subject, schemaType, *text)
	}
	return nil, missing()
}

func encodeV2Data(format format, schema *parsedSchema, value json.RawMessage) ([]byte, error) {
	if isNull(value) {
		return nil, nil
	}
	switch format {
	case formatBinary:
		data, err := decodeBinary(value)
		if err != nil {
			return nil, errUnprocessable("%v", err)
		}
		return data, nil
	case formatJSON:
		return compactJSON(value), nil
	}
	return schema.encode(value)
}

// produceAll produces records and answers each one's partition and offset
// or error, in request order.
func produceAll(ctx context.Context, client *kgo.Client, records []*kgo.Record) []produceOffsetV2 {
	offsets := make([]produceOffsetV2, len(records))
	var wait sync.WaitGroup
	wait.Add(len(records))
	for i, record := range records {
		client.Produce(ctx, record, func(produced *kgo.Record, err error) {
			defer wait.Done()
			if err != nil {
				code, message := produceErrorCode(err), err.Error()
				offsets[i] = produceOffsetV2{ErrorCode: &code, Error: &message}
				return
			}
			partition, offset := produced.Partition, produced.Offset
			offsets[i] = produceOffsetV2{Partition: &partition, Offset: &offset}
		})
	}
	wait.Wait()
	return offsets
}
