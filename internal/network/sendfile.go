package network

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// errRegionTruncated marks a file region that ended before its promised
// length, for instance a segment truncated under a fetch. The size prefix
// has gone out already, so the connection cannot continue.
var errRegionTruncated = errors.New("network: file region shorter than promised")

// sendfileCallBytesMax bounds one sendfile(2) call; Linux itself stops at
// 0x7ffff000 bytes.
const sendfileCallBytesMax = 1 << 30

// copyBufferBytes is the size of the pooled buffers that carry file regions
// through ReadAt when sendfile cannot be used.
const copyBufferBytes = 64 << 10

var copyBuffers = sync.Pool{New: func() any {
	buffer := make([]byte, copyBufferBytes)
	return &buffer
}}

// fdFile is a RegionFile that exposes its descriptor.
type fdFile interface {
	Fd() uintptr
}

// syscallConnFile is a RegionFile whose descriptor can be borrowed safely
// against a concurrent Close, as *os.File allows.
type syscallConnFile interface {
	SyscallConn() (syscall.RawConn, error)
}

// writeFileRegion sends chunk's file region: with sendfile when the socket is
// plain TCP and the file has a descriptor, through ReadAt otherwise.
func (c *connection) writeFileRegion(chunk *Chunk) error {
	if chunk.Length == 0 {
		return nil
	}
	if tcpConn, ok := c.netConn.(*net.TCPConn); ok {
		if sent, err, tried := sendfileRegion(tcpConn, chunk); tried {
			c.server.counters.bytesSent.Add(uint64(sent))
			c.server.counters.sendfileBytes.Add(uint64(sent))
			return err
		}
	}
	return c.copyFileRegion(chunk)
}

// sendfileRegion sends chunk with sendfile(2). tried is false when the file
// has no descriptor to offer, so the caller copies instead.
func sendfileRegion(tcpConn *net.TCPConn, chunk *Chunk) (sent int64, err error, tried bool) {
	socket, err := tcpConn.SyscallConn()
	if err != nil {
		return 0, err, true
	}
	if file, ok := chunk.File.(syscallConnFile); ok {
		fileConn, err := file.SyscallConn()
		if err == nil {
			// Control holds the file's descriptor open until the callback
			// returns, even if the log closes the file meanwhile.
			controlErr := fileConn.Control(func(fileFd uintptr) {
				sent, err = sendfile(socket, int(fileFd), chunk.Offset, chunk.Length)
			})
			if controlErr != nil {
				return sent, fmt.Errorf("network: borrowing file descriptor: %w", controlErr), true
			}
			return sent, err, true
		}
	}
	if file, ok := chunk.File.(fdFile); ok {
		sent, err = sendfile(socket, int(file.Fd()), chunk.Offset, chunk.Length)
		return sent, err, true
	}
	return 0, nil, false
}

// sendfile sends length bytes of fileFd from offset to the socket, waiting
// for the socket to drain (and honouring its write deadline) when its buffer
// is full.
func sendfile(socket syscall.RawConn, fileFd int, offset, length int64) (int64, error) {
	position := offset
	end := offset + length
	var sendErr error
	err := socket.Write(func(socketFd uintptr) bool {
		for position < end {
			// sendfile advances position by what it sent, error or not.
			n, err := unix.Sendfile(int(socketFd), fileFd, &position, int(min(end-position, sendfileCallBytesMax)))
			switch {
			case err == unix.EAGAIN:
				return false // wait until the socket is writable, then call again
			case err == unix.EINTR:
				continue
			case err != nil:
				sendErr = fmt.Errorf("network: sendfile: %w", err)
				return true
			case n == 0:
				// Nothing sent and no error: the file ends before the region does.
				sendErr = fmt.Errorf("%w: ended at %d, expected %d", errRegionTruncated, position, end)
				return true
			}
		}
		return true
	})
	if err == nil {
		err = sendErr
	}
	return position - offset, err
}

// copyFileRegion sends chunk's region by reading it with ReadAt into pooled
// buffers, for files without a descriptor and sockets that are not plain TCP.
func (c *connection) copyFileRegion(chunk *Chunk) error {
	bufferPointer := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bufferPointer)
	buffer := *bufferPointer
	position, end := chunk.Offset, chunk.Offset+chunk.Length
	for position < end {
		want := buffer[:min(int64(len(buffer)), end-position)]
		n, readErr := chunk.File.ReadAt(want, position)
		written, err := c.netConn.Write(want[:n])
		c.server.counters.bytesSent.Add(uint64(written))
		c.server.counters.copiedFileBytes.Add(uint64(written))
		if err != nil {
			return err
		}
		if n < len(want) {
			if readErr == nil || readErr == io.EOF {
				readErr = fmt.Errorf("%w: ended at %d, expected %d", errRegionTruncated, position+int64(n), end)
			}
			return readErr
		}
		position += int64(n)
	}
	return nil
}
