package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
)

// kafka-go: github.com/segmentio/kafka-go (Writer, Reader, ConsumerGroup and
// the admin methods of Client). It has no idempotent or transactional
// producer.
var kafkaGoDriver = driver{
	"metadata": kgMetadata,
	"produce":  kgProduce,
	"consume":  kgConsume,
	"groups":   kgGroups,
	"transactions": func(context.Context, *env) error {
		return notApplicable("kafka-go has no idempotent or transactional producer")
	},
	"admin":  kgAdmin,
	"errors": kgErrors,
}

func kgClient(e *env) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(e.bootstrap), Timeout: 20 * time.Second}
}

func kgCreateTopic(ctx context.Context, e *env, topic string, partitions int, configs []kafka.ConfigEntry) error {
	cl := kgClient(e)
	resp, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: partitions, ReplicationFactor: 1, ConfigEntries: configs,
	}}})
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	if err := resp.Errors[topic]; err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return kgWaitPartitions(ctx, e, topic, partitions)
}

func kgWaitPartitions(ctx context.Context, e *env, topic string, n int) error {
	cl := kgClient(e)
	return waitFor(ctx, 15*time.Second, func() error {
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err != nil {
			return err
		}
		for _, t := range md.Topics {
			if t.Name != topic {
				continue
			}
			if t.Error != nil {
				return fmt.Errorf("metadata for %s: %w", topic, t.Error)
			}
			if len(t.Partitions) != n {
				return fmt.Errorf("metadata shows %d partitions for %s, want %d", len(t.Partitions), topic, n)
			}
			for _, p := range t.Partitions {
				if p.Error != nil || p.Leader.Host == "" {
					return fmt.Errorf("partition %d of %s: leader %+v, err %v", p.ID, topic, p.Leader, p.Error)
				}
			}
			return nil
		}
		return fmt.Errorf("metadata has no topic %s", topic)
	})
}

func kgMetadata(ctx context.Context, e *env) error {
	cl := kgClient(e)
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	var addrs []string
	for _, b := range md.Brokers {
		addrs = append(addrs, net.JoinHostPort(b.Host, strconv.Itoa(b.Port)))
	}
	if err := checkBootstrapAmong(e.bootstrap, addrs); err != nil {
		return err
	}
	if md.ClusterID == "" {
		return errors.New("metadata has no cluster id")
	}
	topic := e.topic("metadata")
	if err := kgCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return err
	}
	resp, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 3, ReplicationFactor: 1}}})
	if err != nil {
		return fmt.Errorf("create topic again: %w", err)
	}
	if !errors.Is(resp.Errors[topic], kafka.TopicAlreadyExists) {
		return fmt.Errorf("create existing topic: got %v, want TopicAlreadyExists", resp.Errors[topic])
	}
	return nil
}

func kgCodec(c string) compress.Compression {
	switch c {
	case "gzip":
		return kafka.Gzip
	case "snappy":
		return kafka.Snappy
	case "lz4":
		return kafka.Lz4
	case "zstd":
		return kafka.Zstd
	}
	return 0
}

func kgMessage(e *env, i int, base int64) kafka.Message {
	m := kafka.Message{Key: []byte(keyFor(i)), Value: []byte(valueFor(i))}
	for _, h := range headersFor(e.client, i) {
		m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: []byte(h.Value)})
	}
	if base != 0 {
		m.Time = time.UnixMilli(base + int64(i))
	}
	return m
}

func kgWriter(e *env, topic string, acks kafka.RequiredAcks, codec string) *kafka.Writer {
	return &kafka.Writer{
		Addr:         kafka.TCP(e.bootstrap),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: acks,
		Compression:  kgCodec(codec),
		BatchSize:    500,
		BatchTimeout: 5 * time.Millisecond,
		WriteTimeout: 20 * time.Second,
	}
}

func kgProduceRange(ctx context.Context, w *kafka.Writer, e *env, from, to int, base int64) error {
	msgs := make([]kafka.Message, 0, to-from)
	for i := from; i < to; i++ {
		msgs = append(msgs, kgMessage(e, i, base))
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		return kgFirstWriteError(err)
	}
	return nil
}

// kgFirstWriteError unpacks kafka.WriteErrors, which has no Unwrap.
func kgFirstWriteError(err error) error {
	var we kafka.WriteErrors
	if errors.As(err, &we) {
		for i, e := range we {
			if e != nil {
				return fmt.Errorf("%d of %d messages failed, first (#%d): %w", we.Count(), len(we), i, e)
			}
		}
	}
	return err
}

