package record

import (
	"errors"
	"fmt"
	"strings"
)

// Errors beyond ErrCorrupt and ErrTruncated (header.go). Each maps to the
// Kafka error code a broker answers a produce with; see KafkaErrorCode. An
// error may wrap more than one: a malformed record inside a batch is both
// ErrInvalidRecord (what Kafka answers) and ErrCorrupt (what log recovery
// tests for).
var (
	// ErrInvalidRecord marks a batch Kafka rejects with INVALID_RECORD (87):
	// bad framing of the records, wrong counts or offsets, a control batch
	// from a client, a missing key on a compacted topic.
	ErrInvalidRecord = errors.New("record: invalid record")
	// ErrTooLarge marks a batch larger than max.message.bytes:
	// MESSAGE_TOO_LARGE (10).
	ErrTooLarge = errors.New("record: batch too large")
	// ErrInvalidTimestamp marks a record timestamp out of the topic's
	// allowed range, or a client batch claiming LogAppendTime:
	// INVALID_TIMESTAMP (32).
	ErrInvalidTimestamp = errors.New("record: invalid timestamp")
	// ErrDecompressLimit marks compressed records that expand past the bound
	// the caller gave. It is always wrapped together with ErrCorrupt; Kafka
	// has no such limit, and we answer MESSAGE_TOO_LARGE so that a Java
	// producer splits the batch and retries instead of retrying it whole.
	ErrDecompressLimit = errors.New("record: decompressed size over limit")
)

// Kafka error codes returned by KafkaErrorCode.
const (
	codeUnknownServerError int16 = -1
	codeCorruptMessage     int16 = 2
	codeMessageTooLarge    int16 = 10
	codeInvalidTimestamp   int16 = 32
	codeInvalidRecord      int16 = 87
)

// KafkaErrorCode maps an error from this package to the Kafka error code a
// broker puts in the partition's produce response: 0 for nil, -1
// (UNKNOWN_SERVER_ERROR) for an error it does not know.
func KafkaErrorCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrTooLarge), errors.Is(err, ErrDecompressLimit):
		return codeMessageTooLarge
	case errors.Is(err, ErrInvalidTimestamp):
		return codeInvalidTimestamp
	case errors.Is(err, ErrInvalidRecord):
		return codeInvalidRecord
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrTruncated):
		return codeCorruptMessage
	default:
		return codeUnknownServerError
	}
}

// RecordError names one rejected record of a batch, as the RecordErrors of a
// produce response (v8+) do.
type RecordError struct {
	// BatchIndex is the record's position in the batch, from 0.
	BatchIndex int32
	// Message says why the record was rejected.
	Message string
}

// RecordErrors is the error Validate returns when records were rejected one
// by one (a missing key on a compacted topic, a timestamp out of range), as
// Kafka's LogValidator collects them. It wraps ErrInvalidTimestamp when any
// record had a bad timestamp, else ErrInvalidRecord.
type RecordErrors struct {
	// Kind is ErrInvalidTimestamp or ErrInvalidRecord.
	Kind error
	// Records holds one entry per rejected record, in batch order.
	Records []RecordError
}

// Error reads like Kafka's top-level error message for the partition.
func (e *RecordErrors) Error() string {
	if errors.Is(e.Kind, ErrInvalidTimestamp) {
		return fmt.Sprintf("%v: one or more records have been rejected due to invalid timestamp: %s",
			e.Kind, e.firstMessages())
	}
	return fmt.Sprintf("%v: one or more records have been rejected due to %d record errors in total, "+
		"and only showing the first three errors at most: %s", e.Kind, len(e.Records), e.firstMessages())
}

func (e *RecordErrors) firstMessages() string {
	var b strings.Builder
	for i, r := range e.Records[:min(3, len(e.Records))] {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "record %d: %s", r.BatchIndex, r.Message)
	}
	return b.String()
}

// Unwrap returns Kind.
func (e *RecordErrors) Unwrap() error { return e.Kind }
