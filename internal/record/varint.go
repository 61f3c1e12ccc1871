package record

// Zigzag varints as Kafka writes them in records (ByteUtils.writeVarint).
// Readers return n <= 0 when b ends early or the value overflows its type, so
// callers never index past b.

// maxVarintBytes and maxVarlongBytes are the longest encodings of an int32
// and an int64.
const (
	maxVarintBytes  = 5
	maxVarlongBytes = 10
)

// readVarint decodes a zigzag varint that fits an int32 from the start of b.
// It returns the value and the bytes read, or n == 0 if b ends first and
// n == -1 if the encoding overflows 32 bits. The one- and two-byte forms,
// which are most of a record's fields (lengths and deltas below 8192),
// take no loop.
func readVarint(b []byte) (int32, int) {
	if len(b) > 0 && b[0] < 0x80 {
		u := uint32(b[0])
		return int32(u>>1) ^ -int32(u&1), 1
	}
	return readVarintLonger(b)
}

// readVarintLonger is readVarint past the one-byte form.
func readVarintLonger(b []byte) (int32, int) {
	if len(b) >= 2 && b[1] < 0x80 {
		u := uint32(b[0]&0x7f) | uint32(b[1])<<7
		return int32(u>>1) ^ -int32(u&1), 2
	}
	var u uint32
	for i := 0; i < maxVarintBytes; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		if i == maxVarintBytes-1 && c > 0x0f {
			return 0, -1
		}
		u |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int32(u>>1) ^ -int32(u&1), i + 1
		}
	}
	return 0, -1
}

// readVarlong decodes a zigzag varint that fits an int64 from the start of b,
// with readVarint's conventions for n and its fast forms.
func readVarlong(b []byte) (int64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		u := uint64(b[0])
		return int64(u>>1) ^ -int64(u&1), 1
	}
	return readVarlongLonger(b)
}

// readVarlongLonger is readVarlong past the one-byte form.
func readVarlongLonger(b []byte) (int64, int) {
	if len(b) >= 2 && b[1] < 0x80 {
		u := uint64(b[0]&0x7f) | uint64(b[1])<<7
		return int64(u>>1) ^ -int64(u&1), 2
	}
	var u uint64
	for i := 0; i < maxVarlongBytes; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		if i == maxVarlongBytes-1 && c > 0x01 {
			return 0, -1
		}
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), i + 1
		}
	}
	return 0, -1
}

// appendVarint appends v as a zigzag varint.
func appendVarint(dst []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// varintSize is the length of v's zigzag varint encoding.
func varintSize(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}
