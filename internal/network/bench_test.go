package network

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// BenchmarkRoundTrip measures one request and its response over loopback,
// sequentially on one connection, through the Server with a trivial handler
// and, as the reference, through a bare TCP echo of the same frames: the
// difference is the cost of the queue, the handler pool and the writer.
func BenchmarkRoundTrip(b *testing.B) {
	body := make([]byte, 100)
	frame := requestFrame(3, 1, 1, stringPointer("bench"), nil, body)

	b.Run("server", func(b *testing.B) {
		s := startServer(b, Config{}, echoHandler)
		conn, err := net.Dial("tcp", s.Addrs()[0].String())
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		benchmarkRoundTrips(b, conn, frame)
	})

	b.Run("tcp-echo", func(b *testing.B) {
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer listener.Close()
		go echoFrames(listener)
		conn, err := net.Dial("tcp", listener.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		benchmarkRoundTrips(b, conn, frame)
	})
}

func benchmarkRoundTrips(b *testing.B, conn net.Conn, frame []byte) {
	reader := bufio.NewReader(conn)
	response := make([]byte, 4+len(frame))
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := conn.Write(frame); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(reader, response[:4]); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(reader, response[:binary.BigEndian.Uint32(response)]); err != nil {
			b.Fatal(err)
		}
	}
}

// echoFrames answers each frame like the Server with echoHandler would: the
// correlation id, then the bytes after the header (no client id parsing).
func echoFrames(listener net.Listener) {
	for {
		conn, err := listener.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			reader := bufio.NewReader(conn)
			sizeBuffer := make([]byte, 4)
			for {
				frame, err := readFrame(reader, DefaultSocketRequestMaxBytes, sizeBuffer)
				if err != nil {
					return
				}
				header, body, err := ParseRequestHeader(frame, nil)
				if err != nil {
					return
				}
				response := appendResponsePrefix(make([]byte, 0, 9+len(body)), header.CorrelationID, false, int64(len(body)))
				if _, err := conn.Write(append(response, body...)); err != nil {
					return
				}
			}
		}()
	}
}

// BenchmarkProduceSizedRoundTrip measures round trips of 256 KiB requests,
// the size of a produce request under load, with the frame read into a fresh
// allocation and into a reused pooled buffer (Config.ReuseBodyAPIKeys).
func BenchmarkProduceSizedRoundTrip(b *testing.B) {
	frame := requestFrame(3, 1, 1, stringPointer("bench"), nil, make([]byte, 256<<10))
	respondEmpty := HandlerFunc(func(ctx context.Context, req *Request) { req.Respond(BytesResponse(nil)) })
	for _, mode := range []struct {
		name string
		keys []int16
	}{{"fresh", nil}, {"reused", []int16{3}}} {
		b.Run(mode.name, func(b *testing.B) {
			s := startServer(b, Config{ReuseBodyAPIKeys: mode.keys}, respondEmpty)
			conn, err := net.Dial("tcp", s.Addrs()[0].String())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			benchmarkRoundTrips(b, conn, frame)
		})
	}
}
