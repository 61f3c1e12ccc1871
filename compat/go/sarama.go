package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// sarama: github.com/IBM/sarama, configured for a Kafka 4.0 broker as a
// user of a Kafka 4.x-compatible broker would.
var saramaDriver = driver{
	"metadata":     saramaMetadata,
	"produce":      saramaProduce,
	"consume":      saramaConsume,
	"groups":       saramaGroups,
	"transactions": saramaTransactions,
	"admin":        saramaAdmin,
	"errors":       saramaErrors,
}

func saramaConfig() *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = "compat-sarama"
	c.Version = sarama.V4_0_0_0
	c.Producer.Return.Successes = true
	c.Producer.Flush.Frequency = 5 * time.Millisecond
	c.Producer.Flush.Messages = 500
	c.Consumer.Return.Errors = true
	c.Metadata.Retry.Max = 5
	return c
}

func saramaAdminClient(e *env) (sarama.ClusterAdmin, error) {
	return sarama.NewClusterAdmin([]string{e.bootstrap}, saramaConfig())
}

func saramaCreateTopic(ctx context.Context, e *env, topic string, partitions int32, configs map[string]*string) error {
	adm, err := saramaAdminClient(e)
	if err != nil {
		return err
	}
	defer adm.Close()
	if err := adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1, ConfigEntries: configs}, false); err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return saramaWaitPartitions(ctx, e, topic, int(partitions))
}

func saramaWaitPartitions(ctx context.Context, e *env, topic string, n int) error {
	cl, err := sarama.NewClient([]string{e.bootstrap}, saramaConfig())
	if err != nil {
		return err
	}
	defer cl.Close()
	return waitFor(ctx, 15*time.Second, func() error {
		if err := cl.RefreshMetadata(topic); err != nil {
			return fmt.Errorf("metadata for %s: %w", topic, err)
		}
		ps, err := cl.Partitions(topic)
		if err != nil {
			return fmt.Errorf("partitions of %s: %w", topic, err)
		}
		if len(ps) != n {
			return fmt.Errorf("metadata shows %d partitions for %s, want %d", len(ps), topic, n)
		}
		for _, p := range ps {
			if _, err := cl.Leader(topic, p); err != nil {
				return fmt.Errorf("leader of %s[%d]: %w", topic, p, err)
			}
		}
		return nil
	})
}

func saramaMetadata(ctx context.Context, e *env) error {
	cl, err := sarama.NewClient([]string{e.bootstrap}, saramaConfig())
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cl.Close()
	var addrs []string
	for _, b := range cl.Brokers() {
		addrs = append(addrs, b.Addr())
	}
	if err := checkBootstrapAmong(e.bootstrap, addrs); err != nil {
		return err
	}
	if _, err := cl.Controller(); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	topic := e.topic("metadata")
	if err := saramaCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return err
	}
	adm, err := saramaAdminClient(e)
	if err != nil {
		return err
	}
	defer adm.Close()
	err = adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 1}, false)
	if !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		return fmt.Errorf("create existing topic: got %v, want ErrTopicAlreadyExists", err)
	}
	return nil
}

func saramaCodec(c string) sarama.CompressionCodec {
	switch c {
	case "gzip":
		return sarama.CompressionGZIP
	case "snappy":
		return sarama.CompressionSnappy
	case "lz4":
		return sarama.CompressionLZ4
	case "zstd":
		return sarama.CompressionZSTD
	}
	return sarama.CompressionNone
}

func saramaMessage(e *env, topic string, i int, base int64) *sarama.ProducerMessage {
	m := &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(keyFor(i)), Value: sarama.StringEncoder(valueFor(i)), Metadata: i}
	for _, h := range headersFor(e.client, i) {
		m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: []byte(h.Value)})
	}
	if base != 0 {
		m.Timestamp = time.UnixMilli(base + int64(i))
	}
	return m
}

