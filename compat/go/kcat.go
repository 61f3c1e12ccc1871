package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// kcat: the Debian kcat binary (librdkafka), driven as a user drives it from
// a shell. kcat has no admin API: its scenarios create topics with franz-go.
var kcatDriver = driver{
	"metadata":     kcatMetadata,
	"produce":      kcatProduce,
	"consume":      kcatConsume,
	"groups":       kcatGroups,
	"transactions": kcatTransactions,
	"admin": func(context.Context, *env) error {
		return notApplicable("kcat has no admin API (describe configs, create partitions, delete topic)")
	},
	"errors": kcatErrors,
}

func kcatBin() string { return getenv("COMPAT_KCAT", "kcat") }

// kcatVersion is "1.7.1 (librdkafka 2.0.2)" from kcat -V.
func kcatVersion() string {
	out, err := exec.Command(kcatBin(), "-V").CombinedOutput()
	if err != nil {
		return ""
	}
	m := regexp.MustCompile(`Version (\S+) .*librdkafka (\S+?)[ )]`).FindStringSubmatch(string(out))
	if m == nil {
		return ""
	}
	return m[1] + " (librdkafka " + m[2] + ")"
}

// kcatRun runs kcat with stdin and returns stdout; a non-zero exit is an
// error carrying stderr.
func kcatRun(ctx context.Context, e *env, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, kcatBin(), append([]string{"-b", e.bootstrap}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kcat %s: %w: %s", strings.Join(args, " "), err, lastLines(errb.String(), 3))
	}
	return out.String(), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

type kcatMetadataJSON struct {
	Brokers []struct {
		ID   int32  `json:"id"`
		Name string `json:"name"`
	} `json:"brokers"`
	Topics []struct {
		Topic      string `json:"topic"`
		Error      string `json:"error"`
		Partitions []struct {
			Partition int32  `json:"partition"`
			Leader    int32  `json:"leader"`
			Error     string `json:"error"`
		} `json:"partitions"`
	} `json:"topics"`
}

func kcatMetadata(ctx context.Context, e *env) error {
	topic := e.topic("metadata")
	if err := franzCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return fmt.Errorf("(with franz-go) %w", err)
	}
	out, err := kcatRun(ctx, e, "", "-L", "-J", "-t", topic)
	if err != nil {
		return err
	}
	var md kcatMetadataJSON
	if err := json.Unmarshal([]byte(out), &md); err != nil {
		return fmt.Errorf("kcat -L -J output: %w", err)
	}
	var addrs []string
	ids := map[int32]bool{}
	for _, b := range md.Brokers {
		addrs = append(addrs, b.Name)
		ids[b.ID] = true
	}
	if err := checkBootstrapAmong(e.bootstrap, addrs); err != nil {
		return err
	}
	if len(md.Topics) != 1 || md.Topics[0].Topic != topic || md.Topics[0].Error != "" {
		return fmt.Errorf("kcat -L shows topics %+v, want %s", md.Topics, topic)
	}
	if n := len(md.Topics[0].Partitions); n != 3 {
		return fmt.Errorf("kcat -L shows %d partitions, want 3", n)
	}
	for _, p := range md.Topics[0].Partitions {
		if p.Error != "" || !ids[p.Leader] {
			return fmt.Errorf("partition %d: leader %d, error %q", p.Partition, p.Leader, p.Error)
		}
	}
	return passWith("topic created with franz-go: kcat has no admin API")
}

