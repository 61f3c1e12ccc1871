package console

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
)

// FuzzParseScanRequest feeds arbitrary query strings to the records
// browser's parser: it must answer a request or an error, never panic, and
// what it accepts must be inside its bounds.
func FuzzParseScanRequest(f *testing.F) {
	for _, seed := range []string{
		"", "partition=0,1&start=offset&offset=5&limit=10", "start=timestamp&timestamp=2026-01-02T15:04:05Z",
		"start=timestamp&timestamp=1700000000000", "cursor=0:5,1:7&format=hex", "filter=value.contains(%22a%22)",
		"partition=-1", "limit=0", "cursor=:", "start=latest&partition=all", "timestamp=9999-12-31T23:59:59Z&start=timestamp",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		values, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := parseScanRequest(values, 500)
		if err != nil {
			return
		}
		if q.Limit < 1 || q.Limit > 500 || q.Offset < 0 || q.TimestampMs < 0 || len(q.Filter) > filterMaxBytes {
			t.Fatalf("accepted out of bounds: %+v", q)
		}
		for p, o := range q.Cursor {
			if p < 0 || o < 0 {
				t.Fatalf("accepted cursor %v", q.Cursor)
			}
		}
		if q.Cursor != nil {
			again, err := parseCursor(formatCursor(q.Cursor))
			if err != nil || len(again) != len(q.Cursor) {
				t.Fatalf("cursor round trip: %v -> %v, %v", q.Cursor, again, err)
			}
		}
		// A filter that parses must compile or fail cleanly, and evaluate
		// on a record within its cost bound.
		if filter, err := compileFilter(q.Filter); err == nil && filter != nil {
			_, _ = filter.keep(context.Background(), &kgo.Record{Key: []byte("k"), Value: []byte(`{"a":1}`)})
		}
	})
}

func TestParseTimestamp(t *testing.T) {
	for raw, want := range map[string]int64{
		"0": 0, "1700000000000": 1700000000000, "1970-01-01T00:00:01Z": 1000, "1970-01-01T00:00:02": 2000, "1970-01-01T00:01": 60000,
	} {
		if got, err := parseTimestamp(raw); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "-5", "yesterday", "0001-01-01T00:00:00Z", "2026-13-01T00:00:00Z"} {
		if _, err := parseTimestamp(raw); err == nil {
			t.Errorf("%q accepted", raw)
		}
	}
}

func TestFilterBoundsAndErrors(t *testing.T) {
	if _, err := compileFilter(`value.contains(`); err == nil || !strings.Contains(err.Error(), "filter") {
		t.Fatalf("malformed: %v", err)
	}
	if _, err := compileFilter(`offset + 1`); err == nil || !strings.Contains(err.Error(), "expected a bool") {
		t.Fatalf("not a bool: %v", err)
	}
	f, err := compileFilter(`json.kind == "even" && headers["h"] == "v" && offset >= 3`)
	if err != nil {
		t.Fatal(err)
	}
	record := &kgo.Record{Value: []byte(`{"kind":"even"}`), Offset: 3, Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}}
	if keep, err := f.keep(context.Background(), record); !keep || err != nil {
		t.Fatalf("keep: %v %v", keep, err)
	}
	// An expression that would run away is cut off by the cost limit.
	spin, err := compileFilter(`[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(g, value.size() >= 0))))))`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := spin.keep(context.Background(), record); err == nil {
		t.Fatal("a million-step filter ran to the end")
	}
}

func TestRingKeepsTheLastSamples(t *testing.T) {
	r := NewRing(3)
	for i := range 5 {
		r.Add(Sample{TimeMs: int64(i)})
	}
	got := r.Samples()
	if len(got) != 3 || got[0].TimeMs != 2 || got[2].TimeMs != 4 {
		t.Fatalf("ring: %+v", got)
	}
	s := rate(counters{timeMs: 0, bytesIn: 100, produceSeconds: 1, produceCount: 10}, counters{timeMs: 2000, bytesIn: 300, produceSeconds: 1.5, produceCount: 20})
	if s.BytesInPerSec != 100 || s.ProduceLatencyMs != 50 {
		t.Fatalf("rate: %+v", s)
	}
	// A counter reset reads as zero, not negative.
	if s := rate(counters{timeMs: 0, bytesIn: 300}, counters{timeMs: 1000, bytesIn: 10}); s.BytesInPerSec != 0 {
		t.Fatalf("reset: %+v", s)
	}
}

func TestDiffLines(t *testing.T) {
	diff, _ := diffLines("a\nb\nc", "a\nc\nd")
	var kinds []string
	for _, line := range diff {
		kinds = append(kinds, line.Kind[:1]+line.Text)
	}
	if got := strings.Join(kinds, " "); got != "sa rb sc ad" {
		t.Fatalf("diff: %s", got)
	}
}

// FuzzRenderRecordBytes renders arbitrary record bytes in every format,
// including through the registry path with an Avro schema cached for id 1:
// never a panic, and never more text than the display bound.
func FuzzRenderRecordBytes(f *testing.F) {
	schema, err := avro.Parse(`{"type":"record","name":"R","fields":[{"name":"s","type":"string"},{"name":"n","type":["null","long"]},{"name":"m","type":{"type":"map","values":"int"}}]}`)
	if err != nil {
		f.Fatal(err)
	}
	d := newDecoder("http://127.0.0.1:1", "", "")
	d.mu.schemas[1] = decodedSchema{kind: "avro", avro: schema}
	d.mu.schemas[2] = decodedSchema{kind: "json-schema"}
	for _, seed := range [][]byte{nil, {}, []byte(`{"a":[1,2]}`), {0, 0, 0, 0, 1, 2, 'h', 'i', 0, 0}, {0, 0, 0, 0, 2, '{', '}'}, {0xff, 0xfe, 0x80}, []byte("plain text é")} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, format := range formats {
			out := d.render(context.Background(), b, format)
			if len(out.Text) > renderedBytesMax+renderedBytesMax/3*4 {
				t.Fatalf("%s: %d bytes of text", format, len(out.Text))
			}
			if b == nil && out.Kind != "null" {
				t.Fatalf("nil rendered as %s", out.Kind)
			}
		}
	})
}
