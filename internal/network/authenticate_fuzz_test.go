package network

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzReadRawToken feeds arbitrary bytes to the reader of SaslHandshake
// v0's raw token frames: it never allocates past the bound and never
// returns a token longer than it.
func FuzzReadRawToken(f *testing.F) {
	f.Add(binary.BigEndian.AppendUint32(nil, 3), []byte("abc"))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, []byte{})
	f.Add([]byte{0, 0, 0, 0}, []byte{})
	f.Add([]byte{0, 0}, []byte{})
	f.Fuzz(func(t *testing.T, prefix, rest []byte) {
		const maxBytes = 64
		token, err := readRawToken(bytes.NewReader(append(prefix, rest...)), maxBytes)
		if err == nil && len(token) > maxBytes {
			t.Fatalf("token of %d bytes past the bound", len(token))
		}
	})
}
