package record

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestShortRecordParseMatchesGeneral: wherever parseShortRecord accepts
// bytes, parseAnyRecord accepts them too with the same length and fields;
// it accepts the records it is meant for (no headers, short varints); and
// parseRecord's answer, error included, is parseAnyRecord's, on encoded
// records of many shapes and on random damage to them.
func TestShortRecordParseMatchesGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	sizes := []int{-1, 0, 1, 50, 63, 64, 100, 1000, 8000, 9000}
	var accepted, shortShaped int
	for i := range 20000 {
		r := Record{
			Attributes:     int8(rng.IntN(3)),
			TimestampDelta: []int64{0, 5, -3, 63, 64, 8191, 8192, 1 << 40}[rng.IntN(8)],
		}
		if size := sizes[rng.IntN(len(sizes))]; size >= 0 {
			r.Key = bytes.Repeat([]byte{'k'}, size%200)
		}
		if size := sizes[rng.IntN(len(sizes))]; size >= 0 {
			r.Value = bytes.Repeat([]byte{'v'}, size)
		}
		if rng.IntN(5) == 0 {
			r.Headers = []RecordHeader{{Key: "h", Value: []byte("x")}}
		}
		offsetDelta := []int32{0, 1, 63, 64, 8191, 8192, 70000}[rng.IntN(7)]
		encoded := appendRecord(nil, &r, offsetDelta)
		undamagedShort := false
		if rng.IntN(2) == 0 {
			// Damage a byte, cut the end, or add bytes after the record.
			switch rng.IntN(3) {
			case 0:
				encoded[rng.IntN(len(encoded))] = byte(rng.Uint32())
			case 1:
				encoded = encoded[:rng.IntN(len(encoded))]
			default:
				encoded = append(encoded, 0, 1, 2)
			}
		} else if len(r.Headers) == 0 && len(encoded) < 8000 && offsetDelta < 8192 &&
			r.TimestampDelta > -8192 && r.TimestampDelta < 8192 {
			shortShaped++
			undamagedShort = true
		}
		var short, general rawRecord
		n, ok := parseShortRecord(encoded, &short)
		wantN, wantErr := parseAnyRecord(encoded, &general)
		if undamagedShort && !ok {
			t.Fatalf("case %d: the short parse refused a record of its shape: % x", i, encoded)
		}
		if ok {
			accepted++
			if wantErr != nil || n != wantN || !sameRawRecord(&short, &general) {
				t.Fatalf("case %d: short parse %d %+v, general %d %+v %v", i, n, short, wantN, general, wantErr)
			}
		}
		var got rawRecord
		gotN, gotErr := parseRecord(encoded, &got)
		if (gotErr == nil) != (wantErr == nil) || gotN != wantN ||
			(gotErr != nil && gotErr.Error() != wantErr.Error()) || (gotErr == nil && !sameRawRecord(&got, &general)) {
			t.Fatalf("case %d: parseRecord %d %v, parseAnyRecord %d %v", i, gotN, gotErr, wantN, wantErr)
		}
	}
	t.Logf("%d short-shaped records, %d accepted by the short parse", shortShaped, accepted)
}

func sameRawRecord(a, b *rawRecord) bool {
	return a.attributes == b.attributes && a.timestampDelta == b.timestampDelta && a.offsetDelta == b.offsetDelta &&
		(a.key == nil) == (b.key == nil) && bytes.Equal(a.key, b.key) && cap(a.key) == cap(b.key) &&
		(a.value == nil) == (b.value == nil) && bytes.Equal(a.value, b.value) && cap(a.value) == cap(b.value) &&
		a.headerCount == b.headerCount && bytes.Equal(a.headers, b.headers) && (a.headers == nil) == (b.headers == nil)
}

// FuzzShortRecord: on any bytes, parseShortRecord accepts only what
// parseAnyRecord accepts, with the same length and fields.
func FuzzShortRecord(f *testing.F) {
	f.Add(appendRecord(nil, &Record{Value: []byte("value")}, 0))
	f.Add(appendRecord(nil, &Record{Key: []byte("k"), Value: bytes.Repeat([]byte{'v'}, 100), TimestampDelta: 300}, 200))
	f.Add(appendRecord(nil, &Record{Value: []byte("h"), Headers: []RecordHeader{{Key: "a"}}}, 1))
	f.Add([]byte{0x80, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		var short, general rawRecord
		n, ok := parseShortRecord(b, &short)
		wantN, err := parseAnyRecord(b, &general)
		if ok && (err != nil || n != wantN || !sameRawRecord(&short, &general)) {
			t.Fatalf("short parse %d %+v, general %d %+v %v", n, short, wantN, general, err)
		}
	})
}
