package diffcheck

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	// maxResponseBytes bounds one response frame read from either broker
	// (the clients' fetch.max.bytes default is 52428800; the largest
	// answer here is far smaller).
	maxResponseBytes = 64 << 20
	// requestTimeout bounds one round trip.
	requestTimeout = 30 * time.Second
	clientID       = "samsa-diffcheck"
	apiVersionsKey = 18
)

// Conn is one connection to a broker that sends requests at the version
// set on them.
type Conn struct {
	addr        string
	conn        net.Conn
	formatter   *kmsg.RequestFormatter
	correlation int32
}

// Dial connects to addr.
func Dial(addr string) (*Conn, error) {
	c := &Conn{addr: addr, formatter: kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))}
	return c, c.redial()
}

func (c *Conn) redial() error {
	if c.conn != nil {
		c.conn.Close()
	}
	conn, err := net.DialTimeout("tcp", c.addr, requestTimeout)
	if err != nil {
		return err
	}
	c.conn = conn
	return nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.conn.Close() }

// ErrClosed says the broker closed the connection instead of answering,
// which Kafka does for requests it cannot parse or may not answer.
var ErrClosed = errors.New("connection closed by the broker")

// RoundTrip sends req and decodes the answer. A broker that closes the
// connection gives ErrClosed, and the next call dials again.
func (c *Conn) RoundTrip(req kmsg.Request) (kmsg.Response, error) {
	if c.conn == nil {
		if err := c.redial(); err != nil {
			return nil, err
		}
	}
	c.correlation++
	frame := c.formatter.AppendRequest(nil, req, c.correlation)
	_ = c.conn.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := c.conn.Write(frame); err != nil {
		c.drop()
		return nil, ErrClosed
	}
	var size [4]byte
	if _, err := io.ReadFull(c.conn, size[:]); err != nil {
		c.drop()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err) {
			return nil, ErrClosed
		}
		return nil, err
	}
	length := int32(binary.BigEndian.Uint32(size[:]))
	if length < 4 || length > maxResponseBytes {
		c.drop()
		return nil, fmt.Errorf("response frame of %d bytes", length)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(c.conn, body); err != nil {
		c.drop()
		return nil, err
	}
	correlation, rest, err := parseResponseHeader(body, req.IsFlexible() && req.Key() != apiVersionsKey)
	if err != nil {
		c.drop()
		return nil, err
	}
	if correlation != c.correlation {
		c.drop()
		return nil, fmt.Errorf("correlation id %d, want %d", correlation, c.correlation)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(rest); err != nil {
		return nil, fmt.Errorf("decoding %s v%d response: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp, nil
}

func (c *Conn) drop() {
	c.conn.Close()
	c.conn = nil
}

// isReset reports a connection the broker reset or closed, not one that
// timed out waiting for an answer.
func isReset(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && !opErr.Timeout()
}

// parseResponseHeader splits a response frame (without its size) into the
// correlation id and the body; a flexible header (v1) carries tagged
// fields, which are skipped.
func parseResponseHeader(frame []byte, flexible bool) (int32, []byte, error) {
	if len(frame) < 4 {
		return 0, nil, errors.New("response shorter than its header")
	}
	correlation := int32(binary.BigEndian.Uint32(frame))
	rest := frame[4:]
	if !flexible {
		return correlation, rest, nil
	}
	reader := kbin.Reader{Src: rest}
	tags := reader.Uvarint()
	for range tags {
		reader.Uvarint() // the tag
		size := reader.Uvarint()
		reader.Span(int(size))
		if reader.Complete() != nil {
			break
		}
	}
	if err := reader.Complete(); err != nil {
		return 0, nil, fmt.Errorf("response header tagged fields: %w", err)
	}
	return correlation, reader.Src, nil
}
