package server

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// fakeBroker answers WriteTxnMarkers for the marker sender's tests: the
// first request blocks until released, so the ones behind it queue up.
type fakeBroker struct {
	release chan struct{}
	mu      sync.Mutex
	seen    [][]int64 // producer ids of each request, in order
	fail    bool
}

func (f *fakeBroker) request(_ context.Context, _ int32, r kmsg.Request) (kmsg.Response, error) {
	req := r.(*kmsg.WriteTxnMarkersRequest)
	f.mu.Lock()
	first := len(f.seen) == 0
	var ids []int64
	for _, m := range req.Markers {
		ids = append(ids, m.ProducerID)
	}
	f.seen = append(f.seen, ids)
	fail := f.fail
	f.mu.Unlock()
	if first {
		<-f.release
	}
	if fail {
		return nil, errors.New("connection refused")
	}
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				rp.ErrorCode = int16(m.ProducerID) // a code per producer, to check the split
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp, nil
}

func markerFor(producerID int64) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID = producerID
	t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	t.Topic, t.Partitions = "orders", []int32{int32(producerID)}
	m.Topics = append(m.Topics, t)
	req.Markers = append(req.Markers, m)
	return req
}

type markerResult struct {
	producerID int64
	resp       *kmsg.WriteTxnMarkersResponse
	err        error
}

// TestMarkerSenderBatchesPerBroker: markers for a broker queue while a
// request to it is in flight and leave together in the next one, a
// producer at most once a request; each Send gets its own markers' answer.
func TestMarkerSenderBatchesPerBroker(t *testing.T) {
	f := &fakeBroker{release: make(chan struct{})}
	s := newMarkerSender(1, nil, metadata.EmptyImage, f.request, slog.Default())
	results := make(chan markerResult, 10)
	send := func(pid int64) {
		s.Send(2, markerFor(pid), func(resp *kmsg.WriteTxnMarkersResponse, err error) {
			results <- markerResult{pid, resp, err}
		})
	}
	send(10)
	// Wait until the first request is in flight.
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		n := len(f.seen)
		f.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first request never left")
		}
		<-time.After(time.Millisecond)
	}
	for _, pid := range []int64{11, 12, 11, 13} {
		send(pid)
	}
	close(f.release)
	got := map[int64]int{}
	for range 5 {
		select {
		case r := <-results:
			if r.err != nil {
				t.Fatalf("producer %d: %v", r.producerID, r.err)
			}
			if len(r.resp.Markers) != 1 || r.resp.Markers[0].ProducerID != r.producerID {
				t.Fatalf("producer %d got the answer of %+v", r.producerID, r.resp.Markers)
			}
			if code := r.resp.Markers[0].Topics[0].Partitions[0].ErrorCode; code != int16(r.producerID) {
				t.Fatalf("producer %d: partition answer %d", r.producerID, code)
			}
			got[r.producerID]++
		case <-time.After(10 * time.Second):
			t.Fatalf("answers so far: %v", got)
		}
	}
	if want := map[int64]int{10: 1, 11: 2, 12: 1, 13: 1}; !maps.Equal(got, want) {
		t.Fatalf("answers %v, want %v", got, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	want := [][]int64{{10}, {11, 12, 13}, {11}}
	if !slices.EqualFunc(f.seen, want, slices.Equal) {
		t.Fatalf("requests %v, want %v", f.seen, want)
	}
}

// TestMarkerSenderTransportError: a failed request fails every Send it
// carried, and a partition with no leader fails at once; the coordinator
// retries them.
func TestMarkerSenderTransportError(t *testing.T) {
	f := &fakeBroker{release: make(chan struct{}), fail: true}
	close(f.release)
	s := newMarkerSender(1, nil, metadata.EmptyImage, f.request, slog.Default())
	errs := make(chan error, 2)
	s.Send(3, markerFor(7), func(_ *kmsg.WriteTxnMarkersResponse, err error) { errs <- err })
	s.Send(-1, markerFor(8), func(_ *kmsg.WriteTxnMarkersResponse, err error) { errs <- err })
	for range 2 {
		select {
		case err := <-errs:
			if err == nil {
				t.Fatal("a failed send succeeded")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no answer")
		}
	}
}
