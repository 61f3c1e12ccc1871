package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProduceConfig describes a producer load. The run stops after Records
// records or Duration, whichever comes first; at least one must be set.
type ProduceConfig struct {
	// Brokers are the bootstrap servers.
	Brokers []string
	// ClientOpts are added to every client (client id, dial timeout, ...).
	ClientOpts []kgo.Opt
	Topic      string

	RecordBytes int
	Records     int64
	Duration    time.Duration

	Acks        Acks
	Compression string
	Linger      time.Duration
	BatchBytes  int32
	// BufferBytes bounds what each producer buffers (buffer.memory).
	BufferBytes int
	// MaxInFlight is the produce requests in flight per broker.
	MaxInFlight int
	// Producers is the number of concurrent producer clients.
	Producers int
	Keys      KeyDistribution
	// RecordsPerSecond is the target rate over all producers; 0 means as
	// fast as possible.
	RecordsPerSecond float64

	// Timestamps embeds each record's send time in its first 8 bytes, for
	// end-to-end latency. RecordBytes must then be at least 8.
	Timestamps bool

	ProgressInterval time.Duration
	Progress         func(Progress)
}

func (c *ProduceConfig) validate() error {
	switch {
	case len(c.Brokers) == 0:
		return errors.New("bench: no brokers")
	case c.Topic == "":
		return errors.New("bench: no topic")
	case c.RecordBytes < 0 || c.RecordBytes > RecordBytesMax:
		return fmt.Errorf("bench: record size %d out of range 0 to %d", c.RecordBytes, RecordBytesMax)
	case c.Timestamps && c.RecordBytes < timestampBytes:
		return fmt.Errorf("bench: end-to-end records need at least %d bytes, got %d", timestampBytes, c.RecordBytes)
	case c.Records <= 0 && c.Duration <= 0:
		return errors.New("bench: set a record count or a duration")
	case c.Records < 0 || c.Duration < 0:
		return errors.New("bench: record count and duration cannot be negative")
	case c.Producers < 1 || c.Producers > ProducersMax:
		return fmt.Errorf("bench: producers %d out of range 1 to %d", c.Producers, ProducersMax)
	case c.RecordsPerSecond < 0:
		return fmt.Errorf("bench: negative rate %g", c.RecordsPerSecond)
	case c.BatchBytes < 0 || c.BufferBytes < 0 || c.MaxInFlight < 0 || c.Linger < 0:
		return errors.New("bench: batch size, buffer, in-flight and linger cannot be negative")
	}
	_, err := ParseCompression(c.Compression)
	return err
}

// clientOpts are the franz-go options of one producer client.
func (c *ProduceConfig) clientOpts() []kgo.Opt {
	codec, _ := ParseCompression(c.Compression)
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.DefaultProduceTopic(c.Topic),
		kgo.RequiredAcks(c.Acks.kgo()),
		kgo.ProducerBatchCompression(codec),
		kgo.ProducerLinger(c.Linger),
		// The byte limit governs; the record limit only has to exceed it.
		kgo.MaxBufferedRecords(1 << 30),
		kgo.RecordDeliveryTimeout(flushTimeoutMax),
	}
	if c.BatchBytes > 0 {
		opts = append(opts, kgo.ProducerBatchMaxBytes(c.BatchBytes))
	}
	if c.BufferBytes > 0 {
		opts = append(opts, kgo.MaxBufferedBytes(c.BufferBytes))
	}
	if c.Acks != -1 {
		// Idempotence needs acks=all; without it franz-go defaults to one
		// request in flight, Kafka to five.
		opts = append(opts, kgo.DisableIdempotentWrite())
		if c.MaxInFlight > 0 {
			opts = append(opts, kgo.MaxProduceRequestsInflightPerBroker(c.MaxInFlight))
		}
	}
	if c.Keys.Kind == KeysRoundRobin {
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	}
	return append(opts, c.ClientOpts...)
}

// Produce runs a producer load and returns what it achieved. It stops early,
// without error, when ctx is cancelled; records not yet acknowledged then
// count as errors. Produce fails only if no client could be created or the
// first record could not be written.
func Produce(ctx context.Context, cfg ProduceConfig) (Result, error) {
	m := newMeter()
	if err := produce(ctx, cfg, m, nil); err != nil {
		return Result{}, err
	}
	return m.result(), nil
}

