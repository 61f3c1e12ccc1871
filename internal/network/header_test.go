package network

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestDefaultIsFlexible(t *testing.T) {
	for _, tc := range []struct {
		key, version int16
		want         bool
	}{
		{0, 8, false},   // Produce v8
		{0, 9, true},    // Produce v9: first flexible
		{3, 8, false},   // Metadata v8
		{3, 9, true},    // Metadata v9
		{18, 2, false},  // ApiVersions v2
		{18, 3, true},   // ApiVersions v3
		{18, 999, true}, // newer than kmsg knows: still header v2
		{-1, 0, false},
		{18, -1, false},
		{30000, 5, false}, // unknown key
	} {
		if got := DefaultIsFlexible(tc.key, tc.version); got != tc.want {
			t.Errorf("DefaultIsFlexible(%d, %d) = %v, want %v", tc.key, tc.version, got, tc.want)
		}
	}
}

func TestParseRequestHeader(t *testing.T) {
	body := []byte("body")
	for _, tc := range []struct {
		name      string
		frame     []byte
		wantErr   error
		wantID    *string
		wantBody  []byte
		wantFlexi bool
	}{
		{name: "v1", frame: requestFrame(3, 1, 7, stringPointer("c"), nil, body), wantID: stringPointer("c"), wantBody: body},
		{name: "v1 null client id", frame: requestFrame(3, 1, 7, nil, nil, body), wantBody: body},
		{name: "v1 empty body", frame: requestFrame(3, 1, 7, stringPointer(""), nil, nil), wantID: stringPointer(""), wantBody: []byte{}},
		{name: "v2 no tags", frame: requestFrame(3, 12, 7, stringPointer("c"), []byte{0}, body),
			wantID: stringPointer("c"), wantBody: body, wantFlexi: true},
		{name: "v2 two tags", frame: requestFrame(3, 12, 7, stringPointer("c"), []byte{2, 0, 1, 0xaa, 5, 2, 0xbb, 0xcc}, body),
			wantID: stringPointer("c"), wantBody: body, wantFlexi: true},
		{name: "v2 missing tags", frame: requestFrame(3, 12, 7, stringPointer("c"), nil, nil), wantErr: ErrMalformedHeader},
		{name: "v2 tag size past end", frame: requestFrame(3, 12, 7, stringPointer("c"), []byte{1, 0, 9, 1}, nil), wantErr: ErrMalformedHeader},
		{name: "v2 count past end", frame: requestFrame(3, 12, 7, stringPointer("c"), []byte{100}, nil), wantErr: ErrMalformedHeader},
		// The client id length says 0x7f00 bytes where one follows.
		{name: "client id past end", frame: []byte{0, 0, 0, 0, 0, 3, 0, 1, 0, 0, 0, 7, 0x7f, 0, 'x'}, wantErr: ErrMalformedHeader},
		{name: "client id length below -1", frame: []byte{0, 0, 0, 0, 0, 3, 0, 1, 0, 0, 0, 7, 0xff, 0xfe}, wantErr: ErrMalformedHeader},
		{name: "no client id length", frame: requestFrame(3, 1, 7, nil, nil, nil)[:12], wantErr: ErrMalformedHeader},
		{name: "too short", frame: []byte{0, 0, 0, 4, 0, 3, 0, 1}, wantErr: ErrFrameTooSmall},
		// ApiVersions of an unknown version with garbage where the tags go:
		// kept, so that the API layer can answer UNSUPPORTED_VERSION.
		{name: "ApiVersions tolerant", frame: requestFrame(18, 999, 7, stringPointer("c"), nil, []byte{0xff}),
			wantID: stringPointer("c"), wantBody: []byte{0xff}, wantFlexi: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header, gotBody, err := ParseRequestHeader(tc.frame[4:], nil)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if header.APIKey != int16(tc.frame[5]) || header.CorrelationID != 7 || header.Flexible != tc.wantFlexi {
				t.Errorf("header = %+v", header)
			}
			if (header.ClientID == nil) != (tc.wantID == nil) || header.ClientID != nil && *header.ClientID != *tc.wantID {
				t.Errorf("client id = %v, want %v", header.ClientID, tc.wantID)
			}
			if !bytes.Equal(gotBody, tc.wantBody) {
				t.Errorf("body = %x, want %x", gotBody, tc.wantBody)
			}
		})
	}
}

