package network

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
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

	// The cost of queued.max.request.bytes beside "server" (never spent).
	b.Run("server-queued-bytes-bound", func(b *testing.B) {
		s := startServer(b, Config{QueuedMaxRequestBytes: 100 << 20}, echoHandler)
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

// BenchmarkFileRegionResponses measures fetch-shaped responses, twelve
// times a small header and a file region (sendfile), read back by a client
// that sends the next request once the response is in, at Kafka's
// socket.send.buffer.bytes (102400) and at the OS default (-1, autotuned).
// (TCP_CORK around such a batch measured about half as fast on loopback,
// so responses are not corked.)
func BenchmarkFileRegionResponses(b *testing.B) {
	for _, regionBytes := range []int{16 << 10, 1 << 20} {
		file, err := os.CreateTemp(b.TempDir(), "regions")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := file.Write(make([]byte, 12*regionBytes)); err != nil {
			b.Fatal(err)
		}
		handler := HandlerFunc(func(ctx context.Context, req *Request) {
			chunks := make([]Chunk, 0, 24)
			for i := range 12 {
				chunks = append(chunks, Chunk{Bytes: make([]byte, 60)},
					Chunk{File: file, Offset: int64(i * regionBytes), Length: int64(regionBytes)})
			}
			req.Respond(Response{Chunks: chunks})
		})
		for _, sendBufferBytes := range []int{DefaultSocketSendBufferBytes, -1} {
			b.Run(fmt.Sprintf("region=%dKiB/sndbuf=%d", regionBytes>>10, sendBufferBytes), func(b *testing.B) {
				s := startServer(b, Config{SocketSendBufferBytes: sendBufferBytes}, handler)
				conn, err := net.Dial("tcp", s.Addrs()[0].String())
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				frame := requestFrame(1, 4, 1, stringPointer("bench"), nil, nil)
				reader := bufio.NewReaderSize(conn, 64<<10)
				b.SetBytes(int64(12 * (60 + regionBytes)))
				for b.Loop() {
					if _, err := conn.Write(frame); err != nil {
						b.Fatal(err)
					}
					var size [4]byte
					if _, err := io.ReadFull(reader, size[:]); err != nil {
						b.Fatal(err)
					}
					if _, err := io.CopyN(io.Discard, reader, int64(binary.BigEndian.Uint32(size[:]))); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// crcAppendHandler stands in for the produce path: Prepare (when the server
// pipelines) checksums the body as the CRC check does, Handle checksums it if
// Prepare did not and writes it to a file as an append does, then answers.
type crcAppendHandler struct {
	file     *os.File
	position int64 // only Handle touches it, one request at a time
}

func (h *crcAppendHandler) Prepare(req *Request) {
	req.Prepared = crc32.Checksum(req.Body, crc32.MakeTable(crc32.Castagnoli))
}

func (h *crcAppendHandler) Handle(ctx context.Context, req *Request) {
	if req.Prepared == nil {
		req.Prepared = crc32.Checksum(req.Body, crc32.MakeTable(crc32.Castagnoli))
	}
	h.file.WriteAt(req.Body, h.position%(64<<20))
	h.position += int64(len(req.Body))
	req.Respond(BytesResponse(nil))
}

// BenchmarkPipelinedProduce sends 1 MiB produce-shaped requests with five in
// flight, as a producer does, to a server that reads one request at a time
// (Kafka's way) and to one that pipelines them (Config.PipelinedAPIKeys),
// where the next request is read and checksummed while the previous one is
// written out.
func BenchmarkPipelinedProduce(b *testing.B) {
	body := make([]byte, 1<<20)
	frame := requestFrame(0, 9, 1, stringPointer("bench"), nil, body)
	for _, mode := range []struct {
		name string
		cfg  Config
	}{
		{"one-at-a-time", Config{}},
		{"pipelined", Config{MaxInFlightRequestsPerConnection: 5, PipelinedAPIKeys: []int16{0}}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			file, err := os.CreateTemp(b.TempDir(), "log")
			if err != nil {
				b.Fatal(err)
			}
			defer file.Close()
			mode.cfg.ReuseBodyAPIKeys = []int16{0}
			s := startServer(b, mode.cfg, &crcAppendHandler{file: file})
			conn, err := net.Dial("tcp", s.Addrs()[0].String())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			const inFlight = 5
			sent := make(chan struct{}, inFlight)
			done := make(chan error, 1)
			go func() {
				reader := bufio.NewReader(conn)
				var response [8]byte
				for range sent {
					if _, err := io.ReadFull(reader, response[:]); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				sent <- struct{}{}
				if _, err := conn.Write(frame); err != nil {
					b.Fatal(err)
				}
			}
			close(sent)
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}