// saramaProduceRange sends records from..to-1 through an AsyncProducer and
// returns the acknowledged partition per index and offsets per partition.
func saramaProduceRange(ctx context.Context, e *env, cfg *sarama.Config, topic string, from, to int, base int64) (map[int]int32, map[int32][]int64, error) {
	p, err := sarama.NewAsyncProducer([]string{e.bootstrap}, cfg)
	if err != nil {
		return nil, nil, err
	}
	parts := map[int]int32{}
	offs := map[int32][]int64{}
	var firstErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := 0; n < to-from; n++ {
			select {
			case m := <-p.Successes():
				i := m.Metadata.(int)
				parts[i] = m.Partition
				offs[m.Partition] = append(offs[m.Partition], m.Offset)
			case pe := <-p.Errors():
				if firstErr == nil {
					firstErr = fmt.Errorf("record %v: %w", pe.Msg.Metadata, pe.Err)
				}
			case <-ctx.Done():
				firstErr = fmt.Errorf("%d of %d records acknowledged: %w", n, to-from, ctx.Err())
				return
			}
		}
	}()
	for i := from; i < to; i++ {
		select {
		case p.Input() <- saramaMessage(e, topic, i, base):
		case <-ctx.Done():
		}
	}
	<-done
	p.AsyncClose()
	// Drain so AsyncClose can finish.
	go func() {
		for range p.Successes() {
		}
	}()
	for range p.Errors() {
	}
	return parts, offs, firstErr
}

func saramaProduce(ctx context.Context, e *env) error {
	for _, codec := range codecs {
		topic := e.topic("produce-" + codec)
		if err := saramaCreateTopic(ctx, e, topic, 3, nil); err != nil {
			return err
		}
		all := map[int32][]int64{}
		for _, acks := range []string{"all", "1"} {
			cfg := saramaConfig()
			cfg.Producer.Compression = saramaCodec(codec)
			cfg.Producer.RequiredAcks = sarama.WaitForAll
			from := 0
			if acks == "1" {
				cfg.Producer.RequiredAcks = sarama.WaitForLocal
				from = e.records
			}
			_, offs, err := saramaProduceRange(ctx, e, cfg, topic, from, from+e.records, tsBase())
			if err != nil {
				return fmt.Errorf("%s acks=%s: %w", codec, acks, err)
			}
			for p, o := range offs {
				all[p] = append(all[p], o...)
			}
		}
		counts, err := checkDense(all)
		if err != nil {
			return fmt.Errorf("%s: %w", codec, err)
		}
		if err := saramaCheckEndOffsets(e, topic, counts, 2*e.records); err != nil {
			return fmt.Errorf("%s: %w", codec, err)
		}
		e.logf("produce %s: %d records in %d partitions", codec, 2*e.records, len(counts))
	}
	return nil
}

func saramaCheckEndOffsets(e *env, topic string, counts map[int32]int64, total int) error {
	cl, err := sarama.NewClient([]string{e.bootstrap}, saramaConfig())
	if err != nil {
		return err
	}
	defer cl.Close()
	ps, err := cl.Partitions(topic)
	if err != nil {
		return err
	}
	sum := int64(0)
	for _, p := range ps {
		end, err := cl.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return fmt.Errorf("end offset of partition %d: %w", p, err)
		}
		if end != counts[p] {
			return fmt.Errorf("partition %d: end offset %d, %d records acknowledged", p, end, counts[p])
		}
		sum += end
	}
	if sum != int64(total) {
		return fmt.Errorf("end offsets sum to %d, want %d", sum, total)
	}
	return nil
}

func saramaRecordOf(m *sarama.ConsumerMessage) record {
	r := record{Partition: m.Partition, Offset: m.Offset, Key: string(m.Key), Value: string(m.Value), Timestamp: m.Timestamp.UnixMilli()}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, header{string(h.Key), string(h.Value)})
	}
	return r
}

