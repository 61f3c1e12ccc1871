package cli

import (
	"io"
	"testing"

	"github.com/samsa-streaming/samsa/internal/record"
)

func TestJavaStringReplacesMaximalSubparts(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{[]byte("plain"), "plain"},
		{[]byte("é€😀"), "é€😀"},
		{[]byte{0xff, 'a'}, "\uFFFDa"},
		{[]byte{0xe2, 0x82, 'a'}, "\uFFFDa"},       // a 3-byte sequence cut short: one
		{[]byte{0xe0, 0x80, 'a'}, "\uFFFD\uFFFDa"}, // E0 80 is not a valid start: two
		{[]byte{0xf0, 0x9f, 0x98}, "\uFFFD"},       // a 4-byte sequence cut short at the end
		{[]byte{0xed, 0xa0, 0x80}, "\uFFFD\uFFFD\uFFFD"},
		{[]byte{0xc0, 0xaf}, "\uFFFD\uFFFD"},
	} {
		if got := javaString(c.in); got != c.want {
			t.Errorf("javaString(% x) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzJavaString(f *testing.F) {
	for _, seed := range [][]byte{nil, []byte("ok"), {0xe2, 0x82}, {0xf4, 0x90, 0x80, 0x80}, {0xff}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := javaString(b)
		if len(b) > 0 && len(s) == 0 {
			t.Fatalf("javaString(% x) is empty", b)
		}
		for _, r := range s {
			_ = r
		}
	})
}

// FuzzDumpSegment: whatever bytes a segment file holds, dump-log decodes
// and prints them without panicking, deep and with data.
func FuzzDumpSegment(f *testing.F) {
	plain, err := record.Build(record.BuildOptions{BaseSequence: -1, ProducerID: -1, ProducerEpoch: -1, BaseTimestamp: 1000, Compression: record.CodecGzip},
		[]record.Record{{Key: []byte("k"), Value: []byte{0xe2, 0x82}, Headers: []record.RecordHeader{{Key: "h", Value: []byte("v")}}}, {Value: nil}})
	if err != nil {
		f.Fatal(err)
	}
	marker, err := record.BuildControlBatch(record.ControlBatchOptions{BaseOffset: 2, ProducerID: 7, Type: record.ControlAbort, CoordinatorEpoch: 3})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(plain)
	f.Add(append(append([]byte{}, plain...), marker...))
	f.Add(marker[:len(marker)-3])
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, deep := range []bool{false, true} {
			printDump(io.Discard, dumpSegment(data, deep, deep))
		}
		printDump(io.Discard, dumpOffsetIndex(data, 0))
		printDump(io.Discard, dumpTimeIndex(data, 0))
		_ = controlMarker(data, data)
	})
}