func TestReadFrame(t *testing.T) {
	sizeBuffer := make([]byte, 4)
	frame := requestFrame(3, 1, 7, nil, nil, []byte("abc"))
	for _, tc := range []struct {
		name    string
		input   []byte
		max     int32
		wantErr error
	}{
		{"whole", frame, 1024, nil},
		{"clean end", nil, 1024, io.EOF},
		{"end in size", frame[:2], 1024, io.ErrUnexpectedEOF},
		{"end in body", frame[:len(frame)-1], 1024, io.ErrUnexpectedEOF},
		{"over max", frame, int32(len(frame) - 5), ErrFrameTooLarge},
		{"negative", []byte{0xff, 0xff, 0xff, 0xff}, 1024, ErrFrameTooSmall},
		{"under 8", []byte{0, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7}, 1024, ErrFrameTooSmall},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readFrame(bytes.NewReader(tc.input), tc.max, sizeBuffer)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil && !bytes.Equal(got, frame[4:]) {
				t.Fatalf("frame = %x", got)
			}
		})
	}
}

func TestAppendResponsePrefix(t *testing.T) {
	got := appendResponsePrefix(nil, 0x01020304, true, 3)
	want := []byte{0, 0, 0, 8, 1, 2, 3, 4, 0}
	if !bytes.Equal(got, want) {
		t.Fatalf("v1 prefix = % x, want % x", got, want)
	}
	got = appendResponsePrefix(nil, 0x01020304, false, 3)
	want = []byte{0, 0, 0, 7, 1, 2, 3, 4}
	if !bytes.Equal(got, want) {
		t.Fatalf("v0 prefix = % x, want % x", got, want)
	}
	if responseHasTaggedFields(&RequestHeader{APIKey: apiVersionsKey, Flexible: true}) {
		t.Fatal("ApiVersions response header must be v0")
	}
}

// FuzzParseRequestHeader checks that no header bytes panic the parser and
// that the body it returns lies inside the frame.
func FuzzParseRequestHeader(f *testing.F) {
	f.Add(requestFrame(3, 1, 7, stringPointer("c"), nil, []byte("body"))[4:])
	f.Add(requestFrame(3, 12, 7, stringPointer("c"), []byte{2, 0, 1, 0xaa, 5, 2, 0xbb, 0xcc}, nil)[4:])
	f.Add(requestFrame(18, 999, 7, nil, []byte{0xff, 0xff, 0xff}, nil)[4:])
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0})
	f.Fuzz(func(t *testing.T, frame []byte) {
		header, body, err := ParseRequestHeader(frame, nil)
		if err != nil {
			return
		}
		if len(body) > len(frame)-10 {
			t.Fatalf("body of %d bytes from a frame of %d", len(body), len(frame))
		}
		if header.ClientID != nil && len(*header.ClientID) > len(frame) {
			t.Fatal("client id longer than the frame")
		}
	})
}

// FuzzReadFrame checks that framing any byte stream neither panics nor
// returns a frame outside the limits.
func FuzzReadFrame(f *testing.F) {
	f.Add(requestFrame(3, 1, 7, nil, nil, []byte("abc")), int32(1024))
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 0}, int32(100<<20))
	f.Add([]byte{0xff, 0xff, 0xff, 0xf0}, int32(8))
	f.Fuzz(func(t *testing.T, stream []byte, maxBytes int32) {
		if maxBytes > 1<<20 {
			maxBytes = 1 << 20 // keep a hostile size prefix from allocating much
		}
		reader := bytes.NewReader(stream)
		sizeBuffer := make([]byte, 4)
		for {
			frame, err := readFrame(reader, maxBytes, sizeBuffer)
			if err != nil {
				return
			}
			if len(frame) < minFrameBytes || int64(len(frame)) > int64(maxBytes) {
				t.Fatalf("frame of %d bytes, limit %d", len(frame), maxBytes)
			}
			ParseRequestHeader(frame, nil)
		}
	})
}
