package network

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Framing and header errors. Each closes the connection it came from, as in
// Kafka (InvalidReceiveException, InvalidRequestException).
var (
	ErrFrameTooLarge   = errors.New("network: frame larger than socket.request.max.bytes")
	ErrFrameTooSmall   = errors.New("network: frame smaller than a request header")
	ErrMalformedHeader = errors.New("network: malformed request header")
)

// apiVersionsKey is ApiVersions, whose response header is always v0 and whose
// request header is parsed tolerantly (see ParseRequestHeader).
const apiVersionsKey = 18

// RequestHeader is a parsed request header, v1 or (Flexible) v2.
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	// ClientID is nil when the client sent a null string (length -1).
	ClientID *string
	// Flexible reports a v2 header: the request version is flexible, so the
	// response header is v1 (except for ApiVersions).
	Flexible bool
}

// ParseRequestHeader parses the request header at the start of frame (the
// bytes after the size prefix) and returns it with the body that follows.
// isFlexible chooses between header v1 and v2; nil means DefaultIsFlexible.
// The body aliases frame.
//
// ApiVersions is parsed tolerantly, as Kafka does: a client may send a version
// newer than the broker knows, and the broker must still answer it (with
// UNSUPPORTED_VERSION in a v0 body) so that the client can downgrade. So when
// the tagged-field section of an ApiVersions header does not parse, the bytes
// after the client id are returned as the body instead of an error.
func ParseRequestHeader(frame []byte, isFlexible func(key, version int16) bool) (RequestHeader, []byte, error) {
	var header RequestHeader
	if len(frame) < minFrameBytes {
		return header, nil, fmt.Errorf("%w: %d bytes", ErrFrameTooSmall, len(frame))
	}
	header.APIKey = int16(binary.BigEndian.Uint16(frame[0:]))
	header.APIVersion = int16(binary.BigEndian.Uint16(frame[2:]))
	header.CorrelationID = int32(binary.BigEndian.Uint32(frame[4:]))
	rest := frame[8:]
	if len(rest) < 2 {
		return header, nil, fmt.Errorf("%w: key %d: no client id length", ErrMalformedHeader, header.APIKey)
	}
	clientIDLength := int16(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	switch {
	case clientIDLength == -1:
	case clientIDLength < -1 || int(clientIDLength) > len(rest):
		return header, nil, fmt.Errorf("%w: key %d: client id length %d with %d bytes left",
			ErrMalformedHeader, header.APIKey, clientIDLength, len(rest))
	default:
		clientID := string(rest[:clientIDLength])
		header.ClientID = &clientID
		rest = rest[clientIDLength:]
	}
	if isFlexible == nil {
		isFlexible = DefaultIsFlexible
	}
	header.Flexible = isFlexible(header.APIKey, header.APIVersion)
	if !header.Flexible {
		return header, rest, nil
	}
	body, err := skipTaggedFields(rest)
	if err != nil {
		if header.APIKey == apiVersionsKey {
			return header, rest, nil
		}
		return header, nil, fmt.Errorf("%w: key %d version %d: %w", ErrMalformedHeader, header.APIKey, header.APIVersion, err)
	}
	return header, body, nil
}

// skipTaggedFields returns b after a tagged-field section: a uvarint count,
// then per field a uvarint tag, a uvarint size and size bytes. The header
// defines no tags, so their values are ignored, as Kafka ignores unknown tags.
func skipTaggedFields(b []byte) ([]byte, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errors.New("bad tagged field count")
	}
	b = b[n:]
	// Each field takes at least two bytes, which bounds the loop by the input.
	if count > uint64(len(b))/2 {
		return nil, fmt.Errorf("%d tagged fields in %d bytes", count, len(b))
	}
	for i := uint64(0); i < count; i++ {
		_, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("bad tag")
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return nil, errors.New("bad tagged field size")
		}
		b = b[n+int(size):]
	}
	return b, nil
}

