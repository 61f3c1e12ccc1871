package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// franz-go: github.com/twmb/franz-go/pkg/kgo with kadm for admin.
var franzDriver = driver{
	"metadata":     franzMetadata,
	"produce":      franzProduce,
	"consume":      franzConsume,
	"groups":       franzGroups,
	"transactions": franzTransactions,
	"admin":        franzAdmin,
	"errors":       franzErrors,
}

func franzClient(e *env, opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{
		kgo.SeedBrokers(e.bootstrap),
		kgo.ClientID("compat-franz-go"),
		kgo.RetryTimeout(20 * time.Second),
		// No RecordDeliveryTimeout: franz-go counts it from the record's
		// timestamp, which the data set puts an hour back.
	}
	return kgo.NewClient(append(base, opts...)...)
}

// franzAdmin opens a kadm client; kcat's scenarios use it too, since kcat
// has no admin API.
func franzAdminClient(e *env) (*kadm.Client, *kgo.Client, error) {
	cl, err := franzClient(e)
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl, nil
}

// franzCreateTopic creates topic with kadm and waits until metadata shows
// all its partitions with a leader.
func franzCreateTopic(ctx context.Context, e *env, topic string, partitions int32, configs map[string]*string) error {
	adm, cl, err := franzAdminClient(e)
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := adm.CreateTopic(ctx, partitions, 1, configs, topic)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	if resp.Err != nil {
		return fmt.Errorf("create topic %s: %w %s", topic, resp.Err, resp.ErrMessage)
	}
	return franzWaitPartitions(ctx, adm, topic, int(partitions))
}

func franzWaitPartitions(ctx context.Context, adm *kadm.Client, topic string, n int) error {
	return waitFor(ctx, 15*time.Second, func() error {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		td, ok := md.Topics[topic]
		if !ok {
			return fmt.Errorf("metadata has no topic %s", topic)
		}
		if td.Err != nil {
			return fmt.Errorf("metadata for %s: %w", topic, td.Err)
		}
		if len(td.Partitions) != n {
			return fmt.Errorf("metadata shows %d partitions for %s, want %d", len(td.Partitions), topic, n)
		}
		for _, p := range td.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return fmt.Errorf("partition %d of %s: leader %d, err %v", p.Partition, topic, p.Leader, p.Err)
			}
			if !hasBroker(md.Brokers, p.Leader) {
				return fmt.Errorf("partition %d of %s: leader %d is not among the brokers", p.Partition, topic, p.Leader)
			}
		}
		return nil
	})
}

func franzMetadata(ctx context.Context, e *env) error {
	adm, cl, err := franzAdminClient(e)
	if err != nil {
		return err
	}
	defer cl.Close()
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if err := checkBootstrapAmong(e.bootstrap, brokerAddrs(brokers)); err != nil {
		return err
	}
	topic := e.topic("metadata")
	resp, err := adm.CreateTopic(ctx, 3, 1, nil, topic)
	if err != nil || resp.Err != nil {
		return fmt.Errorf("create topic: %v %v %s", err, resp.Err, resp.ErrMessage)
	}
	if err := franzWaitPartitions(ctx, adm, topic, 3); err != nil {
		return err
	}
	// kadm returns the topic's error as err too.
	resp, err = adm.CreateTopic(ctx, 3, 1, nil, topic)
	if !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create existing topic: got %v (%v), want TOPIC_ALREADY_EXISTS", resp.Err, err)
	}
	return nil
}

func hasBroker(bs kadm.BrokerDetails, id int32) bool {
	for _, b := range bs {
		if b.NodeID == id {
			return true
		}
	}
	return false
}

func brokerAddrs(bs kadm.BrokerDetails) []string {
	var out []string
	for _, b := range bs {
		out = append(out, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}
	return out
}

// checkBootstrapAmong checks the broker we dialled advertises itself.
func checkBootstrapAmong(bootstrap string, addrs []string) error {
	if len(addrs) == 0 {
		return errors.New("metadata lists no brokers")
	}
	for _, a := range addrs {
		if a == bootstrap {
			return nil
		}
	}
	return fmt.Errorf("metadata lists brokers %v, none is the bootstrap %s", addrs, bootstrap)
}

func franzCodec(c string) kgo.CompressionCodec {
	switch c {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}

func franzRecord(e *env, topic string, i int, base int64) *kgo.Record {
	r := &kgo.Record{Topic: topic, Key: []byte(keyFor(i)), Value: []byte(valueFor(i))}
	for _, h := range headersFor(e.client, i) {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)})
	}
	if base != 0 {
		r.Timestamp = time.UnixMilli(base + int64(i))
	}
	return r
}

