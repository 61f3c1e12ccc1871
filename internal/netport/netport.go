// Package netport finds free TCP ports for the processes tests and tools
// start, which are told their port before they bind it.
//
// A port the kernel hands out for an ephemeral bind (":0") comes from the
// same range as the local ports of outgoing connections, so between
// learning it and the process binding it any connection on the machine may
// take it, and the process then finds it in use, or a client finds some
// other listener there. Free picks below that range instead, where only
// explicit binds land.
package netport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// lowest is the lowest port Free picks: below it sit the well-known and
// registered services a machine may run.
const lowest = 20000

// attempts bounds the random picks before Free falls back to an ephemeral
// port.
const attempts = 100

var (
	mu sync.Mutex
	// given are the ports this process handed out, never handed out again.
	given = map[int]bool{}
)

// Free returns a TCP port on 127.0.0.1 nobody listens on, not handed out
// before by this process, outside the kernel's ephemeral range when that is
// known and leaves room.
func Free() (int, error) {
	mu.Lock()
	defer mu.Unlock()
	if highest := ephemeralLow() - 1; highest-lowest >= 1000 {
		for range attempts {
			port := lowest + rand.IntN(highest-lowest+1)
			if given[port] {
				continue
			}
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				continue
			}
			l.Close()
			given[port] = true
			return port, nil
		}
	}
	for range attempts {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !given[port] {
			given[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("free port: no port found in %d attempts", attempts)
}

// ephemeralLow is the first port of Linux's ephemeral range, 0 when it
// cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 0
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0
	}
	return low
}
