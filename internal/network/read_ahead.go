package network

import (
	"bufio"
	"encoding/binary"
	"sync/atomic"
)

// Reading ahead. A connection may read and parse up to
// Config.MaxInFlightRequestsPerConnection requests before the first is
// answered, where Kafka reads one and mutes the connection until its
// response is sent. With produce requests of several MB that multiplies the
// memory each producer holds: 10 producers at full speed held 216 MB of
// frames, most of them read ahead. So pooled frames read ahead of an
// unanswered request of their connection draw on one budget for the whole
// process, readAheadBytesMax; without room in it a connection waits until
// its requests are answered, as in Kafka, and reads the next one then. The
// memory of request frames is so bounded by one frame per connection plus
// the budget, whatever the number of producers.
//
// A frame whose request is never answered (a handler bug; its buffer is
// left to the garbage collector) keeps its share of the budget; the
// connections then fall back to Kafka's one request at a time.
//
// The budget holds one frame of a producer at full speed (12 partitions of
// a 1 MB batch: the 12 MiB class), which is what overlapping the reading
// and checking of one request with the append of the previous needs. At
// 64 MiB, one producer's five requests in flight held 60 MB where Kafka
// holds one, and ten producers' more than the rest of the broker.
const readAheadBytesMax = 16 << 20

// readAheadBytes is the size of the pooled frames read ahead and not yet
// released.
var readAheadBytes atomic.Int64

func reserveReadAhead(n int64) bool {
	for {
		used := readAheadBytes.Load()
		if used+n > readAheadBytesMax {
			return false
		}
		if readAheadBytes.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

func releaseReadAhead(n int64) {
	if readAheadBytes.Add(-n) < 0 && invariantsEnabled {
		panic("network: read-ahead budget released more than reserved")
	}
}

// awaitReadAheadRoom is called with the next frame's first byte arrived.
// If the frame is one that goes into a pooled buffer and the connection has
// requests unanswered, it reserves the buffer's size from the read-ahead
// budget, or waits until the connection has nothing unanswered. It returns
// the bytes reserved (the caller attaches them to the frame's buffer, or
// releases them), and false when the connection closed or the server
// stopped reading meanwhile.
func (c *connection) awaitReadAheadRoom(reader *bufio.Reader) (reserved int64, ok bool) {
	s := c.server
	// Peek no further than reading the frame would block for: its size,
	// and the api key only of a frame whose size the read accepts.
	prefix, err := reader.Peek(4)
	if err != nil {
		return 0, true // the frame's read reports it
	}
	size := int(int32(binary.BigEndian.Uint32(prefix)))
	if size < 2 || size > frameBufferPooledBytesMax || size > int(s.cfg.SocketRequestMaxBytes) {
		return 0, true
	}
	if prefix, err = reader.Peek(6); err != nil || !s.reusesBody(int16(binary.BigEndian.Uint16(prefix[4:]))) {
		return 0, true
	}
	n := int64(frameBufferClassBytes(frameBufferClass(size)))
	waited := false
	for c.hasUnanswered() {
		if reserveReadAhead(n) {
			return n, true
		}
		if !waited {
			waited = true
			s.counters.readAheadWaits.Add(1)
		}
		select {
		case <-c.turn:
			// Something was answered or let go; look again. addPending
			// checks its own condition, so taking the signal here is safe.
		case <-c.closed:
			return 0, false
		case <-s.stopReading:
			c.stopReading()
			return 0, false
		}
	}
	return 0, true
}