func kgEndOffsets(ctx context.Context, e *env, topic string, n int) (map[int]int64, error) {
	var reqs []kafka.OffsetRequest
	for p := 0; p < n; p++ {
		reqs = append(reqs, kafka.LastOffsetOf(p))
	}
	resp, err := kgClient(e).ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	out := map[int]int64{}
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("end offset of partition %d: %w", po.Partition, po.Error)
		}
		out[po.Partition] = po.LastOffset
	}
	return out, nil
}

func kgProduce(ctx context.Context, e *env) error {
	for _, codec := range codecs {
		topic := e.topic("produce-" + codec)
		if err := kgCreateTopic(ctx, e, topic, 3, nil); err != nil {
			return err
		}
		for _, acks := range []string{"all", "1"} {
			ack, from := kafka.RequireAll, 0
			if acks == "1" {
				ack, from = kafka.RequireOne, e.records
			}
			w := kgWriter(e, topic, ack, codec)
			err := kgProduceRange(ctx, w, e, from, from+e.records, tsBase())
			w.Close()
			if err != nil {
				return fmt.Errorf("%s acks=%s: %w", codec, acks, err)
			}
		}
		// The Writer reports no offsets; the end offsets must add up.
		ends, err := kgEndOffsets(ctx, e, topic, 3)
		if err != nil {
			return fmt.Errorf("%s: %w", codec, err)
		}
		sum := int64(0)
		for _, o := range ends {
			sum += o
		}
		if sum != int64(2*e.records) {
			return fmt.Errorf("%s: end offsets %v sum to %d, want %d", codec, ends, sum, 2*e.records)
		}
		e.logf("produce %s: %d records, end offsets %v", codec, 2*e.records, ends)
	}
	return nil
}

func kgRecordOf(m kafka.Message) record {
	r := record{Partition: int32(m.Partition), Offset: m.Offset, Key: string(m.Key), Value: string(m.Value), Timestamp: m.Time.UnixMilli()}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, header{h.Key, string(h.Value)})
	}
	return r
}

// kgConsumeN reads each partition of topic from its first offset with a
// partition Reader until n records arrived (plus a short grace).
func kgConsumeN(ctx context.Context, e *env, topic string, partitions, n int) ([]record, error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs := make(chan kafka.Message, 1024)
	errs := make(chan error, partitions)
	var wg sync.WaitGroup
	for p := 0; p < partitions; p++ {
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers: []string{e.bootstrap}, Topic: topic, Partition: p,
			MinBytes: 1, MaxBytes: 10 << 20, MaxWait: 250 * time.Millisecond,
		})
		if err := r.SetOffset(kafka.FirstOffset); err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			for {
				m, err := r.ReadMessage(cctx)
				if err != nil {
					if cctx.Err() == nil {
						errs <- fmt.Errorf("read partition %d: %w", p, err)
					}
					return
				}
				select {
				case msgs <- m:
				case <-cctx.Done():
					return
				}
			}
		}()
	}
	defer wg.Wait()
	defer cancel()
	var got []record
	var graceC <-chan time.Time
	for {
		select {
		case m := <-msgs:
			got = append(got, kgRecordOf(m))
			if len(got) == n {
				graceC = time.After(time.Second)
			}
		case err := <-errs:
			return got, err
		case <-graceC:
			return got, nil
		case <-ctx.Done():
			return got, fmt.Errorf("consumed %d of %d records: %w", len(got), n, ctx.Err())
		}
	}
}

func kgConsume(ctx context.Context, e *env) error {
	topic := e.topic("consume")
	if err := kgCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return err
	}
	base := tsBase()
	chunk := e.records / len(codecs)
	for c, codec := range codecs {
		to := (c + 1) * chunk
		if c == len(codecs)-1 {
			to = e.records
		}
		w := kgWriter(e, topic, kafka.RequireAll, codec)
		err := kgProduceRange(ctx, w, e, c*chunk, to, base)
		w.Close()
		if err != nil {
			return fmt.Errorf("produce (%s): %w", codec, err)
		}
	}
	got, err := kgConsumeN(ctx, e, topic, 3, e.records)
	if err != nil {
		return err
	}
	return verify(got, expectation{
		idx:          rangeIdx(0, e.records),
		want:         func(i int) record { return record{Headers: headersFor(e.client, i), Timestamp: base + int64(i)} },
		checkHeaders: true,
	})
}