// produce runs the load of cfg into m. Once every client has written one
// warm-up record (so metadata and connections are in place), it calls
// started, if set, and starts the clock.
func produce(ctx context.Context, cfg ProduceConfig, m *meter, started func()) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	clients := make([]*kgo.Client, cfg.Producers)
	for i := range clients {
		cl, err := kgo.NewClient(cfg.clientOpts()...)
		if err != nil {
			for _, open := range clients[:i] {
				open.Close()
			}
			return fmt.Errorf("bench: create producer: %w", err)
		}
		clients[i] = cl
	}
	defer func() {
		for _, cl := range clients {
			cl.Close()
		}
	}()
	for _, cl := range clients {
		warm := &kgo.Record{Value: make([]byte, cfg.RecordBytes)}
		if cfg.Timestamps {
			binary.BigEndian.PutUint64(warm.Value, uint64(time.Now().UnixNano()))
		}
		if err := cl.ProduceSync(ctx, warm).FirstErr(); err != nil {
			return fmt.Errorf("bench: first record: %w", err)
		}
	}
	if started != nil {
		started()
	}

	m.begin()
	reportCtx, stopReport := context.WithCancel(ctx)
	waitReport := m.report(reportCtx, cfg.ProgressInterval, cfg.Progress)
	var claimed atomic.Int64
	var wg sync.WaitGroup
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := newProducer(&cfg, cl, m, &claimed, int64(i))
			p.run(ctx)
		}()
	}
	wg.Wait()
	stopReport()
	waitReport()
	m.end()
	return nil
}

// producer is one client's send loop.
type producer struct {
	cfg     *ProduceConfig
	client  *kgo.Client
	meter   *meter
	claimed *atomic.Int64
	keys    [][]byte
	random  *rand.Rand
	// value is shared by every record when no timestamp is embedded.
	value   []byte
	records sync.Pool
	// ratePerProducer is this producer's share of the target rate.
	ratePerProducer float64
}

func newProducer(cfg *ProduceConfig, cl *kgo.Client, m *meter, claimed *atomic.Int64, seed int64) *producer {
	p := &producer{
		cfg: cfg, client: cl, meter: m, claimed: claimed,
		random:          rand.New(rand.NewPCG(uint64(seed), uint64(time.Now().UnixNano()))),
		ratePerProducer: cfg.RecordsPerSecond / float64(cfg.Producers),
	}
	if cfg.Keys.Kind == KeysRandom || cfg.Keys.Kind == KeysSequential {
		p.keys = make([][]byte, cfg.Keys.Count)
		for i := range p.keys {
			p.keys[i] = []byte("key-" + strconv.Itoa(i))
		}
	}
	if !cfg.Timestamps {
		p.value = make([]byte, cfg.RecordBytes)
		fillPayload(p.value, p.random)
	}
	p.records.New = func() any {
		r := &kgo.Record{}
		if cfg.Timestamps {
			r.Value = make([]byte, cfg.RecordBytes)
			fillPayload(r.Value, p.random)
		}
		return r
	}
	return p
}

// fillPayload fills b with printable text that compresses about as well as
// typical JSON: neither all zeros nor random bytes.
func fillPayload(b []byte, random *rand.Rand) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 {}\":,"
	for i := range b {
		b[i] = alphabet[random.IntN(len(alphabet))]
	}
}

func (p *producer) run(ctx context.Context) {
	start := time.Now()
	var sent int64
	for ctx.Err() == nil {
		if p.cfg.Records > 0 && p.claimed.Add(1) > p.cfg.Records {
			break
		}
		now := time.Now()
		if p.cfg.Duration > 0 && now.Sub(start) >= p.cfg.Duration {
			break
		}
		if p.ratePerProducer > 0 {
			due := start.Add(time.Duration(float64(sent) / p.ratePerProducer * float64(time.Second)))
			if wait := due.Sub(now); wait > 0 {
				sleepContext(ctx, wait)
				now = time.Now()
			}
		}
		p.send(ctx, sent, now)
		sent++
	}
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeoutMax)
	defer cancel()
	if ctx.Err() != nil {
		// Cancelled: give outstanding records a moment, not the full minute.
		flushCtx, cancel = context.WithTimeout(flushCtx, time.Second)
		defer cancel()
	}
	_ = p.client.Flush(flushCtx)
}

func (p *producer) send(ctx context.Context, n int64, now time.Time) {
	r := p.records.Get().(*kgo.Record)
	r.Key = nil
	switch p.cfg.Keys.Kind {
	case KeysRandom:
		r.Key = p.keys[p.random.IntN(len(p.keys))]
	case KeysSequential:
		r.Key = p.keys[n%int64(len(p.keys))]
	}
	if p.cfg.Timestamps {
		binary.BigEndian.PutUint64(r.Value, uint64(now.UnixNano()))
	} else {
		r.Value = p.value
	}
	size := int64(len(r.Key) + len(r.Value))
	p.client.Produce(ctx, r, func(r *kgo.Record, err error) {
		if err != nil {
			p.meter.fail(err)
		} else {
			p.meter.observe(time.Since(now))
			p.meter.add(1, size)
		}
		// The client holds no reference once the promise runs; clear what
		// it filled in (timestamp, partition, producer id) for reuse.
		*r = kgo.Record{Value: r.Value}
		p.records.Put(r)
	})
}

// sleepContext sleeps for d or until ctx is done.
func sleepContext(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
