package network

import (
	"testing"
)

// TestReadAheadWaitsForBudget: with the read-ahead budget spent, a
// connection whose produce is unanswered does not read its next frame until
// the answer is written, as Kafka mutes a connection; with room it reads
// ahead, and the frame's share of the budget comes back when the request is
// done.
func TestReadAheadWaitsForBudget(t *testing.T) {
	cfg := orderedConfig()
	cfg.ReuseBodyAPIKeys = []int16{pipelinedKey}
	handler := newParkingHandler()
	s := startServer(t, cfg, handler)
	if !reserveReadAhead(readAheadBytesMax) {
		t.Fatalf("%d bytes of the read-ahead budget in use before the test", readAheadBytes.Load())
	}
	spent := true
	defer func() {
		if spent {
			releaseReadAhead(readAheadBytesMax)
		}
	}()
	client := dial(t, s)
	client.send(pipelinedKey, 3, 1, []byte("p1"))
	client.send(pipelinedKey, 3, 2, []byte("p2"))
	first := handler.next(t)
	waitFor(t, "the reader to wait for read-ahead room", func() bool { return s.Stats().ReadAheadWaits == 1 })
	if got := s.Stats().RequestsReceived; got != 1 {
		t.Fatalf("%d requests read with the read-ahead budget spent, want 1", got)
	}
	first.Respond(BytesResponse(first.Body))
	client.expectResponse(false, 1, "p1")
	second := handler.next(t)
	second.Respond(BytesResponse(second.Body))
	client.expectResponse(false, 2, "p2")
	if got := s.Stats().RequestsReadAhead; got != 0 {
		t.Fatalf("%d requests read ahead with no budget", got)
	}

	releaseReadAhead(readAheadBytesMax)
	spent = false
	client.send(pipelinedKey, 3, 3, []byte("p3"))
	client.send(pipelinedKey, 3, 4, []byte("p4"))
	third := handler.next(t)
	// The two counts are raised one after the other: wait for both.
	waitFor(t, "request 4 read ahead", func() bool {
		st := s.Stats()
		return st.RequestsReceived == 4 && st.RequestsReadAhead >= 1
	})
	// Request 4 is read ahead of request 3. Request 3 is too when it came in
	// before request 2's response had been written; either way each frame
	// read ahead holds its share of the budget and nothing else does.
	readAhead := s.Stats().RequestsReadAhead
	if readAhead < 1 || readAhead > 2 {
		t.Fatalf("%d requests read ahead of 3 and 4, want request 4 (and perhaps 3)", readAhead)
	}
	if got, want := readAheadBytes.Load(), int64(readAhead)<<frameBufferClassMinShift; got != want {
		t.Fatalf("%d requests read ahead hold %d bytes of the budget, want %d", readAhead, got, want)
	}
	third.Respond(BytesResponse(third.Body))
	client.expectResponse(false, 3, "p3")
	fourth := handler.next(t)
	fourth.Respond(BytesResponse(fourth.Body))
	client.expectResponse(false, 4, "p4")
	waitFor(t, "the budget given back", func() bool { return readAheadBytes.Load() == 0 })
	if got := s.Stats().ReadAheadWaits; got != 1 {
		t.Fatalf("%d waits for read-ahead room, want 1", got)
	}
}