// kcatInput is records from..to-1 as kcat -K '\t' reads them: lines of
// exactly 128 bytes. kcat's input reads block until 1024 bytes (or the end of
// input) arrive, so while its input stays open it hands on only whole groups
// of 8 such lines: the transactions kept open below are multiples of 8
// records, and then kcat's input buffer is empty when it is interrupted (with
// a partial record buffered, kcat exits on the signal without aborting).
func kcatInput(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(keyFor(i))
		b.WriteByte('\t')
		b.WriteString(valueFor(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func kcatProduceArgs(topic string, extra ...string) []string {
	return append([]string{"-P", "-t", topic, "-K", `\t`, "-X", "linger.ms=5"}, extra...)
}

// kcatEndOffsets queries the end offset of partitions 0..n-1 (kcat -Q with
// timestamp -1).
func kcatEndOffsets(ctx context.Context, e *env, topic string, n int) (map[int32]int64, error) {
	// -Q answers the last stable offset unless told to read uncommitted.
	args := []string{"-Q", "-X", "isolation.level=read_uncommitted"}
	for p := 0; p < n; p++ {
		args = append(args, "-t", fmt.Sprintf("%s:%d:-1", topic, p))
	}
	out, err := kcatRun(ctx, e, "", args...)
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`\[(\d+)\] offset (-?\d+)`)
	ends := map[int32]int64{}
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		p, _ := strconv.Atoi(m[1])
		o, _ := strconv.ParseInt(m[2], 10, 64)
		ends[int32(p)] = o
	}
	if len(ends) != n {
		return nil, fmt.Errorf("kcat -Q answered %q", strings.TrimSpace(out))
	}
	return ends, nil
}

func sumOffsets(m map[int32]int64) int64 {
	s := int64(0)
	for _, o := range m {
		s += o
	}
	return s
}

func kcatProduce(ctx context.Context, e *env) error {
	for _, codec := range codecs {
		topic := e.topic("produce-" + codec)
		if err := franzCreateTopic(ctx, e, topic, 3, nil); err != nil {
			return fmt.Errorf("(with franz-go) %w", err)
		}
		for _, acks := range []string{"all", "1"} {
			from := 0
			if acks == "1" {
				from = e.records
			}
			if _, err := kcatRun(ctx, e, kcatInput(from, from+e.records),
				kcatProduceArgs(topic, "-z", codec, "-X", "acks="+acks)...); err != nil {
				return fmt.Errorf("%s acks=%s: %w", codec, acks, err)
			}
		}
		ends, err := kcatEndOffsets(ctx, e, topic, 3)
		if err != nil {
			return err
		}
		if s := sumOffsets(ends); s != int64(2*e.records) {
			return fmt.Errorf("%s: end offsets %v sum to %d, want %d", codec, ends, s, 2*e.records)
		}
		e.logf("produce %s: %d records, end offsets %v", codec, 2*e.records, ends)
	}
	return passWith("kcat reports no per-record offsets: checked exit status and end offsets")
}

type kcatMessage struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Offset    int64    `json:"offset"`
	TsType    string   `json:"tstype"`
	Ts        int64    `json:"ts"`
	Headers   []string `json:"headers"`
	Key       *string  `json:"key"`
	Payload   *string  `json:"payload"`
}

func (m kcatMessage) record() record {
	r := record{Partition: m.Partition, Offset: m.Offset, Timestamp: m.Ts}
	if m.Key != nil {
		r.Key = *m.Key
	}
	if m.Payload != nil {
		r.Value = *m.Payload
	}
	for i := 0; i+1 < len(m.Headers); i += 2 {
		r.Headers = append(r.Headers, header{m.Headers[i], m.Headers[i+1]})
	}
	return r
}

func parseKcatJSON(out string) ([]record, error) {
	var got []record
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m kcatMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return got, fmt.Errorf("kcat -J line %q: %w", trunc(line), err)
		}
		got = append(got, m.record())
	}
	return got, nil
}

// kcatConsumeAll reads topic from the beginning to its end (-e) with the
// simple consumer.
func kcatConsumeAll(ctx context.Context, e *env, topic string, extra ...string) ([]record, error) {
	out, err := kcatRun(ctx, e, "", append([]string{"-C", "-t", topic, "-o", "beginning", "-e", "-J"}, extra...)...)
	if err != nil {
		return nil, err
	}
	return parseKcatJSON(out)
}

