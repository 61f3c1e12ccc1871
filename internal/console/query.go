package console

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Where a records scan starts.
const (
	startEarliest  = "earliest"
	startLatest    = "latest"
	startOffset    = "offset"
	startTimestamp = "timestamp"
)

// Rendering formats of keys and values.
var formats = []string{"auto", "text", "json", "hex"}

// filterMaxBytes bounds a filter expression's text.
const filterMaxBytes = 4096

// partitionsMax bounds the partitions one scan names in its query.
const partitionsMax = 10_000

// scanRequest is a parsed records query:
//
//	partition  empty (every partition) or a comma-separated list of ids
//	start      earliest | latest | offset | timestamp
//	offset     with start=offset: the first offset of each partition
//	timestamp  with start=timestamp: milliseconds since the epoch or RFC 3339
//	cursor     partition:offset,... from a "next" or "previous" link;
//	           overrides start
//	limit      records to show, 1..console.records.max
//	format     auto | text | json | hex
//	filter     a CEL expression over the record (see filter.go)
type scanRequest struct {
	Partitions  []int32 // nil: every partition
	Start       string
	Offset      int64
	TimestampMs int64
	Cursor      map[int32]int64
	Limit       int
	Format      string
	Filter      string
}

// parseScanRequest checks every field of a records query; recordsMax caps
// limit.
func parseScanRequest(values url.Values, recordsMax int) (scanRequest, error) {
	q := scanRequest{Start: startEarliest, Limit: min(50, recordsMax), Format: "auto"}
	if raw := strings.TrimSpace(values.Get("partition")); raw != "" && raw != "all" {
		for _, field := range strings.Split(raw, ",") {
			p, err := strconv.ParseInt(strings.TrimSpace(field), 10, 32)
			if err != nil || p < 0 {
				return q, fmt.Errorf("partition %q: expected a partition number or a comma-separated list", field)
			}
			if !slices.Contains(q.Partitions, int32(p)) {
				q.Partitions = append(q.Partitions, int32(p))
			}
			if len(q.Partitions) > partitionsMax {
				return q, fmt.Errorf("partition: more than %d partitions", partitionsMax)
			}
		}
	}
	if raw := values.Get("start"); raw != "" {
		switch raw {
		case startEarliest, startLatest, startOffset, startTimestamp:
			q.Start = raw
		default:
			return q, fmt.Errorf("start %q: expected earliest, latest, offset or timestamp", raw)
		}
	}
	switch q.Start {
	case startOffset:
		raw := strings.TrimSpace(values.Get("offset"))
		offset, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || offset < 0 {
			return q, fmt.Errorf("offset %q: expected a whole number, 0 or more", raw)
		}
		q.Offset = offset
	case startTimestamp:
		timestampMs, err := parseTimestamp(values.Get("timestamp"))
		if err != nil {
			return q, err
		}
		q.TimestampMs = timestampMs
	}
	if raw := strings.TrimSpace(values.Get("cursor")); raw != "" {
		cursor, err := parseCursor(raw)
		if err != nil {
			return q, err
		}
		q.Cursor = cursor
	}
	if raw := strings.TrimSpace(values.Get("limit")); raw != "" {
		limit, err := strconv.Atoi(raw)
		if err != nil || limit < 1 || limit > recordsMax {
			return q, fmt.Errorf("limit %q: expected 1 to %d records (console.records.max)", raw, recordsMax)
		}
		q.Limit = limit
	}
	if raw := values.Get("format"); raw != "" {
		if !slices.Contains(formats, raw) {
			return q, fmt.Errorf("format %q: expected one of %s", raw, strings.Join(formats, ", "))
		}
		q.Format = raw
	}
	q.Filter = strings.TrimSpace(values.Get("filter"))
	if len(q.Filter) > filterMaxBytes {
		return q, fmt.Errorf("filter: longer than %d bytes", filterMaxBytes)
	}
	return q, nil
}

// parseTimestamp reads milliseconds since the epoch, or an RFC 3339 time
// (the browser's datetime-local form, without zone, is taken as UTC).
func parseTimestamp(raw string) (int64, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return 0, errors.New("timestamp: empty; expected milliseconds since the epoch or a date and time")
	}
	if ms, err := strconv.ParseInt(raw, 10, 64); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("timestamp %q: before the epoch", raw)
		}
		return ms, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, raw); err == nil {
			if t.Year() < 1970 || t.Year() > 9999 {
				break
			}
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("timestamp %q: expected milliseconds since the epoch or a date and time (2006-01-02T15:04:05Z)", raw)
}

// parseCursor reads partition:offset pairs.
func parseCursor(raw string) (map[int32]int64, error) {
	cursor := map[int32]int64{}
	for _, pair := range strings.Split(raw, ",") {
		partitionText, offsetText, ok := strings.Cut(pair, ":")
		p, errPartition := strconv.ParseInt(partitionText, 10, 32)
		o, errOffset := strconv.ParseInt(offsetText, 10, 64)
		if !ok || errPartition != nil || errOffset != nil || p < 0 || o < 0 {
			return nil, fmt.Errorf("cursor %q: expected partition:offset pairs", pair)
		}
		cursor[int32(p)] = o
		if len(cursor) > partitionsMax {
			return nil, fmt.Errorf("cursor: more than %d partitions", partitionsMax)
		}
	}
	return cursor, nil
}

// formatCursor is parseCursor's inverse, in partition order.
func formatCursor(cursor map[int32]int64) string {
	partitions := make([]int32, 0, len(cursor))
	for p := range cursor {
		partitions = append(partitions, p)
	}
	slices.Sort(partitions)
	var b strings.Builder
	for i, p := range partitions {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d:%d", p, cursor[p])
	}
	return b.String()
}