// franzProduceRange produces records from..to-1 and returns, per index, the
// partition and offset the broker acknowledged.
func franzProduceRange(ctx context.Context, cl *kgo.Client, e *env, topic string, from, to int, base int64) (map[int]int32, map[int32][]int64, error) {
	var mu sync.Mutex
	parts := map[int]int32{}
	offs := map[int32][]int64{}
	var firstErr error
	for i := from; i < to; i++ {
		i := i
		cl.Produce(ctx, franzRecord(e, topic, i, base), func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("record %d: %w", i, err)
				}
				return
			}
			parts[i] = r.Partition
			offs[r.Partition] = append(offs[r.Partition], r.Offset)
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, nil, err
	}
	return parts, offs, firstErr
}

func franzProduce(ctx context.Context, e *env) error {
	adm, acl, err := franzAdminClient(e)
	if err != nil {
		return err
	}
	defer acl.Close()
	for _, codec := range codecs {
		topic := e.topic("produce-" + codec)
		if err := franzCreateTopic(ctx, e, topic, 3, nil); err != nil {
			return err
		}
		all := map[int32][]int64{}
		for _, acks := range []string{"all", "1"} {
			ack := kgo.AllISRAcks()
			if acks == "1" {
				ack = kgo.LeaderAck()
			}
			// Idempotence (franz-go's default) is exercised by the
			// transactions scenario; this one is plain produce.
			cl, err := franzClient(e, kgo.RequiredAcks(ack), kgo.DisableIdempotentWrite(),
				kgo.ProducerBatchCompression(franzCodec(codec)))
			if err != nil {
				return err
			}
			from := 0
			if acks == "1" {
				from = e.records
			}
			_, offs, err := franzProduceRange(ctx, cl, e, topic, from, from+e.records, tsBase())
			cl.Close()
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
		if err := franzCheckEndOffsets(ctx, adm, topic, counts, 2*e.records); err != nil {
			return fmt.Errorf("%s: %w", codec, err)
		}
		e.logf("produce %s: %d records in %d partitions", codec, 2*e.records, len(counts))
	}
	return nil
}

func franzCheckEndOffsets(ctx context.Context, adm *kadm.Client, topic string, counts map[int32]int64, total int) error {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}
	sum := int64(0)
	var problem error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			problem = fmt.Errorf("end offset of partition %d: %w", o.Partition, o.Err)
			return
		}
		sum += o.Offset
		if o.Offset != counts[o.Partition] {
			problem = fmt.Errorf("partition %d: end offset %d, %d records acknowledged", o.Partition, o.Offset, counts[o.Partition])
		}
	})
	if problem != nil {
		return problem
	}
	if sum != int64(total) {
		return fmt.Errorf("end offsets sum to %d, want %d", sum, total)
	}
	return nil
}

func franzRecordOf(r *kgo.Record) record {
	out := record{Partition: r.Partition, Offset: r.Offset, Key: string(r.Key), Value: string(r.Value), Timestamp: r.Timestamp.UnixMilli()}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, header{h.Key, string(h.Value)})
	}
	return out
}

// franzConsumeN reads topic from the start, without a group, until n records
// arrived (then a short grace for anything extra) or ctx ends.
func franzConsumeN(ctx context.Context, e *env, topic string, n int, opts ...kgo.Opt) ([]record, error) {
	cl, err := franzClient(e, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var got []record
	var grace time.Time
	for {
		pctx := ctx
		var cancel context.CancelFunc = func() {}
		if len(got) >= n {
			if grace.IsZero() {
				grace = time.Now().Add(time.Second)
			}
			if time.Now().After(grace) {
				return got, nil
			}
			pctx, cancel = context.WithDeadline(ctx, grace)
		}
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return got, fmt.Errorf("consumed %d of %d records: %w", len(got), n, ctx.Err())
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				ferr = fmt.Errorf("fetch %s[%d]: %w", t, p, err)
			}
		})
		if ferr != nil {
			return got, ferr
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, franzRecordOf(r)) })
	}
}

func franzConsume(ctx context.Context, e *env) error {
	topic := e.topic("consume")
	if err := franzCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return err
	}
	base := tsBase()
	parts := map[int]int32{}
	chunk := e.records / len(codecs)
	for c, codec := range codecs {
		cl, err := franzClient(e, kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(franzCodec(codec)))
		if err != nil {
			return err
		}
		to := (c + 1) * chunk
		if c == len(codecs)-1 {
			to = e.records
		}
		p, _, err := franzProduceRange(ctx, cl, e, topic, c*chunk, to, base)
		cl.Close()
		if err != nil {
			return fmt.Errorf("produce (%s): %w", codec, err)
		}
		for i, pp := range p {
			parts[i] = pp
		}
	}
	got, err := franzConsumeN(ctx, e, topic, e.records)
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