func kcatConsume(ctx context.Context, e *env) error {
	topic := e.topic("consume")
	if err := franzCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return fmt.Errorf("(with franz-go) %w", err)
	}
	chunk := e.records / len(codecs)
	chunkOf := func(i int) int { return min(i/chunk, len(codecs)-1) }
	lo := time.Now().UnixMilli()
	for c, codec := range codecs {
		to := (c + 1) * chunk
		if c == len(codecs)-1 {
			to = e.records
		}
		// kcat sets headers per invocation, not per record.
		if _, err := kcatRun(ctx, e, kcatInput(c*chunk, to), kcatProduceArgs(topic, "-z", codec, "-X", "acks=all",
			"-H", "client=kcat", "-H", "chunk="+strconv.Itoa(c))...); err != nil {
			return fmt.Errorf("produce (%s): %w", codec, err)
		}
	}
	hi := time.Now().UnixMilli()
	got, err := kcatConsumeAll(ctx, e, topic)
	if err != nil {
		return err
	}
	return verify(got, expectation{
		idx: rangeIdx(0, e.records),
		want: func(i int) record {
			return record{Headers: []header{{"client", "kcat"}, {"chunk", strconv.Itoa(chunkOf(i))}}}
		},
		checkHeaders: true,
		tsLo:         lo - 1000, tsHi: hi + 1000,
	})
}

// kcatProc is a long-running kcat (a group member, or a producer holding a
// transaction open).
type kcatProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	held  map[int32]bool
	got   []record
	errs  []string
	done  chan struct{}
}

var kcatAssignRe = regexp.MustCompile(`rebalanced \(memberid [^)]*\): (assigned|revoked): (.*)$`)
var kcatPartRe = regexp.MustCompile(`\[(\d+)\]`)

func startKcat(ctx context.Context, e *env, args ...string) (*kcatProc, error) {
	cmd := exec.CommandContext(ctx, kcatBin(), append([]string{"-b", e.bootstrap}, args...)...)
	p := &kcatProc{cmd: cmd, held: map[int32]bool{}, done: make(chan struct{})}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m kcatMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				continue
			}
			p.mu.Lock()
			p.got = append(p.got, m.record())
			p.mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			if m := kcatAssignRe.FindStringSubmatch(line); m != nil {
				for _, pm := range kcatPartRe.FindAllStringSubmatch(m[2], -1) {
					n, _ := strconv.Atoi(pm[1])
					p.held[int32(n)] = m[1] == "assigned"
				}
			} else if strings.Contains(line, "ERROR") || strings.Contains(line, "FAIL") {
				p.errs = append(p.errs, line)
			}
			p.mu.Unlock()
		}
	}()
	go func() {
		wg.Wait()
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *kcatProc) parts() []int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return sortedParts(p.held)
}

func (p *kcatProc) records() []record {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]record(nil), p.got...)
}

func (p *kcatProc) errors() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return lastLines(strings.Join(p.errs, "\n"), 3)
}

// stop signals kcat and waits for it to exit (kcat closes its consumer, or
// aborts its transaction, on SIGINT/SIGTERM).
func (p *kcatProc) stop(sig syscall.Signal, limit time.Duration) error {
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return nil
	case <-time.After(limit):
		p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("kcat did not exit within %s of %v", limit, sig)
	}
}

// wait waits for kcat to exit by itself.
func (p *kcatProc) wait(limit time.Duration) error {
	select {
	case <-p.done:
		if !p.cmd.ProcessState.Success() {
			return fmt.Errorf("kcat exited with %v: %s", p.cmd.ProcessState, p.errors())
		}
		return nil
	case <-time.After(limit):
		p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("kcat did not exit within %s", limit)
	}
}

func kcatGroupArgs(group, topic string, extra ...string) []string {
	return append([]string{"-G", group, "-J", "-u",
		"-X", "auto.offset.reset=earliest",
		"-X", "enable.auto.commit=true", "-X", "auto.commit.interval.ms=200",
		"-X", "session.timeout.ms=10000", "-X", "heartbeat.interval.ms=500"}, append(extra, topic)...)
}

