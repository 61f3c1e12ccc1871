package netport

import (
	"net"
	"strconv"
	"testing"
)

func TestFreeGivesDistinctBindablePortsBelowTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	seen := map[int]bool{}
	for range 200 {
		port, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
		if low-1-lowest >= 1000 && (port < lowest || port >= low) {
			t.Fatalf("port %d outside [%d, %d)", port, lowest, low)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d not bindable: %v", port, err)
		}
		l.Close()
	}
}
