package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// table writes aligned columns. Cells are separated by tabs internally, so
// tabs and newlines inside a cell are replaced by spaces.
type table struct {
	writer *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{writer: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(stringsToAny(header)...)
	}
	return t
}

func (t *table) row(cells ...any) {
	parts := make([]string, len(cells))
	for i, cell := range cells {
		text := fmt.Sprint(cell)
		parts[i] = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(text)
	}
	fmt.Fprintln(t.writer, strings.Join(parts, "\t"))
}

func (t *table) flush() error { return t.writer.Flush() }

func stringsToAny(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// writeJSON writes v as one indented JSON document. Every JSON shape the
// CLI prints is a named struct with explicit field tags and sorted slices,
// so scripts can rely on it.
func writeJSON(w io.Writer, v any) error {
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	return encoder.Encode(v)
}

// joinInt32s renders broker lists such as replicas and ISR: "1,2,3".
func joinInt32s(values []int32) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = strconv.Itoa(int(v))
	}
	return strings.Join(parts, ",")
}

// countOf renders a count with its noun: "1 partition", "3 partitions".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// orDash prints "-" for values that are absent, so columns stay aligned.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// offsetOrDash prints a Kafka offset, or "-" for -1 (unknown).
func offsetOrDash(offset int64) string {
	if offset < 0 {
		return "-"
	}
	return strconv.FormatInt(offset, 10)
}

// kafkaUUID renders a topic id as Kafka does (Uuid.toString): URL-safe
// base64 without padding.
func kafkaUUID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }
