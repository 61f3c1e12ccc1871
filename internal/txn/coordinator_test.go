package txn

import (
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// gatedStorage is an in-memory __transaction_state whose appends can be
// held, as a write waiting for its replicas is.
type gatedStorage struct {
	mu   sync.Mutex
	hold bool
	// held receives a signal when an append starts waiting at the gate.
	held    chan struct{}
	release chan struct{}
	once    sync.Once
	records int
}

// open lets held appends go on.
func (s *gatedStorage) open() { s.once.Do(func() { close(s.release) }) }

func newGatedStorage() *gatedStorage {
	return &gatedStorage{held: make(chan struct{}, 1), release: make(chan struct{})}
}

// holdNext makes the next append wait until release is closed.
func (s *gatedStorage) holdNext() {
	s.mu.Lock()
	s.hold = true
	s.mu.Unlock()
}

func (s *gatedStorage) Append(_ int32, _, _ []byte) error {
	s.mu.Lock()
	hold := s.hold
	s.hold = false
	s.mu.Unlock()
	if hold {
		s.held <- struct{}{}
		<-s.release
	}
	s.mu.Lock()
	s.records++
	s.mu.Unlock()
	return nil
}

func (s *gatedStorage) Load(int32, func(key, value []byte) error) error { return nil }

// localMarkers writes every marker at once.
type localMarkers struct{}

func (localMarkers) Leader(TopicPartition) (int32, bool) { return 1, true }

func (localMarkers) Send(_ int32, req *kmsg.WriteTxnMarkersRequest, done func(*kmsg.WriteTxnMarkersResponse, error)) {
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
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	done(resp, nil)
}

type initAnswer struct {
	pid   int64
	epoch int16
	code  *kerr.Error
}

func initProducer(c *Coordinator, id string) initAnswer {
	var a initAnswer
	c.InitProducerID(id, 60000, nil, func(pid int64, epoch int16, code *kerr.Error) { a = initAnswer{pid, epoch, code} })
	return a
}

func endTxn(c *Coordinator, id string, a initAnswer, commit bool) initAnswer {
	var out initAnswer
	c.EndTxn(id, a.pid, a.epoch, commit, TV0, func(pid int64, epoch int16, code *kerr.Error) { out = initAnswer{pid, epoch, code} })
	return out
}

// newTestCoordinator leads partition 0, the only one, once loaded.
func newTestCoordinator(t *testing.T, storage Storage) *Coordinator {
	t.Helper()
	var mu sync.Mutex
	next := int64(1000)
	c := NewCoordinator(Config{
		NumPartitions: func() int32 { return 1 },
		NewProducerID: func() (int64, error) {
			mu.Lock()
			defer mu.Unlock()
			next++
			return next, nil
		},
	}, storage, localMarkers{})
	t.Cleanup(c.Close)
	c.OnElected(0, 1)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, code := c.Describe("probe")
		if code == kerr.TransactionalIDNotFound {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition not loaded: %v", code)
		}
		time.Sleep(time.Millisecond)
	}
}

// within runs fn, failing the test if it does not return (blocked behind
// the held append).
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return while another request's record was being written", what)
	}
}

// TestAppendHoldsNoLock: while a record of one transactional id is being
// written (and replicated), the coordinator's partition lock is not held:
// the other requests of that id answer CONCURRENT_TRANSACTIONS, as Kafka's
// coordinator answers while a transition is pending, and the ids of the
// same partition carry on.
func TestAppendHoldsNoLock(t *testing.T) {
	storage := newGatedStorage()
	c := newTestCoordinator(t, storage)
	t.Cleanup(storage.open) // before Close, should the test fail
	a := initProducer(c, "a")
	if a.code != nil {
		t.Fatalf("InitProducerId a: %v", a.code)
	}
	tp := TopicPartition{Topic: "t", Partition: 0}

	storage.holdNext()
	added := make(chan *kerr.Error, 1)
	go func() { added <- c.AddPartitions("a", a.pid, a.epoch, []TopicPartition{tp}, TV0) }()
	<-storage.held

	var code *kerr.Error
	within(t, "AddPartitions a", func() {
		code = c.AddPartitions("a", a.pid, a.epoch, []TopicPartition{{Topic: "t", Partition: 1}}, TV0)
	})
	if code != kerr.ConcurrentTransactions {
		t.Errorf("AddPartitions a while its add is written: %v, want CONCURRENT_TRANSACTIONS", code)
	}
	var got initAnswer
	within(t, "EndTxn a", func() { got = endTxn(c, "a", a, true) })
	if got.code != kerr.ConcurrentTransactions {
		t.Errorf("EndTxn a while its add is written: %v, want CONCURRENT_TRANSACTIONS", got.code)
	}
	within(t, "InitProducerId a", func() { got = initProducer(c, "a") })
	if got.code != kerr.ConcurrentTransactions {
		t.Errorf("InitProducerId a while its add is written: %v, want CONCURRENT_TRANSACTIONS", got.code)
	}
	within(t, "InitProducerId b", func() { got = initProducer(c, "b") })
	if got.code != nil {
		t.Errorf("InitProducerId b: %v", got.code)
	}

	storage.open()
	if code := <-added; code != nil {
		t.Fatalf("AddPartitions a: %v", code)
	}
	if got := endTxn(c, "a", a, true); got.code != nil {
		t.Fatalf("EndTxn a: %v", got.code)
	}
	m, code := c.Describe("a")
	if code != nil || m.State != CompleteCommit {
		t.Fatalf("a after EndTxn: %v %v, want CompleteCommit", m.State, code)
	}
}

// TestResignedDuringAppend: a partition given up while a record is being
// written answers NOT_COORDINATOR for it, and the next coordinator (here a
// reload) starts from the log.
func TestResignedDuringAppend(t *testing.T) {
	storage := newGatedStorage()
	c := newTestCoordinator(t, storage)
	storage.holdNext()
	answered := make(chan initAnswer, 1)
	go func() { answered <- initProducer(c, "a") }()
	<-storage.held
	t.Cleanup(storage.open)
	within(t, "OnResigned", func() { c.OnResigned(0) })
	storage.open()
	if got := <-answered; got.code != kerr.NotCoordinator {
		t.Fatalf("InitProducerId answered %v after the partition was given up, want NOT_COORDINATOR", got.code)
	}
	if _, code := c.Describe("a"); code != kerr.NotCoordinator {
		t.Fatalf("Describe after resigning: %v, want NOT_COORDINATOR", code)
	}
}
