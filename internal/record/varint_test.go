package record

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
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

// TestVarintsAgainstBinary compares readVarint and readVarlong with
// encoding/binary's zigzag decoder on every one- and two-byte input and on
// random longer ones, cut short and overlong included: the same value and
// length where the value fits, and n <= 0 exactly where it does not.
func TestVarintsAgainstBinary(t *testing.T) {
	check := func(b []byte) {
		want, wantN := binary.Varint(b)
		got64, n64 := readVarlong(b)
		switch {
		case wantN > 0 && (got64 != want || n64 != wantN):
			t.Fatalf("readVarlong(% x) = %d, %d; want %d, %d", b, got64, n64, want, wantN)
		case wantN <= 0 && n64 > 0:
			t.Fatalf("readVarlong(% x) = %d, %d; binary.Varint rejects it (%d)", b, got64, n64, wantN)
		case wantN == 0 && len(b) < maxVarlongBytes && n64 != 0:
			// (Ten bytes that all continue overflow for readVarlong;
			// binary.Varint calls them cut short.)
			t.Fatalf("readVarlong(% x) n = %d for a cut varint", b, n64)
		}
		got32, n32 := readVarint(b)
		fits := wantN > 0 && want >= math.MinInt32 && want <= math.MaxInt32 && wantN <= maxVarintBytes
		switch {
		case fits && (int64(got32) != want || n32 != wantN):
			t.Fatalf("readVarint(% x) = %d, %d; want %d, %d", b, got32, n32, want, wantN)
		case !fits && n32 > 0:
			t.Fatalf("readVarint(% x) = %d, %d; does not fit 32 bits", b, got32, n32)
		}
	}
	for first := range 256 {
		check([]byte{byte(first)})
		for second := range 256 {
			check([]byte{byte(first), byte(second)})
			check([]byte{byte(first), byte(second), 0x01})
		}
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 200000 {
		b := make([]byte, 1+rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.Uint32())
			if rng.IntN(3) == 0 {
				b[i] |= 0x80
			}
		}
		check(b)
	}
}
