package diffcheck

import "testing"

func FuzzParseResponseHeader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1}, false)
	f.Add([]byte{0, 0, 0, 1, 0, 9, 9}, true)
	f.Add([]byte{0, 0, 0, 1, 1, 3, 2, 7, 7, 5}, true)
	f.Add([]byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f}, true)
	f.Fuzz(func(t *testing.T, frame []byte, flexible bool) {
		_, rest, err := parseResponseHeader(frame, flexible)
		if err == nil && len(rest) > len(frame) {
			t.Fatalf("body longer than the frame")
		}
	})
}