// saramaConsumeN reads every partition of topic from the oldest offset with
// the partition consumer until n records arrived (plus a short grace).
func saramaConsumeN(ctx context.Context, e *env, cfg *sarama.Config, topic string, n int) ([]record, error) {
	c, err := sarama.NewConsumer([]string{e.bootstrap}, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ps, err := c.Partitions(topic)
	if err != nil {
		return nil, err
	}
	msgs := make(chan *sarama.ConsumerMessage, 1024)
	errs := make(chan error, 16)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range ps {
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			return nil, fmt.Errorf("consume partition %d: %w", p, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer pc.AsyncClose()
			for {
				select {
				case m := <-pc.Messages():
					select {
					case msgs <- m:
					case <-cctx.Done():
						return
					}
				case err := <-pc.Errors():
					select {
					case errs <- err:
					default:
					}
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
			got = append(got, saramaRecordOf(m))
			if len(got) == n {
				graceC = time.After(time.Second)
			}
		case err := <-errs:
			return got, fmt.Errorf("consume: %w", err)
		case <-graceC:
			return got, nil
		case <-ctx.Done():
			return got, fmt.Errorf("consumed %d of %d records: %w", len(got), n, ctx.Err())
		}
	}
}

func saramaConsume(ctx context.Context, e *env) error {
	topic := e.topic("consume")
	if err := saramaCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return err
	}
	base := tsBase()
	parts := map[int]int32{}
	chunk := e.records / len(codecs)
	for c, codec := range codecs {
		cfg := saramaConfig()
		cfg.Producer.Compression = saramaCodec(codec)
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		to := (c + 1) * chunk
		if c == len(codecs)-1 {
			to = e.records
		}
		p, _, err := saramaProduceRange(ctx, e, cfg, topic, c*chunk, to, base)
		if err != nil {
			return fmt.Errorf("produce (%s): %w", codec, err)
		}
		for i, pp := range p {
			parts[i] = pp
		}
	}
	got, err := saramaConsumeN(ctx, e, saramaConfig(), topic, e.records)
	if err != nil {
		return err
	}
	return verify(got, expectation{
		idx:          rangeIdx(0, e.records),
		want:         func(i int) record { return record{Headers: headersFor(e.client, i), Timestamp: base + int64(i)} },
		checkHeaders: true,
		partitions:   parts,
	})
}

// saramaMember is one consumer group member and its handler.
type saramaMember struct {
	group sarama.ConsumerGroup
	mu    sync.Mutex
	sess  sarama.ConsumerGroupSession
	held  []int32
	got   []record
	err   error
	topic string
	done  chan struct{}
}

func (m *saramaMember) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sess, m.held = s, append([]int32(nil), s.Claims()[m.topic]...)
	return nil
}

func (m *saramaMember) Cleanup(sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sess, m.held = nil, nil
	return nil
}

func (m *saramaMember) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for {
		select {
		case msg, ok := <-c.Messages():
			if !ok {
				return nil
			}
			m.mu.Lock()
			m.got = append(m.got, saramaRecordOf(msg))
			m.mu.Unlock()
			s.MarkMessage(msg, "")
		case <-s.Context().Done():
			return nil
		}
	}
}

func (m *saramaMember) parts() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int32(nil), m.held...)
}

func (m *saramaMember) records() []record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]record(nil), m.got...)
}

// commit commits the offsets marked so far, synchronously.
func (m *saramaMember) commit() error {
	m.mu.Lock()
	s := m.sess
	m.mu.Unlock()
	if s == nil {
		return errors.New("member has no session to commit in")
	}
	s.Commit()
	return nil
}

func startSaramaMember(ctx context.Context, e *env, topic, group string) (*saramaMember, error) {
	cfg := saramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Session.Timeout = 10 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	g, err := sarama.NewConsumerGroup([]string{e.bootstrap}, group, cfg)
	if err != nil {
		return nil, err
	}
	m := &saramaMember{group: g, topic: topic, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{topic}, m); err != nil {
				if errors.Is(err, sarama.ErrClosedConsumerGroup) {
					return
				}
				m.mu.Lock()
				if m.err == nil {
					m.err = err
				}
				m.mu.Unlock()
				time.Sleep(200 * time.Millisecond)
			}
		}
	}()
	go func() {
		for err := range g.Errors() {
			e.logf("group member error: %v", err)
		}
	}()
	return m, nil
}