func kcatGroups(ctx context.Context, e *env) error {
	topic, group := e.topic("groups"), e.topic("group")
	if err := franzCreateTopic(ctx, e, topic, groupPartitions, nil); err != nil {
		return fmt.Errorf("(with franz-go) %w", err)
	}
	a, err := startKcat(ctx, e, kcatGroupArgs(group, topic)...)
	if err != nil {
		return err
	}
	defer a.stop(syscall.SIGKILL, time.Second)
	b, err := startKcat(ctx, e, kcatGroupArgs(group, topic)...)
	if err != nil {
		return err
	}
	defer b.stop(syscall.SIGKILL, time.Second)
	if err := waitStableSplit(ctx, a.parts, b.parts); err != nil {
		return fmt.Errorf("two members never split the partitions: %w (%s %s)", err, a.errors(), b.errors())
	}
	pa, pb := a.parts(), b.parts()
	e.logf("members hold %v and %v", pa, pb)
	if _, err := kcatRun(ctx, e, kcatInput(0, groupFirst), kcatProduceArgs(topic, "-X", "acks=all")...); err != nil {
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
	time.Sleep(time.Second) // past auto.commit.interval.ms; kcat also commits on close
	if err := checkMemberRecords(a.records(), pa, b.records(), pb, 0, groupFirst); err != nil {
		return err
	}
	for _, m := range []*kcatProc{a, b} {
		if err := m.stop(syscall.SIGTERM, 15*time.Second); err != nil {
			return err
		}
	}
	if _, err := kcatRun(ctx, e, kcatInput(groupFirst, groupFirst+groupSecond), kcatProduceArgs(topic, "-X", "acks=all")...); err != nil {
		return err
	}
	// A restarted member reads to the end (-e) from the committed offsets.
	c, err := startKcat(ctx, e, kcatGroupArgs(group, topic, "-e")...)
	if err != nil {
		return err
	}
	if err := c.wait(45 * time.Second); err != nil {
		return fmt.Errorf("restarted member: %w", err)
	}
	if err := verify(c.records(), expectation{idx: rangeIdx(groupFirst, groupFirst+groupSecond)}); err != nil {
		return fmt.Errorf("after restart (should resume at the committed offsets): %w", err)
	}
	return passWith("offsets committed by kcat's auto-commit and on close")
}

func kcatTransactions(ctx context.Context, e *env) error {
	topic := e.topic("idempotent")
	if err := franzCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return fmt.Errorf("(with franz-go) %w", err)
	}
	if _, err := kcatRun(ctx, e, kcatInput(0, idemRecords), kcatProduceArgs(topic, "-X", "enable.idempotence=true")...); err != nil {
		return fmt.Errorf("idempotent produce: %w", err)
	}
	got, err := kcatConsumeAll(ctx, e, topic)
	if err != nil {
		return err
	}
	if err := verify(got, expectation{idx: rangeIdx(0, idemRecords)}); err != nil {
		return fmt.Errorf("idempotent: %w", err)
	}

	// kcat runs one transaction per invocation: committed when its input
	// ends, aborted when it is interrupted.
	topic = e.topic("txn")
	if err := franzCreateTopic(ctx, e, topic, 3, nil); err != nil {
		return fmt.Errorf("(with franz-go) %w", err)
	}
	txArgs := kcatProduceArgs(topic, "-X", "transactional.id="+e.topic("txid"), "-m", "30")
	A, B, C := 0, txnRecords, 2*txnRecords
	if _, err := kcatRun(ctx, e, kcatInput(A, A+txnRecords), txArgs...); err != nil {
		return fmt.Errorf("committed transaction: %w", err)
	}
	// openTxn starts a transaction with records from..from+txnRecords-1
	// and waits until the log holds them (the end offsets grew by as much;
	// markers only come at commit or abort).
	openTxn := func(from int) (*kcatProc, error) {
		ends, err := kcatEndOffsets(ctx, e, topic, 3)
		if err != nil {
			return nil, err
		}
		before := sumOffsets(ends)
		p, err := startKcat(ctx, e, txArgs...)
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(p.stdin, kcatInput(from, from+txnRecords)); err != nil {
			return p, err
		}
		return p, waitFor(ctx, 20*time.Second, func() error {
			ends, err := kcatEndOffsets(ctx, e, topic, 3)
			if err != nil {
				return err
			}
			if s := sumOffsets(ends); s < before+txnRecords {
				return fmt.Errorf("end offsets grew by %d of %d records", s-before, txnRecords)
			}
			return nil
		})
	}
	b, err := openTxn(B)
	if err != nil {
		if b != nil {
			b.stop(syscall.SIGKILL, time.Second)
		}
		return fmt.Errorf("transaction to abort never reached the log: %w", err)
	}
	// kcat aborts on a termination signal once its input read returns.
	b.cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(100 * time.Millisecond)
	b.stdin.Close()
	if err := b.wait(30 * time.Second); err != nil {
		return fmt.Errorf("abort: %w", err)
	}
	c, err := openTxn(C)
	if c != nil {
		defer c.stop(syscall.SIGKILL, time.Second)
	}
	if err != nil {
		return fmt.Errorf("open transaction never reached the log: %w", err)
	}
	rc := []string{"-X", "isolation.level=read_committed"}
	got, err = kcatConsumeAll(ctx, e, topic, rc...)
	if err != nil {
		return fmt.Errorf("read_committed while a transaction is open: %w", err)
	}
	if err := verify(got, expectation{idx: rangeIdx(A, A+txnRecords)}); err != nil {
		return fmt.Errorf("read_committed while a transaction is open (want only the committed one): %w", err)
	}
	c.stdin.Close() // end of input: kcat commits
	if err := c.wait(30 * time.Second); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	got, err = kcatConsumeAll(ctx, e, topic, rc...)
	if err != nil {
		return fmt.Errorf("read_committed: %w", err)
	}
	if err := verify(got, expectation{idx: append(rangeIdx(A, A+txnRecords), rangeIdx(C, C+txnRecords)...)}); err != nil {
		return fmt.Errorf("read_committed (want the two committed transactions): %w", err)
	}
	got, err = kcatConsumeAll(ctx, e, topic, "-X", "isolation.level=read_uncommitted")
	if err != nil {
		return fmt.Errorf("read_uncommitted: %w", err)
	}
	if err := verify(got, expectation{idx: rangeIdx(0, 3*txnRecords)}); err != nil {
		return fmt.Errorf("read_uncommitted (want all three transactions): %w", err)
	}
	return nil
}

func kcatErrors(ctx context.Context, e *env) error {
	topic := e.topic("missing")
	start := time.Now()
	// librdkafka waits topic.metadata.propagation.max.ms (30 s by default)
	// before it believes a topic is missing; 5 s keeps the suite short.
	_, err := kcatRun(ctx, e, "x\n", "-P", "-t", topic, "-X", "topic.metadata.propagation.max.ms=5000")
	took := time.Since(start).Round(100 * time.Millisecond)
	if err == nil {
		return errors.New("produce to a topic that does not exist succeeded (kcat exited 0)")
	}
	if ctx.Err() != nil {
		return fmt.Errorf("kcat still waiting after %s", took)
	}
	if !strings.Contains(strings.ToLower(err.Error()), "unknown topic") {
		return fmt.Errorf("after %s: got %v, want an unknown topic error", took, err)
	}
	if err := franzCheckAbsent(ctx, e, topic); err != nil {
		return err
	}
	msg := err.Error()
	if i := strings.Index(msg, ": "); i > 0 {
		msg = msg[i+2:]
	}
	return passWith("%s after %s", msg, took)
}