// DefaultIsFlexible reports whether kmsg knows the request version as
// flexible. Versions above the newest kmsg knows count as flexible when the
// API has any flexible version (flexibility never goes away again); unknown
// keys are not flexible.
func DefaultIsFlexible(key, version int16) bool {
	firstFlexible := firstFlexibleVersions()
	if key < 0 || int(key) >= len(firstFlexible) || version < 0 {
		return false
	}
	first := firstFlexible[key]
	return first >= 0 && version >= first
}

// firstFlexibleVersions is, per API key, the first flexible version kmsg
// knows, or -1 for none or an unknown key. kmsg allocates a request to answer
// the question, so it is asked once per key.
var firstFlexibleVersions = sync.OnceValue(func() []int16 {
	var table []int16
	for key := int16(0); key < math.MaxInt16; key++ {
		request := kmsg.RequestForKey(key)
		if request == nil {
			continue
		}
		for int(key) >= len(table) {
			table = append(table, -1)
		}
		for version := int16(0); version <= request.MaxVersion(); version++ {
			request.SetVersion(version)
			if request.IsFlexible() {
				table[key] = version
				break
			}
		}
	}
	return table
})

// readFrame reads one size-prefixed frame into a fresh allocation. It checks
// the size against maxBytes before allocating, so a hostile prefix costs
// nothing. sizeBuffer is four bytes of scratch space. io.EOF is returned only
// when r ends cleanly between frames; an end inside a frame is
// io.ErrUnexpectedEOF.
func readFrame(r io.Reader, maxBytes int32, sizeBuffer []byte) ([]byte, error) {
	return readFrameInto(r, maxBytes, sizeBuffer, nil)
}

// readFrameInto is readFrame with the frame's buffer chosen by frameFor,
// which is given the frame's size and API key (its first two bytes, read
// before the buffer is chosen) and returns a slice of exactly size bytes
// whose contents it need not clear: the frame overwrites all of them. A nil
// frameFor allocates.
func readFrameInto(r io.Reader, maxBytes int32, sizeBuffer []byte, frameFor func(size int, apiKey int16) []byte) ([]byte, error) {
	if _, err := io.ReadFull(r, sizeBuffer[:4]); err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(sizeBuffer))
	if err := checkFrameSize(size, maxBytes); err != nil {
		return nil, err
	}
	// size >= minFrameBytes, so the API key is inside the frame.
	if _, err := io.ReadFull(r, sizeBuffer[:2]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	apiKey := int16(binary.BigEndian.Uint16(sizeBuffer))
	var frame []byte
	if frameFor != nil {
		frame = frameFor(int(size), apiKey)
	} else {
		frame = make([]byte, size)
	}
	copy(frame, sizeBuffer[:2])
	if _, err := io.ReadFull(r, frame[2:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return frame, nil
}

// checkFrameSize rejects a size prefix that is negative, too small for a
// header, or above socket.request.max.bytes.
func checkFrameSize(size, maxBytes int32) error {
	switch {
	case size < minFrameBytes:
		return fmt.Errorf("%w: size %d", ErrFrameTooSmall, size)
	case size > maxBytes:
		return fmt.Errorf("%w: size %d, limit %d", ErrFrameTooLarge, size, maxBytes)
	}
	return nil
}

// responseHeaderBytesMax is the longest response prefix: size, correlation
// id and an empty tagged-field section.
const responseHeaderBytesMax = 9

// appendResponsePrefix appends a response's size prefix and header. bodyBytes
// is the body's length; taggedFields selects response header v1.
func appendResponsePrefix(dst []byte, correlationID int32, taggedFields bool, bodyBytes int64) []byte {
	headerBytes := int64(4)
	if taggedFields {
		headerBytes++
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(headerBytes+bodyBytes))
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	if taggedFields {
		dst = append(dst, 0)
	}
	return dst
}

// responseHasTaggedFields reports whether a response to a request with this
// header carries header v1: flexible versions of every API but ApiVersions.
func responseHasTaggedFields(header *RequestHeader) bool {
	return header.Flexible && header.APIKey != apiVersionsKey
}