func saramaGroups(ctx context.Context, e *env) error {
	topic, group := e.topic("groups"), e.topic("group")
	if err := saramaCreateTopic(ctx, e, topic, groupPartitions, nil); err != nil {
		return err
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a, err := startSaramaMember(gctx, e, topic, group)
	if err != nil {
		return err
	}
	defer a.group.Close()
	b, err := startSaramaMember(gctx, e, topic, group)
	if err != nil {
		return err
	}
	defer b.group.Close()
	if err := waitStableSplit(ctx, a.parts, b.parts); err != nil {
		return fmt.Errorf("two members never split the partitions: %w (errors: %v, %v)", err, a.err, b.err)
	}
	pa, pb := a.parts(), b.parts()
	e.logf("members hold %v and %v", pa, pb)
	pcfg := saramaConfig()
	pcfg.Producer.RequiredAcks = sarama.WaitForAll
	if _, _, err := saramaProduceRange(ctx, e, pcfg, topic, 0, groupFirst, 0); err != nil {
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
	for _, m := range []*saramaMember{a, b} {
		if err := m.commit(); err != nil {
			return err
		}
	}
	adm, err := saramaAdminClient(e)
	if err != nil {
		return err
	}
	defer adm.Close()
	resp, err := adm.ListConsumerGroupOffsets(group, map[string][]int32{topic: {0, 1, 2, 3}})
	if err != nil {
		return fmt.Errorf("fetch committed offsets: %w", err)
	}
	sum := int64(0)
	for _, blk := range resp.Blocks[topic] {
		if blk.Err != sarama.ErrNoError {
			return fmt.Errorf("fetch committed offsets: %w", blk.Err)
		}
		if blk.Offset > 0 {
			sum += blk.Offset
		}
	}
	if sum != groupFirst {
		return fmt.Errorf("committed offsets sum to %d, want %d", sum, groupFirst)
	}
	if err := a.group.Close(); err != nil {
		return fmt.Errorf("close member: %w", err)
	}
	if err := b.group.Close(); err != nil {
		return fmt.Errorf("close member: %w", err)
	}

	if _, _, err := saramaProduceRange(ctx, e, pcfg, topic, groupFirst, groupFirst+groupSecond, 0); err != nil {
		return err
	}
	c, err := startSaramaMember(gctx, e, topic, group)
	if err != nil {
		return err
	}
	defer c.group.Close()
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

func saramaTransactions(ctx context.Context, e *env) error {
	topic := e.topic("idempotent")
	if err := saramaCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return err
	}
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Net.MaxOpenRequests = 1
	parts, _, err := saramaProduceRange(ctx, e, cfg, topic, 0, idemRecords, 0)
	if err != nil {
		return fmt.Errorf("idempotent produce: %w", err)
	}
	got, err := saramaConsumeN(ctx, e, saramaConfig(), topic, idemRecords)
	if err != nil {
		return fmt.Errorf("idempotent: %w", err)
	}
	if err := verify(got, expectation{idx: rangeIdx(0, idemRecords), partitions: parts}); err != nil {
		return fmt.Errorf("idempotent: %w", err)
	}

	topic = e.topic("txn")
	if err := saramaCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return err
	}
	tcfg := saramaConfig()
	tcfg.Producer.Idempotent = true
	tcfg.Producer.RequiredAcks = sarama.WaitForAll
	tcfg.Net.MaxOpenRequests = 1
	tcfg.Producer.Transaction.ID = e.topic("txid")
	tcfg.Producer.Transaction.Timeout = 60 * time.Second
	tp, err := sarama.NewSyncProducer([]string{e.bootstrap}, tcfg)
	if err != nil {
		return fmt.Errorf("transactional producer: %w", err)
	}
	defer tp.Close()
	send := func(from int) error {
		var msgs []*sarama.ProducerMessage
		for i := from; i < from+txnRecords; i++ {
			msgs = append(msgs, saramaMessage(e, topic, i, 0))
		}
		return tp.SendMessages(msgs)
	}
	A, B, C := 0, txnRecords, 2*txnRecords
	for _, t := range []struct {
		from   int
		commit bool
	}{{A, true}, {B, false}} {
		if err := tp.BeginTxn(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		if err := send(t.from); err != nil {
			return fmt.Errorf("produce in transaction: %w", err)
		}
		if t.commit {
			err = tp.CommitTxn()
		} else {
			err = tp.AbortTxn()
		}
		if err != nil {
			return fmt.Errorf("end transaction (commit=%v): %w", t.commit, err)
		}
	}
	if err := tp.BeginTxn(); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := send(C); err != nil {
		return fmt.Errorf("produce in transaction: %w", err)
	}
	rc := saramaConfig()
	rc.Consumer.IsolationLevel = sarama.ReadCommitted
	got, err = saramaConsumeN(ctx, e, rc, topic, txnRecords)
	if err != nil {
		return fmt.Errorf("read_committed while a transaction is open: %w", err)
	}
	if err := verify(got, expectation{idx: rangeIdx(A, A+txnRecords)}); err != nil {
		return fmt.Errorf("read_committed while a transaction is open (want only the committed one): %w", err)
	}
	if err := tp.CommitTxn(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	got, err = saramaConsumeN(ctx, e, rc, topic, 2*txnRecords)
	if err != nil {
		return fmt.Errorf("read_committed: %w", err)
	}
	if err := verify(got, expectation{idx: append(rangeIdx(A, A+txnRecords), rangeIdx(C, C+txnRecords)...)}); err != nil {
		return fmt.Errorf("read_committed (want the two committed transactions): %w", err)
	}
	got, err = saramaConsumeN(ctx, e, saramaConfig(), topic, 3*txnRecords)
	if err != nil {
		return fmt.Errorf("read_uncommitted: %w", err)
	}
	if err := verify(got, expectation{idx: rangeIdx(0, 3*txnRecords)}); err != nil {
		return fmt.Errorf("read_uncommitted (want all three transactions): %w", err)
	}
	return nil
}

func saramaAdmin(ctx context.Context, e *env) error {
	topic := e.topic("admin")
	retention := "3600000"
	if err := saramaCreateTopic(ctx, e, topic, 2, map[string]*string{"retention.ms": &retention}); err != nil {
		return err
	}
	adm, err := saramaAdminClient(e)
	if err != nil {
		return err
	}
	defer adm.Close()
	entries, err := adm.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic})
	if err != nil {
		return fmt.Errorf("describe topic configs: %w", err)
	}
	cfg := map[string]string{}
	for _, c := range entries {
		cfg[c.Name] = c.Value
	}
	if err := checkTopicConfigs(cfg); err != nil {
		return err
	}
	brokers, _, err := adm.DescribeCluster()
	if err != nil || len(brokers) == 0 {
		return fmt.Errorf("describe cluster: %v", err)
	}
	entries, err = adm.DescribeConfig(sarama.ConfigResource{Type: sarama.BrokerResource, Name: strconv.Itoa(int(brokers[0].ID()))})
	if err != nil {
		return fmt.Errorf("describe broker configs: %w", err)
	}
	bcfg := map[string]string{}
	for _, c := range entries {
		bcfg[c.Name] = c.Value
	}
	if err := checkBrokerConfigs(bcfg); err != nil {
		return err
	}
	if err := adm.CreatePartitions(topic, 4, nil, false); err != nil {
		return fmt.Errorf("create partitions: %w", err)
	}
	if err := saramaWaitPartitions(ctx, e, topic, 4); err != nil {
		return fmt.Errorf("after create partitions: %w", err)
	}
	if err := adm.DeleteTopic(topic); err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	return waitFor(ctx, 15*time.Second, func() error {
		topics, err := adm.ListTopics()
		if err != nil {
			return err
		}
		if _, ok := topics[topic]; ok {
			return errors.New("deleted topic still listed")
		}
		return nil
	})
}

func saramaErrors(ctx context.Context, e *env) error {
	topic := e.topic("missing")
	cfg := saramaConfig()
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	p, err := sarama.NewSyncProducer([]string{e.bootstrap}, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		_, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("x")})
		errc <- err
	}()
	select {
	case err = <-errc:
	case <-ctx.Done():
		return fmt.Errorf("produce to a missing topic still pending after %s", time.Since(start).Round(time.Second))
	}
	took := time.Since(start).Round(100 * time.Millisecond)
	if err == nil {
		return errors.New("produce to a topic that does not exist succeeded")
	}
	if !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
		return fmt.Errorf("after %s: got %v, want ErrUnknownTopicOrPartition", took, err)
	}
	adm, err2 := saramaAdminClient(e)
	if err2 != nil {
		return err2
	}
	defer adm.Close()
	topics, err2 := adm.ListTopics()
	if err2 != nil {
		return fmt.Errorf("list topics: %w", err2)
	}
	if _, ok := topics[topic]; ok {
		return fmt.Errorf("topic %s exists after the failed produce: the broker auto-created it", topic)
	}
	return passWith("%v after %s", err, took)
}