// kgMember is a group member built on kafka.ConsumerGroup, which (unlike a
// group Reader) exposes its assignment: one Reader per assigned partition,
// started at the offset the group handed out.
type kgMember struct {
	cg   *kafka.ConsumerGroup
	mu   sync.Mutex
	gen  *kafka.Generation
	held []int32
	next map[int]int64 // next offset per partition, to commit
	got  []record
	err  error
	done chan struct{}
}

func (m *kgMember) parts() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int32(nil), m.held...)
}

func (m *kgMember) records() []record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]record(nil), m.got...)
}

func (m *kgMember) commit(topic string) error {
	m.mu.Lock()
	gen, next := m.gen, map[int]int64{}
	for p, o := range m.next {
		next[p] = o
	}
	m.mu.Unlock()
	if gen == nil {
		return errors.New("member has no generation to commit in")
	}
	return gen.CommitOffsets(map[string]map[int]int64{topic: next})
}

func startKgMember(ctx context.Context, e *env, topic, group string) (*kgMember, error) {
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID: group, Brokers: []string{e.bootstrap}, Topics: []string{topic},
		StartOffset:       kafka.FirstOffset,
		HeartbeatInterval: 500 * time.Millisecond,
		SessionTimeout:    10 * time.Second,
		RebalanceTimeout:  10 * time.Second,
		JoinGroupBackoff:  500 * time.Millisecond,
	})
	if err != nil {
		return nil, err
	}
	m := &kgMember{cg: cg, next: map[int]int64{}, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			gen, err := cg.Next(ctx)
			if err != nil {
				if errors.Is(err, kafka.ErrGroupClosed) || ctx.Err() != nil {
					return
				}
				// The group keeps running and retries (as a group
				// Reader does); keep the error for the report.
				m.mu.Lock()
				m.err = err
				m.mu.Unlock()
				continue
			}
			m.mu.Lock()
			m.gen, m.held = gen, nil
			for _, a := range gen.Assignments[topic] {
				m.held = append(m.held, int32(a.ID))
			}
			m.mu.Unlock()
			for _, a := range gen.Assignments[topic] {
				a := a
				gen.Start(func(gctx context.Context) {
					r := kafka.NewReader(kafka.ReaderConfig{
						Brokers: []string{e.bootstrap}, Topic: topic, Partition: a.ID,
						MinBytes: 1, MaxBytes: 10 << 20, MaxWait: 250 * time.Millisecond,
					})
					defer r.Close()
					if err := r.SetOffset(a.Offset); err != nil {
						return
					}
					for {
						msg, err := r.ReadMessage(gctx)
						if err != nil {
							return
						}
						m.mu.Lock()
						m.got = append(m.got, kgRecordOf(msg))
						m.next[a.ID] = msg.Offset + 1
						m.mu.Unlock()
					}
				})
			}
		}
	}()
	return m, nil
}

func kgGroups(ctx context.Context, e *env) error {
	topic, group := e.topic("groups"), e.topic("group")
	if err := kgCreateTopic(ctx, e, topic, groupPartitions, nil); err != nil {
		return err
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a, err := startKgMember(gctx, e, topic, group)
	if err != nil {
		return err
	}
	defer a.cg.Close()
	b, err := startKgMember(gctx, e, topic, group)
	if err != nil {
		return err
	}
	defer b.cg.Close()
	if err := waitStableSplit(ctx, a.parts, b.parts); err != nil {
		return fmt.Errorf("two members never split the partitions: %w (errors: %v, %v)", err, a.err, b.err)
	}
	pa, pb := a.parts(), b.parts()
	e.logf("members hold %v and %v", pa, pb)
	w := kgWriter(e, topic, kafka.RequireAll, "none")
	defer w.Close()
	if err := kgProduceRange(ctx, w, e, 0, groupFirst, 0); err != nil {
		return err
	}
	if err := waitFor(ctx, 30*time.Second, func() error {
		if n := len(a.records()) + len(b.records()); n < groupFirst {
			return fmt.Errorf("members consumed %d of %d records", n, groupFirst)
		}
		return nil
	}); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	if err := checkMemberRecords(a.records(), pa, b.records(), pb, 0, groupFirst); err != nil {
		return err
	}
	for _, m := range []*kgMember{a, b} {
		if err := m.commit(topic); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	committed, err := kgClient(e).OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1, 2, 3}}})
	if err != nil {
		return fmt.Errorf("fetch committed offsets: %w", err)
	}
	sum := int64(0)
	for _, p := range committed.Topics[topic] {
		if p.Error != nil {
			return fmt.Errorf("fetch committed offsets: %w", p.Error)
		}
		if p.CommittedOffset > 0 {
			sum += p.CommittedOffset
		}
	}
	if sum != groupFirst {
		return fmt.Errorf("committed offsets sum to %d, want %d", sum, groupFirst)
	}
	a.cg.Close()
	b.cg.Close()

	if err := kgProduceRange(ctx, w, e, groupFirst, groupFirst+groupSecond, 0); err != nil {
		return err
	}
	c, err := startKgMember(gctx, e, topic, group)
	if err != nil {
		return err
	}
	defer c.cg.Close()
	if err := waitFor(ctx, 30*time.Second, func() error {
		if n := len(c.records()); n < groupSecond {
			return fmt.Errorf("restarted member consumed %d of %d new records (error: %v)", n, groupSecond, c.err)
		}
		return nil
	}); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	if err := verify(c.records(), expectation{idx: rangeIdx(groupFirst, groupFirst+groupSecond)}); err != nil {
		return fmt.Errorf("after restart (should resume at the committed offsets): %w", err)
	}
	return nil
}

