package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/txn"
)

// brokerClients reaches the other brokers of the cluster for the
// transaction paths (WriteTxnMarkers from the transaction coordinator,
// AddPartitionsToTxn from a partition leader verifying a produce): one
// franz-go client per broker, dialled at the first listener the broker
// registered and replaced when that address changes. Requests carry no
// retries; the callers retry as Kafka's inter-broker senders do.
type brokerClients struct {
	// clientOptions are the inter-broker listener's security options.
	clientOptions []kgo.Opt
	image         func() *metadata.Image
	// timeoutMs bounds every request (request.timeout.ms, as Kafka's
	// inter-broker network clients).
	timeoutMs int64
	// listener and securityOpts are the inter-broker listener's name and
	// client security options.
	listener     string
	securityOpts []kgo.Opt

	mu struct {
		sync.Mutex
		clients map[int32]*brokerClient
		closed  bool
	}
}

type brokerClient struct {
	addr   string
	client *kgo.Client
}

var (
	errUnknownBroker  = errors.New("server: broker has no registered endpoint")
	errClientsClosed  = errors.New("server: broker clients are closed")
	errMissingMarkers = errors.New("server: WriteTxnMarkers response misses a producer's markers")
)

func newBrokerClients(image func() *metadata.Image, timeoutMs int64) *brokerClients {
	if timeoutMs <= 0 {
		timeoutMs = 30000
	}
	b := &brokerClients{image: image, timeoutMs: timeoutMs}
	b.mu.clients = map[int32]*brokerClient{}
	return b
}

// client returns the client of broker, dialling it (again) if its address
// is new.
func (b *brokerClients) client(broker int32) (*kgo.Client, error) {
	br := b.image().Broker(broker)
	if br == nil || len(br.Endpoints) == 0 || br.Fenced {
		return nil, fmt.Errorf("%w: %d", errUnknownBroker, broker)
	}
	ep := endpointOf(br.Endpoints, b.listener)
	addr := net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.closed {
		return nil, errClientsClosed
	}
	if c := b.mu.clients[broker]; c != nil {
		if c.addr == addr {
			return c.client, nil
		}
		c.client.Close()
		delete(b.mu.clients, broker)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RetryTimeout(0), kgo.RequestRetries(0),
		kgo.RequestTimeoutOverhead(time.Duration(b.timeoutMs) * time.Millisecond)}, b.securityOpts...)...)
	if err != nil {
		return nil, err
	}
	b.mu.clients[broker] = &brokerClient{addr: addr, client: cl}
	return cl, nil
}

// Request sends req to broker and waits for its response, at most
// request.timeout.ms.
func (b *brokerClients) Request(ctx context.Context, broker int32, req kmsg.Request) (kmsg.Response, error) {
	cl, err := b.client(broker)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(b.timeoutMs)*time.Millisecond)
	defer cancel()
	return cl.SeedBrokers()[0].Request(ctx, req)
}

func (b *brokerClients) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.closed = true
	for id, c := range b.mu.clients {
		c.client.Close()
		delete(b.mu.clients, id)
	}
}

// maxMarkersPerRequest bounds how many transactions' markers one
// WriteTxnMarkers request to a broker carries; more wait for the next.
const maxMarkersPerRequest = 500

// markerSender is the transaction coordinator's txn.MarkerSender: markers
// for partitions this node leads are written by a direct call, the others
// go to their leader as WriteTxnMarkers. Like Kafka's
// TransactionMarkerChannelManager it batches per broker: while a request to
// a broker is in flight, the markers for it queue up and leave together
// in the next request, one entry per transaction. What to do with each
// partition's answer (retry, drop, give up) is the coordinator's
// decision (txn.Coordinator.onMarkerResponse); this is only the transport.
type markerSender struct {
	nodeID int32
	local  localMarkerWriter
	image  func() *metadata.Image
	// request sends a request to another broker (brokerClients.Request).
	request func(ctx context.Context, broker int32, req kmsg.Request) (kmsg.Response, error)
	log     *slog.Logger

	mu struct {
		sync.Mutex
		// queues holds, per broker, the markers waiting for a request.
		// Invariant: a broker has a queue exactly while its drain
		// goroutine runs.
		queues map[int32][]queuedMarkers
	}
}

// queuedMarkers is one Send call: a transaction's markers for some
// partitions led by one broker (the coordinator sends one marker entry a
// call).
type queuedMarkers struct {
	markers []kmsg.WriteTxnMarkersRequestMarker
	done    func(*kmsg.WriteTxnMarkersResponse, error)
}

