package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type consumeOptions struct {
	fromBeginning bool
	offset        string
	partition     int32
	timestampMs   int64
	group         string
	maxMessages   int64
	idleTimeout   time.Duration
	format        string
	isolation     string
}

func newConsumeCommand(opts *globalOptions) *cobra.Command {
	var c consumeOptions
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Print records from a topic",
		Long: `Print records from a topic, one per line, until interrupted, --max-messages
are printed, or nothing arrives for --timeout.

By default consumption starts at the end of each partition (new records only).
Without --group nothing is committed. With --group the records are consumed
as a member of that consumer group and the offsets of printed records are
committed; --from-beginning and --offset earliest|latest then only apply to
partitions the group has no committed offset for.

--format prints each record through a template:
  %k key     %v value      %p partition   %o offset
  %t timestamp (ms since epoch)   %T topic   %h headers (k=v,k=v)
  %% a percent sign   \n newline   \t tab   \\ backslash
-o json prints one JSON object per record instead.

Note that --timeout here is the idle timeout, not the request timeout.`,
		Example: `  samsa consume orders --from-beginning
  samsa consume orders --partition 2 --offset 1500 --max-messages 10
  samsa consume orders --timestamp 1700000000000 --timeout 5s
  samsa consume orders --group audit --from-beginning
  samsa consume orders --format '%p/%o %k=%v\n'
  samsa consume orders --from-beginning -o json --isolation read_committed`,
		Args:              argsNamed("TOPIC"),
		ValidArgsFunction: completeTopicNames(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConsume(cmd, opts, &c, args[0])
		},
	}
	flags := cmd.Flags()
	flags.BoolVar(&c.fromBeginning, "from-beginning", false, "start at the earliest offset instead of the latest")
	flags.StringVar(&c.offset, "offset", "", "start offset: a number, earliest or latest")
	flags.Int32Var(&c.partition, "partition", -1, "consume only this partition; -1 consumes all")
	flags.Int64Var(&c.timestampMs, "timestamp", -1, "start at the first record at or after this time, in ms since the epoch")
	flags.StringVar(&c.group, "group", "", "consume as a member of this consumer group and commit offsets")
	flags.Int64Var(&c.maxMessages, "max-messages", 0, "exit after printing this many records (0: no limit)")
	flags.DurationVar(&c.idleTimeout, "timeout", 0, "exit after this long without a record (0: wait forever)")
	flags.StringVar(&c.format, "format", "", `template for each record (default "%v\n")`)
	flags.StringVar(&c.isolation, "isolation", "read_uncommitted", "read_committed or read_uncommitted")
	_ = cmd.RegisterFlagCompletionFunc("isolation", cobra.FixedCompletions(
		[]string{"read_committed", "read_uncommitted"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("offset", cobra.FixedCompletions(
		[]string{"earliest", "latest"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// startOffset turns --from-beginning, --offset and --timestamp into the
// offset every consumed partition starts from. exact reports an --offset N,
// which needs the partitions assigned directly.
func (c *consumeOptions) startOffset(cmd *cobra.Command) (offset kgo.Offset, exact bool, err error) {
	usage := func(format string, args ...any) error { return newUsageError(cmd.CommandPath(), format, args...) }
	starts := 0
	for _, set := range []bool{c.fromBeginning, c.offset != "", cmd.Flags().Changed("timestamp")} {
		if set {
			starts++
		}
	}
	if starts > 1 {
		return offset, false, usage("give only one of --from-beginning, --offset and --timestamp")
	}
	switch {
	case c.fromBeginning || c.offset == "earliest":
		return kgo.NewOffset().AtStart(), false, nil
	case c.offset == "latest":
		return kgo.NewOffset().AtEnd(), false, nil
	case c.offset != "":
		n, err := strconv.ParseInt(c.offset, 10, 64)
		if err != nil || n < 0 {
			return offset, false, usage("invalid --offset %q: must be a number of 0 or more, earliest or latest", c.offset)
		}
		return kgo.NewOffset().At(n), true, nil
	case cmd.Flags().Changed("timestamp"):
		if c.timestampMs < 0 {
			return offset, false, usage("--timestamp must be 0 or more milliseconds since the epoch, got %d", c.timestampMs)
		}
		return kgo.NewOffset().AfterMilli(c.timestampMs), false, nil
	}
	return kgo.NewOffset().AtEnd(), false, nil
}

// consumerOptions validates the consume flags against each other and turns
// them into franz-go options. partitions is the topic's partition count.
func (c *consumeOptions) consumerOptions(cmd *cobra.Command, topic string, start kgo.Offset, exact bool, partitions []int32) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	switch c.isolation {
	case "read_uncommitted":
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	case "read_committed":
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	if c.group != "" {
		return append(opts,
			kgo.ConsumerGroup(c.group),
			kgo.ConsumeTopics(topic),
			kgo.ConsumeStartOffset(start),
		), nil
	}
	if c.partition < 0 && !exact {
		return append(opts, kgo.ConsumeTopics(topic), kgo.ConsumeStartOffset(start)), nil
	}
	assigned := make(map[int32]kgo.Offset)
	if c.partition >= 0 {
		assigned[c.partition] = start
	} else {
		for _, p := range partitions {
			assigned[p] = start
		}
	}
	return append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assigned})), nil
}

func (c *consumeOptions) validate(cmd *cobra.Command, opts *globalOptions) error {
	usage := func(format string, args ...any) error { return newUsageError(cmd.CommandPath(), format, args...) }
	if c.isolation != "read_uncommitted" && c.isolation != "read_committed" {
		return usage("invalid --isolation %q: must be read_committed or read_uncommitted", c.isolation)
	}
	if c.partition < -1 {
		return usage("--partition must be 0 or more, got %d", c.partition)
	}
	if c.maxMessages < 0 {
		return usage("--max-messages must be 0 or more, got %d", c.maxMessages)
	}
	if c.idleTimeout < 0 {
		return usage("--timeout must be 0 or more, got %s", c.idleTimeout)
	}
	if c.format != "" && opts.jsonOutput() {
		return usage("--format and -o json cannot be combined")
	}
	if c.group != "" {
		if c.partition >= 0 {
			return usage("--partition cannot be used with --group; the group assigns partitions")
		}
		if cmd.Flags().Changed("timestamp") || (c.offset != "" && c.offset != "earliest" && c.offset != "latest") {
			return usage("with --group, only --from-beginning or --offset earliest|latest choose where to start; use 'samsa groups reset-offsets' for anything else")
		}
	}
	return nil
}

func runConsume(cmd *cobra.Command, opts *globalOptions, c *consumeOptions, topic string) error {
	if err := c.validate(cmd, opts); err != nil {
		return err
	}
	start, exact, err := c.startOffset(cmd)
	if err != nil {
		return err
	}
	var printer recordPrinter
	if opts.jsonOutput() {
		printer = jsonRecordPrinter{}
	} else {
		format := c.format
		if format == "" {
			format = `%v\n`
		}
		printer, err = parseRecordFormat(format)
		if err != nil {
			return usageError{err: err, commandPath: cmd.CommandPath()}
		}
	}
	// An idle timeout shorter than the request timeout also bounds the
	// first contact with the cluster: "consume --timeout 2s" against a
	// dead broker should give up after 2s.
	if c.idleTimeout > 0 {
		opts.requestTimeout = min(opts.requestTimeout, c.idleTimeout)
	}

	metadataClient, err := opts.newClient()
	if err != nil {
		return err
	}
	partitions, err := topicPartitions(cmd.Context(), opts, metadataClient, "consume", topic)
	metadataClient.Close()
	if err != nil {
		return err
	}
	if c.partition >= int32(len(partitions)) {
		return withHint(fmt.Errorf("consume: topic %q has %s, no partition %d", topic, countOf(len(partitions), "partition"), c.partition),
			"partitions are numbered from 0; see 'samsa topics describe %s'", topic)
	}
	consumerOpts, err := c.consumerOptions(cmd, topic, start, exact, partitions)
	if err != nil {
		return err
	}
	client, err := opts.newClient(consumerOpts...)
	if err != nil {
		return err
	}
	defer client.Close()

	printed, consumeErr := c.consumeLoop(cmd.Context(), client, printer, bufio.NewWriter(cmd.OutOrStdout()))
	if c.group != "" {
		// Commit what was printed even after Ctrl-C cancelled the
		// command's context, so the next run does not repeat it.
		ctx, cancel := context.WithTimeout(context.Background(), opts.requestTimeout)
		if err := client.CommitUncommittedOffsets(ctx); err != nil && consumeErr == nil {
			consumeErr = fmt.Errorf("consume: commit offsets for group %q: %w", c.group, err)
		}
		cancel()
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "Processed a total of %d messages\n", printed)
	return consumeErr
}

// consumeLoop prints records until ctx is cancelled, maxMessages are
// printed, or no record arrives for the idle timeout.
func (c *consumeOptions) consumeLoop(ctx context.Context, client *kgo.Client, printer recordPrinter, out *bufio.Writer) (int64, error) {
	var printed int64
	defer out.Flush()
	for c.maxMessages == 0 || printed < c.maxMessages {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if c.idleTimeout > 0 {
			pollCtx, cancel = context.WithTimeout(ctx, c.idleTimeout)
		}
		limit := -1
		if c.maxMessages > 0 {
			limit = int(c.maxMessages - printed)
		}
		fetches := client.PollRecords(pollCtx, limit)
		cancel()
		if fetches.IsClientClosed() || ctx.Err() != nil {
			return printed, nil
		}
		for _, fetchErr := range fetches.Errors() {
			if errors.Is(fetchErr.Err, context.DeadlineExceeded) || errors.Is(fetchErr.Err, context.Canceled) {
				continue
			}
			return printed, fmt.Errorf("consume %q partition %d: %w", fetchErr.Topic, fetchErr.Partition, fetchErr.Err)
		}
		records := fetches.Records()
		if len(records) == 0 && pollCtx.Err() != nil {
			return printed, nil // idle for --timeout
		}
		for _, record := range records {
			if err := printer.print(out, record); err != nil {
				return printed, fmt.Errorf("consume: write output: %w", err)
			}
			printed++
		}
		if err := out.Flush(); err != nil {
			return printed, fmt.Errorf("consume: write output: %w", err)
		}
	}
	return printed, nil
}

// topicPartitions returns topic's partition numbers, or a clear error if
// the topic does not exist or the cluster cannot be reached in --timeout.
func topicPartitions(ctx context.Context, opts *globalOptions, client *kgo.Client, operation, topic string) ([]int32, error) {
	ctx, cancel := opts.requestContext(ctx)
	defer cancel()
	metadata, err := kadm.NewClient(client).Metadata(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("%s: look up topic %q: %w", operation, topic, err)
	}
	detail, ok := metadata.Topics[topic]
	if !ok {
		return nil, fmt.Errorf("%s: topic %q missing from the cluster's metadata", operation, topic)
	}
	if detail.Err != nil {
		return nil, fmt.Errorf("%s: topic %q: %w", operation, topic, detail.Err)
	}
	return detail.Partitions.Numbers(), nil
}
