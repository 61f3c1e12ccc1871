package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordPrinter writes one consumed record.
type recordPrinter interface {
	print(out *bufio.Writer, record *kgo.Record) error
}

// formatPart is one piece of a --format template: literal text, or a verb
// such as 'k' (key) when literal is empty.
type formatPart struct {
	literal string
	verb    byte
}

// recordFormat is a parsed --format template.
type recordFormat []formatPart

// parseRecordFormat parses a --format template; see the consume help for
// its verbs and escapes. Unknown verbs are errors, so a typo is not printed
// verbatim for every record.
func parseRecordFormat(template string) (recordFormat, error) {
	template = unescape(template)
	var (
		parts   recordFormat
		literal []byte
	)
	for i := 0; i < len(template); i++ {
		ch := template[i]
		if ch != '%' {
			literal = append(literal, ch)
			continue
		}
		if i+1 == len(template) {
			return nil, fmt.Errorf("invalid --format %q: it ends with a lone %%", template)
		}
		i++
		verb := template[i]
		switch verb {
		case '%':
			literal = append(literal, '%')
		case 'k', 'v', 'p', 'o', 't', 'T', 'h':
			if len(literal) > 0 {
				parts = append(parts, formatPart{literal: string(literal)})
				literal = nil
			}
			parts = append(parts, formatPart{verb: verb})
		default:
			return nil, fmt.Errorf("invalid --format: unknown verb %%%c (known: %%k %%v %%p %%o %%t %%T %%h %%%%)", verb)
		}
	}
	if len(literal) > 0 {
		parts = append(parts, formatPart{literal: string(literal)})
	}
	return parts, nil
}

func (f recordFormat) print(out *bufio.Writer, r *kgo.Record) error {
	var buf []byte
	for _, part := range f {
		switch part.verb {
		case 0:
			buf = append(buf, part.literal...)
		case 'k':
			buf = append(buf, r.Key...)
		case 'v':
			buf = append(buf, r.Value...)
		case 'p':
			buf = strconv.AppendInt(buf, int64(r.Partition), 10)
		case 'o':
			buf = strconv.AppendInt(buf, r.Offset, 10)
		case 't':
			buf = strconv.AppendInt(buf, r.Timestamp.UnixMilli(), 10)
		case 'T':
			buf = append(buf, r.Topic...)
		case 'h':
			for i, h := range r.Headers {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, h.Key...)
				buf = append(buf, '=')
				buf = append(buf, h.Value...)
			}
		}
	}
	_, err := out.Write(buf)
	return err
}

// consumedRecord is the JSON line printed per record by "consume -o json".
// Key and value are null for a null key or value (a tombstone).
type consumedRecord struct {
	Topic     string           `json:"topic"`
	Partition int32            `json:"partition"`
	Offset    int64            `json:"offset"`
	Timestamp int64            `json:"timestamp"`
	Key       *string          `json:"key"`
	Value     *string          `json:"value"`
	Headers   []consumedHeader `json:"headers"`
}

type consumedHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type jsonRecordPrinter struct{}

func (jsonRecordPrinter) print(out *bufio.Writer, r *kgo.Record) error {
	line := consumedRecord{
		Topic:     r.Topic,
		Partition: r.Partition,
		Offset:    r.Offset,
		Timestamp: r.Timestamp.UnixMilli(),
		Key:       bytesOrNull(r.Key),
		Value:     bytesOrNull(r.Value),
		Headers:   make([]consumedHeader, 0, len(r.Headers)),
	}
	for _, h := range r.Headers {
		line.Headers = append(line.Headers, consumedHeader{Key: h.Key, Value: string(h.Value)})
	}
	encoded, err := json.Marshal(line)
	if err != nil {
		return err
	}
	encoded = append(encoded, '\n')
	_, err = out.Write(encoded)
	return err
}

func bytesOrNull(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}