type franzMember struct {
	mu       sync.Mutex
	cl       *kgo.Client
	assigned map[int32]bool
	got      []record
	err      error
}

func (m *franzMember) parts() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedParts(m.assigned)
}

func (m *franzMember) records() []record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]record(nil), m.got...)
}

func startFranzMember(ctx context.Context, e *env, topic, group string) (*franzMember, error) {
	m := &franzMember{assigned: map[int32]bool{}}
	cl, err := franzClient(e,
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(10*time.Second),
		kgo.HeartbeatInterval(500*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range a[topic] {
				m.assigned[p] = true
			}
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, r map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range r[topic] {
				delete(m.assigned, p)
			}
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, r map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range r[topic] {
				delete(m.assigned, p)
			}
		}),
	)
	if err != nil {
		return nil, err
	}
	m.cl = cl
	go func() {
		for {
			fs := cl.PollFetches(ctx)
			if fs.IsClientClosed() || ctx.Err() != nil {
				return
			}
			fs.EachError(func(t string, p int32, err error) {
				m.mu.Lock()
				if m.err == nil {
					m.err = fmt.Errorf("fetch %s[%d]: %w", t, p, err)
				}
				m.mu.Unlock()
			})
			fs.EachRecord(func(r *kgo.Record) {
				m.mu.Lock()
				m.got = append(m.got, franzRecordOf(r))
				m.mu.Unlock()
			})
		}
	}()
	return m, nil
}

