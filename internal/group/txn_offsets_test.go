package group

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// memTxnStorage is an in-memory __consumer_offsets that keeps batch
// boundaries, transactional flags and markers.
type memTxnStorage struct {
	mu      sync.Mutex
	batches map[int32][]LoadedBatch
}

func (m *memTxnStorage) add(p int32, b LoadedBatch) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.batches == nil {
		m.batches = map[int32][]LoadedBatch{}
	}
	m.batches[p] = append(m.batches[p], b)
	return int64(len(m.batches[p]))
}

func (m *memTxnStorage) Append(p int32, kvs []KV) (int64, error) {
	return m.add(p, LoadedBatch{ProducerID: -1, Records: kvs}), nil
}

func (m *memTxnStorage) Load(int32, func(int64, []byte, []byte) error) error {
	panic("a TxnStorage loads by batch")
}

func (m *memTxnStorage) AppendTxn(p int32, pid int64, _ int16, kvs []KV) (int64, error) {
	return m.add(p, LoadedBatch{ProducerID: pid, Transactional: true, Records: kvs}), nil
}

func (m *memTxnStorage) LoadBatches(p int32, fn func(LoadedBatch) error) error {
	m.mu.Lock()
	batches := append([]LoadedBatch(nil), m.batches[p]...)
	m.mu.Unlock()
	for _, b := range batches {
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

// marker writes a transaction marker and tells the coordinator, as the
// broker's WriteTxnMarkers does.
func (m *memTxnStorage) marker(c *Coordinator, p int32, pid int64, commit bool) {
	m.add(p, LoadedBatch{ProducerID: pid, Transactional: true, Control: true, Commit: commit})
	c.CompleteTransaction(p, pid, commit)
}

func txnTestCoordinator(t *testing.T, storage *memTxnStorage) (*Coordinator, int32) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	c, err := NewCoordinator(cfg, storage)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	p := c.Partition("g")
	c.OnElected(p)
	deadline := time.Now().Add(10 * time.Second)
	for _, code := fetchOffset(t, c, false); code == kerr.CoordinatorLoadInProgress.Code; _, code = fetchOffset(t, c, false) {
		if time.Now().After(deadline) {
			t.Fatal("partition never loaded")
		}
		time.Sleep(time.Millisecond)
	}
	return c, p
}

// fetchOffset fetches group g's offset of t-0 and its error code.
func fetchOffset(t *testing.T, c *Coordinator, requireStable bool) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.RequireStable = 8, requireStable
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = "g"
	g.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0}}}
	req.Groups = append(req.Groups, g)
	var got *kmsg.OffsetFetchResponse
	c.OffsetFetch(req, func(r *kmsg.OffsetFetchResponse) { got = r })
	rg := got.Groups[0]
	if rg.ErrorCode != 0 {
		return -1, rg.ErrorCode
	}
	p := rg.Topics[0].Partitions[0]
	return p.Offset, p.ErrorCode
}

func txnCommit(t *testing.T, c *Coordinator, pid int64, offset int64) {
	t.Helper()
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version = 3
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = "tx", "g", pid, 0
	req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: offset, LeaderEpoch: -1}}}}
	var got *kmsg.TxnOffsetCommitResponse
	c.TxnOffsetCommit(req, func(r *kmsg.TxnOffsetCommitResponse) { got = r })
	if code := got.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("TxnOffsetCommit: %v", kerr.ErrorForCode(code))
	}
}

func wantOffset(t *testing.T, c *Coordinator, want int64) {
	t.Helper()
	if got, code := fetchOffset(t, c, true); code != 0 || got != want {
		t.Fatalf("offset %d (%v), want %d", got, kerr.ErrorForCode(code), want)
	}
}

func TestTxnOffsetsVisibleOnlyOnCommit(t *testing.T) {
	storage := &memTxnStorage{}
	c, p := txnTestCoordinator(t, storage)

	txnCommit(t, c, 7, 10)
	if got, code := fetchOffset(t, c, false); code != 0 || got != -1 {
		t.Fatalf("pending offset visible: %d %v", got, kerr.ErrorForCode(code))
	}
	if _, code := fetchOffset(t, c, true); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("require_stable with an offset pending: %v", kerr.ErrorForCode(code))
	}
	storage.marker(c, p, 7, true)
	wantOffset(t, c, 10)

	txnCommit(t, c, 8, 20)
	storage.marker(c, p, 8, false)
	wantOffset(t, c, 10)

	// Pending at shutdown: a new coordinator loads it pending, then the
	// marker arrives.
	txnCommit(t, c, 9, 30)
	c.Close()
	c2, p2 := txnTestCoordinator(t, storage)
	if _, code := fetchOffset(t, c2, true); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("after reload, require_stable with an offset pending: %v", kerr.ErrorForCode(code))
	}
	storage.marker(c2, p2, 9, true)
	wantOffset(t, c2, 30)

	// A load replays committed and aborted transactions alike.
	c2.Close()
	c3, _ := txnTestCoordinator(t, storage)
	wantOffset(t, c3, 30)
}

func TestTxnMarkerDuringLoadIsNotLost(t *testing.T) {
	storage := &memTxnStorage{}
	c, p := txnTestCoordinator(t, storage)
	txnCommit(t, c, 7, 10)
	c.Close()

	c2 := func() *Coordinator {
		cfg := DefaultConfig()
		cfg.Logger = slog.New(slog.DiscardHandler)
		c2, err := NewCoordinator(cfg, storage)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c2.Close)
		return c2
	}()
	// The partition is loading (registered, not yet replayed) when the
	// marker's completion arrives: it is queued and applied after.
	c2.mu.Lock()
	part := &partition{id: p}
	part.mu.status = partitionLoading
	c2.mu.partitions[p] = part
	c2.loaders.Add(1)
	c2.mu.Unlock()
	c2.CompleteTransaction(p, 7, true)
	c2.load(part)
	wantOffset(t, c2, 10)
}
