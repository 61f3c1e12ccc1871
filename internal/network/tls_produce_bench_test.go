package network

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
)

// BenchmarkProduceSizedRoundTripTLS is BenchmarkProduceSizedRoundTrip's
// 256 KiB request over plaintext and over TLS side by side, the frame read
// into a pooled buffer: the cost of reading and opening TLS records on the
// produce path.
func BenchmarkProduceSizedRoundTripTLS(b *testing.B) {
	p := newTestTLS(b)
	frame := requestFrame(3, 1, 1, stringPointer("bench"), nil, make([]byte, 256<<10))
	respondEmpty := HandlerFunc(func(ctx context.Context, req *Request) { req.Respond(BytesResponse(nil)) })
	for _, protocol := range []string{"PLAINTEXT", "SSL"} {
		b.Run(protocol, func(b *testing.B) {
			var conn net.Conn
			if protocol == "SSL" {
				s := startServer(b, Config{ReuseBodyAPIKeys: []int16{3}, Listeners: []ListenerSpec{p.listener(tls.NoClientCert)}}, respondEmpty)
				conn = p.dial(b, s, false)
			} else {
				s := startServer(b, Config{ReuseBodyAPIKeys: []int16{3}}, respondEmpty)
				plain, err := net.Dial("tcp", s.Addrs()[0].String())
				if err != nil {
					b.Fatal(err)
				}
				defer plain.Close()
				conn = plain
			}
			benchmarkRoundTrips(b, conn, frame)
		})
	}
}