func franzGroups(ctx context.Context, e *env) error {
	topic, group := e.topic("groups"), e.topic("group")
	if err := franzCreateTopic(ctx, e, topic, groupPartitions, nil); err != nil {
		return err
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a, err := startFranzMember(gctx, e, topic, group)
	if err != nil {
		return err
	}
	defer a.cl.Close()
	b, err := startFranzMember(gctx, e, topic, group)
	if err != nil {
		return err
	}
	defer b.cl.Close()
	// Both members must hold a share of the partitions before any record exists.
	if err := waitStableSplit(ctx, a.parts, b.parts); err != nil {
		return fmt.Errorf("two members never split the partitions: %w", err)
	}
	pa, pb := a.parts(), b.parts()
	e.logf("members hold %v and %v", pa, pb)

	prod, err := franzClient(e, kgo.DisableIdempotentWrite())
	if err != nil {
		return err
	}
	defer prod.Close()
	if _, _, err := franzProduceRange(ctx, prod, e, topic, 0, groupFirst, 0); err != nil {
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
	time.Sleep(500 * time.Millisecond) // anything extra would show up now
	if err := checkMemberRecords(a.records(), pa, b.records(), pb, 0, groupFirst); err != nil {
		return err
	}
	for _, m := range []*franzMember{a, b} {
		if m.err != nil {
			return m.err
		}
		if err := m.cl.CommitUncommittedOffsets(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	// Committed offsets, as the group coordinator reports them.
	adm, acl, err := franzAdminClient(e)
	if err != nil {
		return err
	}
	defer acl.Close()
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return fmt.Errorf("fetch committed offsets: %w", err)
	}
	sum := int64(0)
	committed.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil {
			sum += o.At
		}
	})
	if sum != groupFirst {
		return fmt.Errorf("committed offsets sum to %d, want %d", sum, groupFirst)
	}
	a.cl.Close()
	b.cl.Close()

	if _, _, err := franzProduceRange(ctx, prod, e, topic, groupFirst, groupFirst+groupSecond, 0); err != nil {
		return err
	}
	c, err := startFranzMember(gctx, e, topic, group)
	if err != nil {
		return err
	}
	defer c.cl.Close()
	if err := waitFor(ctx, 30*time.Second, func() error {
		if n := len(c.records()); n < groupSecond {
			return fmt.Errorf("restarted member consumed %d of %d new records", n, groupSecond)
		}
		return nil
	}); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	if c.err != nil {
		return c.err
	}
	if err := verify(c.records(), expectation{idx: rangeIdx(groupFirst, groupFirst+groupSecond)}); err != nil {
		return fmt.Errorf("after restart (should resume at the committed offsets): %w", err)
	}
	return nil
}

// waitStableSplit waits until two members split the group's partitions and
// hold the split for a second.
func waitStableSplit(ctx context.Context, a, b func() []int32) error {
	var since time.Time
	var last string
	return waitFor(ctx, 45*time.Second, func() error {
		pa, pb := a(), b()
		if err := assignmentSplit(pa, pb, groupPartitions); err != nil {
			since = time.Time{}
			return err
		}
		cur := fmt.Sprint(pa, pb)
		if cur != last || since.IsZero() {
			last, since = cur, time.Now()
		}
		if time.Since(since) < time.Second {
			return fmt.Errorf("members hold %v and %v, waiting for it to settle", pa, pb)
		}
		return nil
	})
}

// checkMemberRecords checks the two members together got from..to-1 exactly
// once, each only from partitions it held, and both got some.
func checkMemberRecords(ga []record, pa []int32, gb []record, pb []int32, from, to int) error {
	for _, m := range []struct {
		name  string
		got   []record
		parts []int32
	}{{"first", ga, pa}, {"second", gb, pb}} {
		held := map[int32]bool{}
		for _, p := range m.parts {
			held[p] = true
		}
		for _, r := range m.got {
			if !held[r.Partition] {
				return fmt.Errorf("%s member got a record from partition %d, it holds %v", m.name, r.Partition, m.parts)
			}
		}
		if len(m.got) == 0 {
			return fmt.Errorf("%s member got no records", m.name)
		}
	}
	return verify(append(append([]record{}, ga...), gb...), expectation{idx: rangeIdx(from, to)})
}

func franzTransactions(ctx context.Context, e *env) error {
	// Idempotent producer (franz-go's default, made explicit).
	topic := e.topic("idempotent")
	if err := franzCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return err
	}
	cl, err := franzClient(e, kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return err
	}
	parts, _, err := franzProduceRange(ctx, cl, e, topic, 0, idemRecords, 0)
	cl.Close()
	if err != nil {
		return fmt.Errorf("idempotent produce: %w", err)
	}
	got, err := franzConsumeN(ctx, e, topic, idemRecords)
	if err != nil {
		return fmt.Errorf("idempotent: %w", err)
	}
	if err := verify(got, expectation{idx: rangeIdx(0, idemRecords), partitions: parts}); err != nil {
		return fmt.Errorf("idempotent: %w", err)
	}

	// Transactions: A committed, B aborted, C open then committed.
	topic = e.topic("txn")
	if err := franzCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return err
	}
	tx, err := franzClient(e, kgo.TransactionalID(e.topic("txid")), kgo.TransactionTimeout(60*time.Second))
	if err != nil {
		return err
	}
	defer tx.Close()
	txn := func(from int, commit bool) error {
		if err := tx.BeginTransaction(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		if _, _, err := franzProduceRange(ctx, tx, e, topic, from, from+txnRecords, 0); err != nil {
			return fmt.Errorf("produce in transaction: %w", err)
		}
		if commit {
			if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
		} else {
			if err := tx.EndTransaction(ctx, kgo.TryAbort); err != nil {
				return fmt.Errorf("abort: %w", err)
			}
		}
		return nil
	}
	A, B, C := 0, txnRecords, 2*txnRecords
	if err := txn(A, true); err != nil {
		return err
	}
	if err := txn(B, false); err != nil {
		return err
	}
	if err := tx.BeginTransaction(); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if _, _, err := franzProduceRange(ctx, tx, e, topic, C, C+txnRecords, 0); err != nil {
		return err
	}
	// With C open, read_committed stops at the last stable offset: A only.
	got, err = franzConsumeN(ctx, e, topic, txnRecords, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return fmt.Errorf("read_committed while a transaction is open: %w", err)
	}
	if err := verify(got, expectation{idx: rangeIdx(A, A+txnRecords)}); err != nil {
		return fmt.Errorf("read_committed while a transaction is open (want only the committed one): %w", err)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	got, err = franzConsumeN(ctx, e, topic, 2*txnRecords, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return fmt.Errorf("read_committed: %w", err)
	}
	if err := verify(got, expectation{idx: append(rangeIdx(A, A+txnRecords), rangeIdx(C, C+txnRecords)...)}); err != nil {
		return fmt.Errorf("read_committed (want the two committed transactions): %w", err)
	}
	got, err = franzConsumeN(ctx, e, topic, 3*txnRecords, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if err != nil {
		return fmt.Errorf("read_uncommitted: %w", err)
	}
	if err := verify(got, expectation{idx: rangeIdx(0, 3*txnRecords)}); err != nil {
		return fmt.Errorf("read_uncommitted (want all three transactions): %w", err)
	}
	return nil
}

func franzAdmin(ctx context.Context, e *env) error {
	adm, cl, err := franzAdminClient(e)
	if err != nil {
		return err
	}
	defer cl.Close()
	topic := e.topic("admin")
	retention := "3600000"
	if err := franzCreateTopic(ctx, e, topic, 2, map[string]*string{"retention.ms": &retention}); err != nil {
		return err
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return fmt.Errorf("describe topic configs: %w", err)
	}
	tc, err := rcs.On(topic, nil)
	if err != nil || tc.Err != nil {
		return fmt.Errorf("describe topic configs: %v %v", err, tc.Err)
	}
	cfg := map[string]string{}
	for _, c := range tc.Configs {
		if c.Value != nil {
			cfg[c.Key] = *c.Value
		}
	}
	if err := checkTopicConfigs(cfg); err != nil {
		return err
	}
	brokers, err := adm.ListBrokers(ctx)
	if err != nil || len(brokers) == 0 {
		return fmt.Errorf("list brokers: %v", err)
	}
	bcs, err := adm.DescribeBrokerConfigs(ctx, brokers[0].NodeID)
	if err != nil {
		return fmt.Errorf("describe broker configs: %w", err)
	}
	bcfg := map[string]string{}
	for _, rc := range bcs {
		if rc.Err != nil {
			return fmt.Errorf("describe broker configs: %w", rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Value != nil {
				bcfg[c.Key] = *c.Value
			}
		}
	}
	if err := checkBrokerConfigs(bcfg); err != nil {
		return err
	}
	cps, err := adm.CreatePartitions(ctx, 2, topic)
	if err != nil {
		return fmt.Errorf("create partitions: %w", err)
	}
	for _, r := range cps {
		if r.Err != nil {
			return fmt.Errorf("create partitions: %w %s", r.Err, r.ErrMessage)
		}
	}
	if err := franzWaitPartitions(ctx, adm, topic, 4); err != nil {
		return fmt.Errorf("after create partitions: %w", err)
	}
	dts, err := adm.DeleteTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	for _, r := range dts {
		if r.Err != nil {
			return fmt.Errorf("delete topic: %w %s", r.Err, r.ErrMessage)
		}
	}
	return waitFor(ctx, 15*time.Second, func() error {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		if td, ok := md.Topics[topic]; ok && !errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("deleted topic still in metadata (err %v, %d partitions)", td.Err, len(td.Partitions))
		}
		return nil
	})
}

// checkTopicConfigs checks a describe of the admin scenario's topic: the
// override set at creation and a default Kafka always reports.
func checkTopicConfigs(cfg map[string]string) error {
	if v := cfg["retention.ms"]; v != "3600000" {
		return fmt.Errorf("describe configs: retention.ms = %q, want the 3600000 set at creation", v)
	}
	if v := cfg["cleanup.policy"]; v != "delete" {
		return fmt.Errorf("describe configs: cleanup.policy = %q, want the default delete", v)
	}
	return nil
}

// checkBrokerConfigs checks a describe of the broker: the suite starts it
// with auto.create.topics.enable=false.
func checkBrokerConfigs(cfg map[string]string) error {
	if len(cfg) == 0 {
		return errors.New("describe broker configs: no configs")
	}
	if v := cfg["auto.create.topics.enable"]; v != "false" {
		return fmt.Errorf("describe broker configs: auto.create.topics.enable = %q, want false", v)
	}
	return nil
}

func franzErrors(ctx context.Context, e *env) error {
	topic := e.topic("missing")
	cl, err := franzClient(e, kgo.DisableIdempotentWrite(), kgo.RecordDeliveryTimeout(30*time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	start := time.Now()
	res := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("x")})
	err = res.FirstErr()
	took := time.Since(start).Round(100 * time.Millisecond)
	if err == nil {
		return fmt.Errorf("produce to a topic that does not exist succeeded")
	}
	if !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("after %s: got %v, want UNKNOWN_TOPIC_OR_PARTITION", took, err)
	}
	if err := franzCheckAbsent(ctx, e, topic); err != nil {
		return err
	}
	return passWith("%v after %s", err, took)
}

// franzCheckAbsent checks the broker did not auto-create topic.
func franzCheckAbsent(ctx context.Context, e *env, topic string) error {
	adm, cl, err := franzAdminClient(e)
	if err != nil {
		return err
	}
	defer cl.Close()
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	if topics.Has(topic) {
		return fmt.Errorf("topic %s exists after the failed produce: the broker auto-created it", topic)
	}
	return nil
}