func kgAdmin(ctx context.Context, e *env) error {
	topic := e.topic("admin")
	if err := kgCreateTopic(ctx, e, topic, 2, []kafka.ConfigEntry{{ConfigName: "retention.ms", ConfigValue: "3600000"}}); err != nil {
		return err
	}
	cl := kgClient(e)
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil || len(md.Brokers) == 0 {
		return fmt.Errorf("metadata: %v", err)
	}
	resp, err := cl.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{
		{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic},
		{ResourceType: kafka.ResourceTypeBroker, ResourceName: strconv.Itoa(md.Brokers[0].ID)},
	}})
	if err != nil {
		return fmt.Errorf("describe configs: %w", err)
	}
	if len(resp.Resources) != 2 {
		return fmt.Errorf("describe configs: %d resources in the response, want 2", len(resp.Resources))
	}
	for _, r := range resp.Resources {
		if r.Error != nil {
			return fmt.Errorf("describe configs of %s: %w", r.ResourceName, r.Error)
		}
		cfg := map[string]string{}
		for _, c := range r.ConfigEntries {
			cfg[c.ConfigName] = c.ConfigValue
		}
		if r.ResourceName == topic {
			err = checkTopicConfigs(cfg)
		} else {
			err = checkBrokerConfigs(cfg)
		}
		if err != nil {
			return err
		}
	}
	cp, err := cl.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{Topics: []kafka.TopicPartitionsConfig{{Name: topic, Count: 4}}})
	if err != nil {
		return fmt.Errorf("create partitions: %w", err)
	}
	if err := cp.Errors[topic]; err != nil {
		return fmt.Errorf("create partitions: %w", err)
	}
	if err := kgWaitPartitions(ctx, e, topic, 4); err != nil {
		return fmt.Errorf("after create partitions: %w", err)
	}
	dt, err := cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	if err := dt.Errors[topic]; err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	return kgCheckAbsent(ctx, e, topic, 15*time.Second)
}

// kgCheckAbsent waits (up to limit) until metadata says topic does not exist.
func kgCheckAbsent(ctx context.Context, e *env, topic string, limit time.Duration) error {
	cl := kgClient(e)
	return waitFor(ctx, limit, func() error {
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err != nil {
			return err
		}
		for _, t := range md.Topics {
			if t.Name == topic && !errors.Is(t.Error, kafka.UnknownTopicOrPartition) {
				return fmt.Errorf("topic %s exists (err %v, %d partitions)", topic, t.Error, len(t.Partitions))
			}
		}
		return nil
	})
}

func kgErrors(ctx context.Context, e *env) error {
	topic := e.topic("missing")
	w := kgWriter(e, topic, kafka.RequireAll, "none")
	defer w.Close()
	start := time.Now()
	err := w.WriteMessages(ctx, kafka.Message{Value: []byte("x")})
	took := time.Since(start).Round(100 * time.Millisecond)
	if err == nil {
		return errors.New("produce to a topic that does not exist succeeded")
	}
	err = kgFirstWriteError(err)
	if !errors.Is(err, kafka.UnknownTopicOrPartition) {
		return fmt.Errorf("after %s: got %v, want UnknownTopicOrPartition", took, err)
	}
	if err := kgCheckAbsent(ctx, e, topic, 0); err != nil {
		return fmt.Errorf("after the failed produce: %w (auto-created?)", err)
	}
	return passWith("%v after %s", err, took)
}
