package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/bench"
)

// defaultBenchTopic is the topic "samsa bench" uses when none is named.
const defaultBenchTopic = "samsa-bench"

// benchProduceOptions are the flags shared by "bench produce" and
// "bench e2e".
type benchProduceOptions struct {
	recordBytes       int
	records           int64
	duration          time.Duration
	partitions        int32
	replicationFactor int16
	acks              string
	compression       string
	linger            time.Duration
	batchBytes        int32
	bufferBytes       int
	maxInFlight       int
	producers         int
	keys              string
	recordsPerSecond  float64
	megabytesPerSec   float64
	reportInterval    time.Duration
}

func (p *benchProduceOptions) addFlags(cmd *cobra.Command, defaultDuration time.Duration) {
	flags := cmd.Flags()
	flags.IntVar(&p.recordBytes, "record-size", bench.DefaultRecordBytes, "value size of each record in bytes")
	flags.Int64Var(&p.records, "num-records", 0, "stop after this many records (0: use --duration)")
	flags.DurationVar(&p.duration, "duration", defaultDuration, "stop after this long (0: use --num-records)")
	flags.Int32Var(&p.partitions, "partitions", 12, "partitions of the topic if it has to be created")
	flags.Int16Var(&p.replicationFactor, "replication-factor", -1, "replication factor of the topic if it has to be created (-1: the broker's default)")
	flags.StringVar(&p.acks, "acks", "1", "acknowledgements to wait for: 0, 1 or all")
	flags.StringVar(&p.compression, "compression", "none", "batch compression: none, gzip, snappy, lz4 or zstd")
	flags.DurationVar(&p.linger, "linger", bench.DefaultLinger, "how long the producer waits to fill a batch (linger.ms)")
	flags.Int32Var(&p.batchBytes, "batch-size", bench.DefaultBatchBytes, "largest record batch in bytes (batch.size)")
	flags.IntVar(&p.bufferBytes, "buffer-memory", bench.DefaultBufferBytes, "bytes each producer may buffer before sending blocks (buffer.memory)")
	flags.IntVar(&p.maxInFlight, "max-in-flight", bench.DefaultMaxInFlight, "produce requests in flight per broker with --acks 0 or 1")
	flags.IntVar(&p.producers, "producers", 1, "number of concurrent producer clients")
	flags.StringVar(&p.keys, "keys", "none", "key distribution: none, round-robin (null keys, one record per partition in turn), random:N or sequential:N")
	flags.Float64Var(&p.recordsPerSecond, "throughput", 0, "target records per second over all producers (0: as fast as possible)")
	flags.Float64Var(&p.megabytesPerSec, "throughput-mb", 0, "target MB (10^6 bytes) per second, instead of --throughput")
	flags.DurationVar(&p.reportInterval, "report-interval", bench.DefaultProgressInterval, "how often to print the progress line (0: never)")
	_ = cmd.RegisterFlagCompletionFunc("acks", cobra.FixedCompletions([]string{"0", "1", "all"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("compression", cobra.FixedCompletions(
		[]string{"none", "gzip", "snappy", "lz4", "zstd"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("keys", cobra.FixedCompletions(
		[]string{"none", "round-robin", "random:", "sequential:"}, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
}

// config turns the flags into a load description.
func (p *benchProduceOptions) config(cmd *cobra.Command, opts *globalOptions, topic string) (bench.ProduceConfig, error) {
	usage := func(format string, args ...any) error { return newUsageError(cmd.CommandPath(), format, args...) }
	acks, err := bench.ParseAcks(p.acks)
	if err != nil {
		return bench.ProduceConfig{}, usage("invalid --acks %q: must be 0, 1 or all", p.acks)
	}
	if _, err := bench.ParseCompression(p.compression); err != nil {
		return bench.ProduceConfig{}, usage("invalid --compression %q: must be none, gzip, snappy, lz4 or zstd", p.compression)
	}
	keys, err := bench.ParseKeyDistribution(p.keys)
	if err != nil {
		return bench.ProduceConfig{}, usage("invalid --keys: %s", strings.TrimPrefix(err.Error(), "bench: "))
	}
	switch {
	case p.records <= 0 && p.duration <= 0:
		return bench.ProduceConfig{}, usage("set --num-records or --duration")
	case p.records < 0 || p.duration < 0:
		return bench.ProduceConfig{}, usage("--num-records and --duration cannot be negative")
	case p.recordBytes < 0 || p.recordBytes > bench.RecordBytesMax:
		return bench.ProduceConfig{}, usage("--record-size must be 0 to %d, got %d", bench.RecordBytesMax, p.recordBytes)
	case p.producers < 1 || p.producers > bench.ProducersMax:
		return bench.ProduceConfig{}, usage("--producers must be 1 to %d, got %d", bench.ProducersMax, p.producers)
	case p.partitions < 1:
		return bench.ProduceConfig{}, usage("--partitions must be positive, got %d", p.partitions)
	case p.recordsPerSecond < 0 || p.megabytesPerSec < 0:
		return bench.ProduceConfig{}, usage("--throughput and --throughput-mb cannot be negative")
	case p.recordsPerSecond > 0 && p.megabytesPerSec > 0:
		return bench.ProduceConfig{}, usage("set --throughput or --throughput-mb, not both")
	case p.batchBytes < 1 || p.bufferBytes < 1 || p.maxInFlight < 1:
		return bench.ProduceConfig{}, usage("--batch-size, --buffer-memory and --max-in-flight must be positive")
	case p.linger < 0:
		return bench.ProduceConfig{}, usage("--linger cannot be negative")
	}
	rate := p.recordsPerSecond
	if p.megabytesPerSec > 0 {
		rate = p.megabytesPerSec * 1e6 / float64(max(p.recordBytes, 1))
	}
	return bench.ProduceConfig{
		Brokers:          opts.seeds,
		ClientOpts:       benchClientOpts(opts),
		Topic:            topic,
		RecordBytes:      p.recordBytes,
		Records:          p.records,
		Duration:         p.duration,
		Acks:             acks,
		Compression:      p.compression,
		Linger:           p.linger,
		BatchBytes:       p.batchBytes,
		BufferBytes:      p.bufferBytes,
		MaxInFlight:      p.maxInFlight,
		Producers:        p.producers,
		Keys:             keys,
		RecordsPerSecond: rate,
		ProgressInterval: p.reportInterval,
	}, nil
}

// ensureTopic creates the benchmark topic if it is missing.
func (p *benchProduceOptions) ensureTopic(cmd *cobra.Command, opts *globalOptions, topic string) error {
	ctx, cancel := opts.requestContext(cmd.Context())
	defer cancel()
	created, partitions, err := bench.EnsureTopic(ctx, opts.seeds, benchClientOpts(opts), bench.TopicSpec{
		Name: topic, Partitions: p.partitions, ReplicationFactor: p.replicationFactor,
	})
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(cmd.ErrOrStderr(), "created topic %q with %d partitions\n", topic, partitions)
	} else if cmd.Flags().Changed("partitions") && partitions != p.partitions {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: topic %q exists with %d partitions; --partitions %d ignored\n", topic, partitions, p.partitions)
	}
	return nil
}

func benchClientOpts(opts *globalOptions) []kgo.Opt {
	return append([]kgo.Opt{kgo.ClientID(opts.clientID), kgo.DialTimeout(min(opts.requestTimeout, dialTimeoutMax))}, opts.securityOpts...)
}

func newBenchCommand(opts *globalOptions) *cobra.Command {
	cmd := newParentCommand("bench", "Measure throughput and latency against a cluster",
		`  samsa bench produce --record-size 1024 --acks 1 --duration 30s
  samsa bench consume --num-records 1000000
  samsa bench e2e --throughput-mb 50 --duration 30s`)
	cmd.Long = `Generate load with franz-go and report throughput and latency, like Kafka's
kafka-producer-perf-test and kafka-consumer-perf-test. A progress line goes
to stderr every --report-interval; the summary goes to stdout (-o json for a
document). MB means 10^6 bytes of record keys and values.

For a side-by-side comparison with a peer broker and this machine's limits,
run the program in bench/ (go run ./bench).`
	cmd.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		bench.TuneGC()
		return opts.resolve(cmd)
	}
	cmd.AddCommand(newBenchProduceCommand(opts), newBenchConsumeCommand(opts), newBenchEndToEndCommand(opts))
	return cmd
}

func newBenchProduceCommand(opts *globalOptions) *cobra.Command {
	var p benchProduceOptions
	cmd := &cobra.Command{
		Use:   "produce [TOPIC]",
		Short: "Produce records as fast as possible (or at --throughput) and report the rate and ack latency",
		Long: `Produce fixed-size records to TOPIC (default ` + defaultBenchTopic + `, created with
--partitions if missing) for --duration or --num-records, and report
records/s, MB/s and the acknowledgement latency (p50, p99, p99.9, max).`,
		Example: `  samsa bench produce --duration 30s --acks all
  samsa bench produce orders --record-size 100 --producers 4 --keys random:10000
  samsa bench produce --num-records 1000000 --compression zstd --linger 10ms
  samsa bench produce --throughput 10000 --duration 1m`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := benchTopic(args)
			cfg, err := p.config(cmd, opts, topic)
			if err != nil {
				return err
			}
			if err := p.ensureTopic(cmd, opts, topic); err != nil {
				return err
			}
			progress := newProgressLine(cmd.ErrOrStderr())
			cfg.Progress = progress.produce
			result, err := bench.Produce(cmd.Context(), cfg)
			progress.finish()
			if err != nil {
				return err
			}
			return printBenchResult(cmd, opts, "produce", topic, result)
		},
	}
	p.addFlags(cmd, 10*time.Second)
	return cmd
}

func newBenchEndToEndCommand(opts *globalOptions) *cobra.Command {
	var p benchProduceOptions
	var drain time.Duration
	cmd := &cobra.Command{
		Use:   "e2e [TOPIC]",
		Short: "Produce and consume at once and report the latency from produce to consume",
		Long: `Produce to TOPIC (default ` + defaultBenchTopic + `) and consume it from its current
end in the same process. Each record carries its send time, and the latency
is measured from the moment the record is handed to the producer to the
moment the consumer's poll returns it: p50, p99, p99.9 and max. Use a fixed
--throughput or --throughput-mb: as fast as possible measures queueing, not
latency. Records need at least 8 bytes.`,
		Example: `  samsa bench e2e --throughput-mb 50 --duration 30s
  samsa bench e2e --throughput 1000 --record-size 100 --linger 0s --acks all`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := benchTopic(args)
			cfg, err := p.config(cmd, opts, topic)
			if err != nil {
				return err
			}
			if cfg.RecordBytes < 8 {
				return newUsageError(cmd.CommandPath(), "--record-size must be at least 8 to carry the send time")
			}
			if err := p.ensureTopic(cmd, opts, topic); err != nil {
				return err
			}
			progress := newProgressLine(cmd.ErrOrStderr())
			cfg.Progress = progress.endToEnd
			result, err := bench.EndToEnd(cmd.Context(), bench.EndToEndConfig{Produce: cfg, DrainTimeout: drain})
			progress.finish()
			if err != nil {
				return err
			}
			return printBenchResult(cmd, opts, "e2e", topic, result)
		},
	}
	p.addFlags(cmd, 10*time.Second)
	// Latency is the point here: send each record at once by default.
	cmd.Flags().Lookup("linger").DefValue = "0s"
	p.linger = 0
	cmd.Flags().DurationVar(&drain, "drain-timeout", bench.DefaultDrainTimeout, "how long to wait for the last records once producing stops")
	return cmd
}

func newBenchConsumeCommand(opts *globalOptions) *cobra.Command {
	var (
		records           int64
		duration          time.Duration
		idle              time.Duration
		fetchMaxBytes     int32
		partitionMaxBytes int32
		fetchMaxWait      time.Duration
		raw               bool
		reportInterval    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "consume [TOPIC]",
		Short: "Read a topic from the start and report the rate",
		Long: `Read TOPIC (default ` + defaultBenchTopic + `) from the start of every partition,
without a consumer group, until --num-records, --duration, or --idle-timeout
with nothing received, and report records/s and MB/s. The clock stops at the
last record received.

--raw sends Fetch requests directly and reads only record batch headers, one
request in flight per broker: it measures what the broker serves rather than
what the client decodes, and counts whole batches as bytes.`,
		Example: `  samsa bench produce --num-records 1000000 && samsa bench consume --num-records 1000000
  samsa bench consume orders --raw --fetch-max-bytes 104857600`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case records < 0 || duration < 0 || idle <= 0:
				return newUsageError(cmd.CommandPath(), "--num-records and --duration cannot be negative and --idle-timeout must be positive")
			case fetchMaxBytes < 1 || partitionMaxBytes < 1 || fetchMaxWait < 0:
				return newUsageError(cmd.CommandPath(), "--fetch-max-bytes and --partition-max-bytes must be positive")
			}
			topic := benchTopic(args)
			progress := newProgressLine(cmd.ErrOrStderr())
			result, err := bench.Consume(cmd.Context(), bench.ConsumeConfig{
				Brokers: opts.seeds, ClientOpts: benchClientOpts(opts), Topic: topic,
				Records: records, Duration: duration, IdleTimeout: idle,
				FetchMaxBytes: fetchMaxBytes, PartitionMaxBytes: partitionMaxBytes, FetchMaxWait: fetchMaxWait,
				RawFetch: raw, ProgressInterval: reportInterval, Progress: progress.consume,
			})
			progress.finish()
			if err != nil {
				return err
			}
			return printBenchResult(cmd, opts, "consume", topic, result)
		},
	}
	flags := cmd.Flags()
	flags.Int64Var(&records, "num-records", 0, "stop after this many records (0: no limit)")
	flags.DurationVar(&duration, "duration", 0, "stop after this long (0: no limit)")
	flags.DurationVar(&idle, "idle-timeout", bench.DefaultIdleTimeout, "stop once nothing has arrived for this long")
	flags.Int32Var(&fetchMaxBytes, "fetch-max-bytes", bench.DefaultFetchMaxBytes, "largest fetch response (fetch.max.bytes)")
	flags.Int32Var(&partitionMaxBytes, "partition-max-bytes", bench.DefaultPartitionMaxBytes, "largest share of one partition in a fetch (max.partition.fetch.bytes)")
	flags.DurationVar(&fetchMaxWait, "fetch-max-wait", bench.DefaultFetchMaxWait, "longest a fetch waits for data (fetch.max.wait.ms)")
	flags.BoolVar(&raw, "raw", false, "fetch directly and skip record decoding")
	flags.DurationVar(&reportInterval, "report-interval", bench.DefaultProgressInterval, "how often to print the progress line (0: never)")
	return cmd
}

func benchTopic(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return defaultBenchTopic
}

// benchSummary is the JSON shape of a benchmark's result.
type benchSummary struct {
	Mode             string  `json:"mode"`
	Topic            string  `json:"topic"`
	Records          int64   `json:"records"`
	Bytes            int64   `json:"bytes"`
	Errors           int64   `json:"errors"`
	FirstError       string  `json:"first_error,omitempty"`
	ElapsedMs        float64 `json:"elapsed_ms"`
	RecordsPerSecond float64 `json:"records_per_second"`
	MBPerSecond      float64 `json:"mb_per_second"`
	LatencyP50Ms     float64 `json:"latency_p50_ms,omitempty"`
	LatencyP99Ms     float64 `json:"latency_p99_ms,omitempty"`
	LatencyP999Ms    float64 `json:"latency_p999_ms,omitempty"`
	LatencyMaxMs     float64 `json:"latency_max_ms,omitempty"`
}

func printBenchResult(cmd *cobra.Command, opts *globalOptions, mode, topic string, r bench.Result) error {
	s := benchSummary{
		Mode: mode, Topic: topic, Records: r.Records, Bytes: r.Bytes, Errors: r.Errors,
		ElapsedMs:        milliseconds(r.Elapsed),
		RecordsPerSecond: r.RecordsPerSecond(), MBPerSecond: r.MBPerSecond(),
		LatencyP50Ms: milliseconds(r.Latency.P50), LatencyP99Ms: milliseconds(r.Latency.P99),
		LatencyP999Ms: milliseconds(r.Latency.P999), LatencyMaxMs: milliseconds(r.Latency.Max),
	}
	if r.FirstError != nil {
		s.FirstError = r.FirstError.Error()
	}
	out := cmd.OutOrStdout()
	if opts.jsonOutput() {
		if err := writeJSON(out, s); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "%s %s: %d records in %.2fs: %.0f records/s, %.2f MB/s",
			mode, topic, r.Records, r.Elapsed.Seconds(), s.RecordsPerSecond, s.MBPerSecond)
		if r.Latency.Count > 0 {
			name := "ack latency"
			if mode == "e2e" {
				name = "end-to-end latency"
			}
			fmt.Fprintf(out, "; %s %s", name, latencyText(r.Latency))
		}
		fmt.Fprintf(out, "; %d errors\n", r.Errors)
	}
	if r.Errors > 0 {
		return fmt.Errorf("bench %s on %q: %d records failed: %w", mode, topic, r.Errors, r.FirstError)
	}
	if r.Records == 0 {
		return fmt.Errorf("bench %s on %q: no records", mode, topic)
	}
	return nil
}

func milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func latencyText(s bench.LatencySummary) string {
	return fmt.Sprintf("p50 %s p99 %s p99.9 %s max %s",
		roundDuration(s.P50), roundDuration(s.P99), roundDuration(s.P999), roundDuration(s.Max))
}

// roundDuration keeps three significant digits or so.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// progressLine prints the live progress of a benchmark: rewritten in place
// on a terminal, one line per interval otherwise.
type progressLine struct {
	w        io.Writer
	terminal bool
	printed  bool
}

func newProgressLine(w io.Writer) *progressLine {
	terminal := false
	if f, ok := w.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			terminal = true
		}
	}
	return &progressLine{w: w, terminal: terminal}
}

