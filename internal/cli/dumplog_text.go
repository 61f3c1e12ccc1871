package cli

import (
	"strings"
	"unicode/utf8"
)

// javaString decodes b as Java's UTF-8 decoder does when kafka-dump-log
// turns a key or payload into a String: every maximal ill-formed subpart
// (a byte that cannot start a sequence, or the valid start of a sequence cut
// short) becomes one U+FFFD, so binary keys and payloads print the same as
// Kafka prints them.
func javaString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	out.Grow(len(b) + 16)
	for i := 0; i < len(b); {
		if r, size := utf8.DecodeRune(b[i:]); r != utf8.RuneError || size > 1 {
			out.Write(b[i : i+size])
			i += size
			continue
		}
		i += illFormedPrefix(b[i:])
		out.WriteRune(utf8.RuneError)
	}
	return out.String()
}

// illFormedPrefix is the length of the maximal subpart of an ill-formed
// sequence at the start of b: 1 for a byte that cannot lead, else the
// leading byte and as many continuation bytes as stay valid for it
// (Unicode's table 3-7: E0 needs A0-BF next, ED 80-9F, F0 90-BF, F4 80-8F).
func illFormedPrefix(b []byte) int {
	lead := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case lead >= 0xC2 && lead <= 0xDF:
		need = 1
	case lead >= 0xE0 && lead <= 0xEF:
		need = 2
		if lead == 0xE0 {
			lo = 0xA0
		} else if lead == 0xED {
			hi = 0x9F
		}
	case lead >= 0xF0 && lead <= 0xF4:
		need = 3
		if lead == 0xF0 {
			lo = 0x90
		} else if lead == 0xF4 {
			hi = 0x8F
		}
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}
