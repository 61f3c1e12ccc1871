package quorum

import (
	"errors"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// userTimeoutControl returns a net.Dialer Control function that sets
// TCP_USER_TIMEOUT to timeout: once data written to the connection has gone
// unacknowledged by the peer's TCP for that long, the kernel fails the
// connection and the next write returns an error.
func userTimeoutControl(timeout time.Duration) func(network, address string, raw syscall.RawConn) error {
	ms := int(timeout.Milliseconds())
	return func(network, address string, raw syscall.RawConn) error {
		if ms <= 0 {
			return nil
		}
		var setErr error
		err := raw.Control(func(fd uintptr) {
			setErr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, ms)
		})
		return errors.Join(err, setErr)
	}
}