func (l *progressLine) print(text string) {
	if l.terminal {
		fmt.Fprintf(l.w, "\r\033[K%s", text)
	} else {
		fmt.Fprintln(l.w, text)
	}
	l.printed = true
}

func (l *progressLine) rates(p bench.Progress) string {
	return fmt.Sprintf("%7.1fs %12d records %10.0f records/s %9.2f MB/s", p.Elapsed.Seconds(), p.Records, p.RecordsPerSecond(), p.MBPerSecond())
}

func (l *progressLine) produce(p bench.Progress) {
	text := l.rates(p)
	if p.Latency.Count > 0 {
		text += "  ack " + latencyText(p.Latency)
	}
	l.print(text + errorsText(p.Errors))
}

func (l *progressLine) endToEnd(p bench.Progress) {
	text := l.rates(p)
	if p.Latency.Count > 0 {
		text += "  e2e " + latencyText(p.Latency)
	}
	l.print(text + errorsText(p.Errors))
}

func (l *progressLine) consume(p bench.Progress) { l.print(l.rates(p) + errorsText(p.Errors)) }

func errorsText(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("  %d errors", n)
}

// finish ends a rewritten line so the summary starts on its own.
func (l *progressLine) finish() {
	if l.terminal && l.printed {
		fmt.Fprintln(l.w)
	}
}
