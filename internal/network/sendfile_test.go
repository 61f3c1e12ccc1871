package network

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// readerAtOnly hides *os.File's descriptor so that the ReadAt path is taken.
type readerAtOnly struct{ file *os.File }

func (r readerAtOnly) ReadAt(p []byte, offset int64) (int, error) { return r.file.ReadAt(p, offset) }

// fdOnly offers the descriptor through Fd alone, without SyscallConn.
type fdOnly struct{ file *os.File }

func (f fdOnly) ReadAt(p []byte, offset int64) (int, error) { return f.file.ReadAt(p, offset) }
func (f fdOnly) Fd() uintptr                                { return f.file.Fd() }

func tempFile(t *testing.T, size int) (*os.File, []byte) {
	t.Helper()
	content := make([]byte, size)
	random := rand.New(rand.NewPCG(1, 2))
	for i := range content {
		content[i] = byte(random.Uint32())
	}
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	return file, content
}

func TestFileRegionResponses(t *testing.T) {
	file, content := tempFile(t, 3<<20)
	const offset, length = 12345, 2<<20 + 7
	want := append(append([]byte("head"), content[offset:offset+length]...), "tail"...)
	for _, tc := range []struct {
		name         string
		file         RegionFile
		wantSendfile bool
	}{
		{"sendfile via SyscallConn", file, true},
		{"sendfile via Fd", fdOnly{file}, true},
		{"ReadAt fallback", readerAtOnly{file}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The region is far larger than socket.send.buffer.bytes, so
			// sendfile meets EAGAIN and waits for the socket several times.
			s := startServer(t, Config{}, HandlerFunc(func(ctx context.Context, req *Request) {
				req.Respond(Response{Chunks: []Chunk{
					{Bytes: []byte("head")},
					{File: tc.file, Offset: offset, Length: length},
					{File: tc.file, Offset: 0, Length: 0},
					{Bytes: []byte("tail")},
				}})
			}))
			client := dial(t, s)
			// Two requests: the second response follows the first's file bytes.
			for i := int32(1); i <= 2; i++ {
				client.send(1, 12, i, nil)
				correlationID, body := client.readResponse(true)
				if correlationID != i || !bytes.Equal(body, want) {
					t.Fatalf("response %d: %d bytes, correlation id %d; want the region", i, len(body), correlationID)
				}
			}
			// The counters move once the writer's call returns, which may be
			// after the client has read the bytes.
			waitFor(t, "file bytes counted", func() bool {
				st := s.Stats()
				return st.SendfileBytes+st.CopiedFileBytes == 2*length
			})
			if st := s.Stats(); tc.wantSendfile != (st.SendfileBytes == 2*length) {
				t.Errorf("sendfile bytes %d, copied bytes %d", st.SendfileBytes, st.CopiedFileBytes)
			}
		})
	}
}

// TestTruncatedFileRegionClosesConnection: the size prefix promised more
// bytes than the file holds, so the connection must end.
func TestTruncatedFileRegionClosesConnection(t *testing.T) {
	file, content := tempFile(t, 100)
	for _, tc := range []struct {
		name string
		file RegionFile
	}{
		{"sendfile", file},
		{"ReadAt", readerAtOnly{file}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, Config{}, HandlerFunc(func(ctx context.Context, req *Request) {
				req.Respond(Response{Chunks: []Chunk{{File: tc.file, Offset: 50, Length: 100}}})
			}))
			client := dial(t, s)
			client.send(1, 4, 1, nil)
			client.conn.SetReadDeadline(time.Now().Add(testTimeout))
			got, err := io.ReadAll(client.conn)
			if err != nil {
				t.Fatalf("reading: %v", err)
			}
			// Size prefix, correlation id, then the 50 bytes the file has.
			if len(got) != 8+50 || binary.BigEndian.Uint32(got) != 104 || !bytes.Equal(got[8:], content[50:]) {
				t.Fatalf("got %d bytes: % x", len(got), got[:min(len(got), 16)])
			}
		})
	}
}

func TestInvalidChunkClosesConnection(t *testing.T) {
	file, _ := tempFile(t, 10)
	s := startServer(t, Config{}, HandlerFunc(func(ctx context.Context, req *Request) {
		req.Respond(Response{Chunks: []Chunk{{File: file, Offset: -1, Length: 5}}})
	}))
	client := dial(t, s)
	client.send(1, 4, 1, nil)
	client.expectClosed()
}
