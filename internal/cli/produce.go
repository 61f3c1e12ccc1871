package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceLineBytesMax bounds one input line, so a file without newlines
// cannot grow the buffer without limit. It is well above Kafka's default
// max.message.bytes (1 MiB); the broker rejects records over its limit with
// MESSAGE_TOO_LARGE.
const produceLineBytesMax = 16 << 20

// recordDeliveryTimeoutMin is the shortest record delivery timeout franz-go
// accepts; a shorter --timeout still bounds the first metadata lookup.
const recordDeliveryTimeoutMin = time.Second

type produceOptions struct {
	file         string
	parseKey     bool
	keySeparator string
	headerFlags  []string
	partition    int32
	acks         string
	compression  string
	idempotent   bool
}

// produceSummary is the result of "produce", printed as one line or JSON.
type produceSummary struct {
	Topic      string `json:"topic"`
	Produced   int64  `json:"produced"`
	Failed     int64  `json:"failed"`
	Bytes      int64  `json:"bytes"`
	DurationMs int64  `json:"duration_ms"`
}

func newProduceCommand(opts *globalOptions) *cobra.Command {
	var p produceOptions
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Write records to a topic, one per input line",
		Long: `Read lines from stdin (or --file) and produce each line as one record.
With --parse-key, the text before the first --key-separator is the record key.
A summary line is printed when the input ends; if any record failed, the
command exits non-zero.`,
		Example: `  echo 'hello' | samsa produce greetings
  samsa produce orders --file orders.txt --acks all --compression zstd
  printf 'user-1:login\nuser-2:logout\n' | samsa produce events --parse-key --key-separator :
  samsa produce events --header source=cli --header version=2 --partition 0`,
		Args:              argsNamed("TOPIC"),
		ValidArgsFunction: completeTopicNames(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProduce(cmd, opts, &p, args[0])
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&p.file, "file", "", "read records from this file instead of stdin")
	flags.BoolVar(&p.parseKey, "parse-key", false, "split each line into key and value at --key-separator")
	flags.StringVar(&p.keySeparator, "key-separator", "", `separator between key and value, default a tab; implies --parse-key (escapes \t \n \\ allowed)`)
	flags.StringArrayVar(&p.headerFlags, "header", nil, "header key=value added to every record, repeatable")
	flags.Int32Var(&p.partition, "partition", -1, "write every record to this partition; -1 partitions by key")
	flags.StringVar(&p.acks, "acks", "all", "acknowledgements to wait for: 0, 1 or all")
	flags.StringVar(&p.compression, "compression", "none", "batch compression: none, gzip, snappy, lz4 or zstd")
	flags.BoolVar(&p.idempotent, "idempotent", true, "idempotent writes (needs --acks all; turned off by default for --acks 0 or 1)")
	_ = cmd.MarkFlagFilename("file")
	_ = cmd.RegisterFlagCompletionFunc("acks", cobra.FixedCompletions([]string{"0", "1", "all"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("compression", cobra.FixedCompletions(
		[]string{"none", "gzip", "snappy", "lz4", "zstd"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// producerOptions turns the produce flags into franz-go options.
func (p *produceOptions) producerOptions(cmd *cobra.Command, topic string, recordTimeout time.Duration) ([]kgo.Opt, error) {
	usage := func(format string, args ...any) error { return newUsageError(cmd.CommandPath(), format, args...) }
	opts := []kgo.Opt{
		kgo.DefaultProduceTopic(topic),
		kgo.RecordDeliveryTimeout(max(recordTimeout, recordDeliveryTimeoutMin)),
	}
	var acks kgo.Acks
	switch p.acks {
	case "0":
		acks = kgo.NoAck()
	case "1":
		acks = kgo.LeaderAck()
	case "all", "-1":
		acks = kgo.AllISRAcks()
	default:
		return nil, usage("invalid --acks %q: must be 0, 1 or all", p.acks)
	}
	opts = append(opts, kgo.RequiredAcks(acks))
	if p.acks == "0" || p.acks == "1" {
		if cmd.Flags().Changed("idempotent") && p.idempotent {
			return nil, usage("--idempotent needs --acks all")
		}
		p.idempotent = false
	}
	if !p.idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	codecs := map[string]kgo.CompressionCodec{
		"none":   kgo.NoCompression(),
		"gzip":   kgo.GzipCompression(),
		"snappy": kgo.SnappyCompression(),
		"lz4":    kgo.Lz4Compression(),
		"zstd":   kgo.ZstdCompression(),
	}
	codec, ok := codecs[p.compression]
	if !ok {
		return nil, usage("invalid --compression %q: must be none, gzip, snappy, lz4 or zstd", p.compression)
	}
	opts = append(opts, kgo.ProducerBatchCompression(codec))
	if p.partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	} else if p.partition != -1 {
		return nil, usage("--partition must be 0 or more, got %d", p.partition)
	}
	return opts, nil
}

func (p *produceOptions) recordHeaders() ([]kgo.RecordHeader, error) {
	headers := make([]kgo.RecordHeader, 0, len(p.headerFlags))
	for _, h := range p.headerFlags {
		key, value, err := parseKeyValue("--header", h)
		if err != nil {
			return nil, err
		}
		headers = append(headers, kgo.RecordHeader{Key: key, Value: []byte(value)})
	}
	return headers, nil
}

func runProduce(cmd *cobra.Command, opts *globalOptions, p *produceOptions, topic string) error {
	separator := "\t"
	if cmd.Flags().Changed("key-separator") {
		p.parseKey = true
		separator = unescape(p.keySeparator)
		if separator == "" {
			return newUsageError(cmd.CommandPath(), "--key-separator must not be empty")
		}
	}
	headers, err := p.recordHeaders()
	if err != nil {
		return usageError{err: err, commandPath: cmd.CommandPath()}
	}
	clientOpts, err := p.producerOptions(cmd, topic, opts.requestTimeout)
	if err != nil {
		return err
	}
	input := cmd.InOrStdin()
	if p.file != "" {
		file, err := os.Open(p.file)
		if err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		defer file.Close()
		input = file
	}

	client, err := opts.newClient(clientOpts...)
	if err != nil {
		return err
	}
	defer client.Close()
	if err := checkTopicPartition(cmd.Context(), opts, client, "produce", topic, p.partition); err != nil {
		return err
	}

	producer := newLineProducer(client, headers, p.partition)
	start := time.Now()
	readErr := producer.produceLines(cmd.Context(), input, p.parseKey, separator)
	// Flush even after a read error, so records already read are not lost;
	// a cancelled context (Ctrl-C) abandons what is still buffered.
	flushErr := client.Flush(cmd.Context())
	summary := producer.summary(topic, time.Since(start))
	if err := printProduceSummary(cmd, opts, summary); err != nil {
		return err
	}
	switch {
	case readErr != nil:
		return fmt.Errorf("produce to %q: %w", topic, readErr)
	case producer.firstError() != nil:
		return fmt.Errorf("produce to %q: %d of %d records failed: %w",
			topic, summary.Failed, summary.Failed+summary.Produced, producer.firstError())
	case flushErr != nil && !errors.Is(flushErr, context.Canceled):
		return fmt.Errorf("produce to %q: %w", topic, flushErr)
	}
	return nil
}

// lineProducer produces records asynchronously and tallies the results
// its callbacks report.
type lineProducer struct {
	client    *kgo.Client
	headers   []kgo.RecordHeader
	partition int32

	mu struct {
		sync.Mutex
		produced int64
		failed   int64
		bytes    int64
		firstErr error
	}
}

func newLineProducer(client *kgo.Client, headers []kgo.RecordHeader, partition int32) *lineProducer {
	return &lineProducer{client: client, headers: headers, partition: partition}
}

// produceLines reads input to its end and produces one record per line.
// It stops early if ctx is cancelled or a line is malformed.
func (lp *lineProducer) produceLines(ctx context.Context, input io.Reader, parseKey bool, separator string) error {
	scanner := bufio.NewScanner(input)
	scanner.Buffer(make([]byte, 0, 64<<10), produceLineBytesMax)
	for lineNumber := 1; scanner.Scan(); lineNumber++ {
		if ctx.Err() != nil {
			return nil
		}
		line := strings.TrimSuffix(scanner.Text(), "\r")
		record := &kgo.Record{Value: []byte(line), Headers: lp.headers}
		if parseKey {
			key, value, found := strings.Cut(line, separator)
			if !found {
				return fmt.Errorf("line %d has no key separator %q", lineNumber, separator)
			}
			record.Key, record.Value = []byte(key), []byte(value)
		}
		if lp.partition >= 0 {
			record.Partition = lp.partition
		}
		size := int64(len(record.Key) + len(record.Value))
		lp.client.Produce(ctx, record, func(_ *kgo.Record, err error) { lp.done(size, err) })
	}
	if err := scanner.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("a line is longer than %d bytes", produceLineBytesMax)
		}
		return fmt.Errorf("read input: %w", err)
	}
	return nil
}

func (lp *lineProducer) done(size int64, err error) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if err != nil {
		lp.mu.failed++
		if lp.mu.firstErr == nil {
			lp.mu.firstErr = err
		}
		return
	}
	lp.mu.produced++
	lp.mu.bytes += size
}

func (lp *lineProducer) firstError() error {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return lp.mu.firstErr
}

func (lp *lineProducer) summary(topic string, elapsed time.Duration) produceSummary {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return produceSummary{
		Topic:      topic,
		Produced:   lp.mu.produced,
		Failed:     lp.mu.failed,
		Bytes:      lp.mu.bytes,
		DurationMs: elapsed.Milliseconds(),
	}
}

func printProduceSummary(cmd *cobra.Command, opts *globalOptions, s produceSummary) error {
	out := cmd.OutOrStdout()
	if opts.jsonOutput() {
		return writeJSON(out, s)
	}
	_, err := fmt.Fprintf(out, "Produced %s (%d bytes) to %q in %s; %d failed.\n",
		countOf(int(s.Produced), "record"), s.Bytes, s.Topic, time.Duration(s.DurationMs)*time.Millisecond, s.Failed)
	return err
}

// checkTopicPartition asks the cluster, within --timeout, whether topic
// exists and has the requested partition (-1 for any), so that a typo or an
// unreachable cluster fails at once with a clear error instead of after
// records are buffered or while a consumer waits.
func checkTopicPartition(ctx context.Context, opts *globalOptions, client *kgo.Client, operation, topic string, partition int32) error {
	partitions, err := topicPartitions(ctx, opts, client, operation, topic)
	if err != nil {
		return err
	}
	if partition >= int32(len(partitions)) {
		return withHint(fmt.Errorf("%s: topic %q has %s, no partition %d", operation, topic, countOf(len(partitions), "partition"), partition),
			"partitions are numbered from 0; see 'samsa topics describe %s'", topic)
	}
	return nil
}
