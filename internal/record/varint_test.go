package record

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestVarints(t *testing.T) {
	values := []int64{0, 1, -1, 63, -64, 64, -65, 8191, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64, 1 << 40}
	for _, v := range values {
		encoded := appendVarint(nil, v)
		// encoding/binary's varint is the same zigzag encoding Kafka uses.
		if want := binary.AppendVarint(nil, v); string(encoded) != string(want) {
			t.Fatalf("appendVarint(%d) = % x, want % x", v, encoded, want)
		}
		if varintSize(v) != len(encoded) {
			t.Fatalf("varintSize(%d) = %d, encoded %d bytes", v, varintSize(v), len(encoded))
		}
		got, n := readVarlong(encoded)
		if got != v || n != len(encoded) {
			t.Fatalf("readVarlong(% x) = %d, %d", encoded, got, n)
		}
		got32, n := readVarint(encoded)
		fits := v >= math.MinInt32 && v <= math.MaxInt32
		if fits && (int64(got32) != v || n != len(encoded)) {
			t.Fatalf("readVarint(% x) = %d, %d", encoded, got32, n)
		}
		if !fits && n > 0 {
			t.Fatalf("readVarint(% x) accepted %d, which overflows", encoded, got32)
		}
		if n, m := len(encoded), 0; n > 1 {
			if _, m = readVarlong(encoded[:n-1]); m != 0 {
				t.Fatalf("readVarlong of a cut varint: n %d", m)
			}
		}
	}
	if _, n := readVarint(nil); n != 0 {
		t.Fatal("readVarint(nil)")
	}
	if _, n := readVarlong([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}); n != -1 {
		t.Fatal("readVarlong accepted 11 bytes")
	}
	if _, n := readVarint([]byte{0xff, 0xff, 0xff, 0xff, 0x1f}); n != -1 {
		t.Fatal("readVarint accepted 33 bits")
	}
}