// localMarkerWriter is this node's WriteTxnMarkers handler.
type localMarkerWriter interface {
	WriteTxnMarkers(req *kmsg.WriteTxnMarkersRequest, done func(*kmsg.WriteTxnMarkersResponse))
}

func newMarkerSender(nodeID int32, local localMarkerWriter, image func() *metadata.Image,
	request func(ctx context.Context, broker int32, req kmsg.Request) (kmsg.Response, error), logger *slog.Logger) *markerSender {
	s := &markerSender{nodeID: nodeID, local: local, image: image, request: request, log: logger}
	s.mu.queues = map[int32][]queuedMarkers{}
	return s
}

// Leader implements txn.MarkerSender: ok is false when the partition is
// not in the metadata image (its topic was deleted), as Kafka skips a
// partition whose leader endpoint it cannot find. A partition with no live
// leader (-1) is still due its marker; sending to -1 fails and the
// coordinator retries with the image of then.
func (s *markerSender) Leader(tp txn.TopicPartition) (int32, bool) {
	t := s.image().Topic(tp.Topic)
	if t == nil || tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) || t.Partitions[tp.Partition] == nil {
		return -1, false
	}
	return t.Partitions[tp.Partition].Leader, true
}

// Send implements txn.MarkerSender.
func (s *markerSender) Send(broker int32, req *kmsg.WriteTxnMarkersRequest, done func(*kmsg.WriteTxnMarkersResponse, error)) {
	if broker == s.nodeID {
		s.local.WriteTxnMarkers(req, func(resp *kmsg.WriteTxnMarkersResponse) { done(resp, nil) })
		return
	}
	if broker < 0 {
		done(nil, fmt.Errorf("%w: no leader", errUnknownBroker))
		return
	}
	s.mu.Lock()
	queue, running := s.mu.queues[broker]
	s.mu.queues[broker] = append(queue, queuedMarkers{markers: req.Markers, done: done})
	s.mu.Unlock()
	if !running {
		go s.drain(broker)
	}
}

// drain sends the queue of broker, a batch at a time, until it is empty.
func (s *markerSender) drain(broker int32) {
	for {
		batch := s.takeBatch(broker)
		if len(batch) == 0 {
			return
		}
		s.sendBatch(broker, batch)
	}
}

// takeBatch removes from the queue of broker up to maxMarkersPerRequest
// marker entries of distinct producers (a response names its entries by
// producer id), or removes the queue when it is empty.
func (s *markerSender) takeBatch(broker int32) []queuedMarkers {
	s.mu.Lock()
	defer s.mu.Unlock()
	queue := s.mu.queues[broker]
	if len(queue) == 0 {
		delete(s.mu.queues, broker)
		return nil
	}
	seen := map[int64]bool{}
	var batch, rest []queuedMarkers
	markers := 0
	for _, q := range queue {
		fits := markers == 0 || markers+len(q.markers) <= maxMarkersPerRequest
		for _, m := range q.markers {
			fits = fits && !seen[m.ProducerID]
		}
		if !fits {
			rest = append(rest, q)
			continue
		}
		for _, m := range q.markers {
			seen[m.ProducerID] = true
		}
		markers += len(q.markers)
		batch = append(batch, q)
	}
	s.mu.queues[broker] = rest
	return batch
}

func (s *markerSender) sendBatch(broker int32, batch []queuedMarkers) {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 2
	for _, q := range batch {
		req.Markers = append(req.Markers, q.markers...)
	}
	raw, err := s.request(context.Background(), broker, req)
	if err != nil {
		s.log.Debug("sending transaction markers failed", "broker", broker, "markers", len(batch), "err", err)
		for _, q := range batch {
			q.done(nil, err)
		}
		return
	}
	resp := raw.(*kmsg.WriteTxnMarkersResponse)
	byProducer := make(map[int64]kmsg.WriteTxnMarkersResponseMarker, len(resp.Markers))
	for _, m := range resp.Markers {
		byProducer[m.ProducerID] = m
	}
	for _, q := range batch {
		one := kmsg.NewPtrWriteTxnMarkersResponse()
		one.Version = resp.Version
		for _, want := range q.markers {
			m, ok := byProducer[want.ProducerID]
			if !ok {
				one = nil
				break
			}
			one.Markers = append(one.Markers, m)
		}
		if one == nil {
			q.done(nil, errMissingMarkers)
			continue
		}
		q.done(one, nil)
	}
}
