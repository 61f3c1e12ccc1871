// Command bench compares Samsa with a peer broker and with the machine's own
// limits under the same loads, in one invocation:
//
//	go run ./bench                       # the full comparison (about 30 min)
//	go run ./bench -smoke                # seconds: proves the tool works
//	go run ./bench -results bench        # also rewrite RESULTS.md and results.png
//	go run ./bench -workloads a -profile /tmp/prof   # profile Samsa under (a)
//
// Every round measures the machine's limits (loopback TCP, sendfile,
// sequential file writes, loopback round trip), then runs each workload
// against a fresh Samsa node, a fresh Apache Kafka 4.4 node (a JVM started
// from the jars, see kafka.go) and a fresh franz-go kfake cluster, rotating
// which goes first, so drift in the machine's load hits all alike. Each
// broker runs as a child process of this program (the Go ones as the same
// binary, re-executed), so its CPU time and peak RSS come from /proc. The table
// shows the median of the rounds with the min and max, and Samsa's ratio to
// the peer and to the limit.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/samsa-streaming/samsa/internal/bench"
)

// options are the command line of the comparison.
type options struct {
	runs              int
	duration          time.Duration
	limitDuration     time.Duration
	consumeBytes      int64
	e2eMBps           float64
	manyPartitions    int
	manyPartitionRate float64
	shareRecords      int
	remoteBytes       int64
	objectStore       string
	workloadIDs       string
	targets           []string
	workDir           string
	profileDir        string
	resultsDir        string
	verbose           bool
	samsaOverrides    []string
}

func defaultOptions() options {
	return options{
		runs:              3,
		duration:          10 * time.Second,
		limitDuration:     2 * time.Second,
		consumeBytes:      1e9,
		e2eMBps:           50,
		manyPartitions:    1000,
		manyPartitionRate: 5,
		shareRecords:      200000,
		remoteBytes:       2e9,
		objectStore:       storeMoto,
		workloadIDs:       "a,b,c,d,e,f,g,h,i,j,l,m",
		targets:           []string{roleSamsa, roleKafka, roleKfake},
		workDir:           os.TempDir(),
	}
}

// smokeOptions run every workload briefly: seconds in all.
func smokeOptions() options {
	o := defaultOptions()
	o.runs = 1
	o.duration = 200 * time.Millisecond
	o.limitDuration = 100 * time.Millisecond
	o.consumeBytes = 4e6
	o.e2eMBps = 2
	o.manyPartitions = 20
	o.manyPartitionRate = 20
	o.shareRecords = 3000
	o.remoteBytes = 8e6
	return o
}

func main() {
	maybeServeBroker()
	bench.TuneGC() // the load generator only; brokers run with their defaults
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, &o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	smoke := fs.Bool("smoke", false, "run every workload for a moment: proves the tool works, measures nothing")
	o := defaultOptions()
	var targets, overrides string
	var consumeGB, remoteGB float64
	fs.IntVar(&o.runs, "runs", o.runs, "rounds; figures are the median with min and max")
	fs.DurationVar(&o.duration, "duration", o.duration, "length of each produce and end-to-end run")
	fs.DurationVar(&o.limitDuration, "limit-duration", o.limitDuration, "length of each machine-limit probe")
	fs.Float64Var(&consumeGB, "consume-gb", float64(o.consumeBytes)/1e9, "GB (10^9 bytes) written and then consumed in workload d")
	fs.Float64Var(&remoteGB, "remote-gb", float64(o.remoteBytes)/1e9, "GB (10^9 bytes) written, offloaded and then consumed from the remote tier in workload n")
	fs.StringVar(&o.objectStore, "object-store", o.objectStore, "S3 server of workload n on loopback: moto or gofakes3")
	fs.Float64Var(&o.e2eMBps, "e2e-mbps", o.e2eMBps, "produce rate of the end-to-end workload e, MB/s")
	fs.IntVar(&o.manyPartitions, "partitions", o.manyPartitions, "partitions of workload f")
	fs.Float64Var(&o.manyPartitionRate, "partition-rate", o.manyPartitionRate, "records/s per partition in workload f")
	fs.IntVar(&o.shareRecords, "share-records", o.shareRecords, "records written and then consumed by the share group in workload m")
	fs.StringVar(&o.workloadIDs, "workloads", o.workloadIDs, "comma-separated workloads to run (a to n; k and n run only when named)")
	fs.StringVar(&targets, "targets", strings.Join(o.targets, ","), "brokers to compare: samsa, kafka, kfake")
	fs.StringVar(&o.workDir, "workdir", o.workDir, "directory for broker data and probe files")
	fs.StringVar(&o.profileDir, "profile", "", "write Samsa's CPU, alloc, mutex and block profiles per workload under this directory")
	fs.StringVar(&o.resultsDir, "results", "", "write RESULTS.md and results.png into this directory")
	fs.BoolVar(&o.verbose, "v", false, "print progress lines of every run")
	fs.StringVar(&overrides, "samsa-override", "", "extra Samsa config overrides, key=value, comma-separated")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *smoke {
		s := smokeOptions()
		s.workloadIDs, s.workDir, s.profileDir, s.resultsDir, s.verbose = o.workloadIDs, o.workDir, o.profileDir, o.resultsDir, o.verbose
		s.objectStore = o.objectStore
		o = s
	} else {
		o.consumeBytes = int64(consumeGB * 1e9)
		o.remoteBytes = int64(remoteGB * 1e9)
	}
	o.targets = splitList(targets)
	o.samsaOverrides = splitList(overrides)
	return o, o.validate()
}

func (o *options) validate() error {
	switch {
	case o.runs < 1:
		return errors.New("-runs must be at least 1")
	case o.duration <= 0 || o.limitDuration <= 0:
		return errors.New("-duration and -limit-duration must be positive")
	case o.consumeBytes < 1024:
		return errors.New("-consume-gb is too small")
	case o.remoteBytes < 1024:
		return errors.New("-remote-gb is too small")
	case o.e2eMBps <= 0 || o.manyPartitionRate <= 0:
		return errors.New("-e2e-mbps and -partition-rate must be positive")
	case o.manyPartitions < 1:
		return errors.New("-partitions must be positive")
	case o.shareRecords < 1:
		return errors.New("-share-records must be positive")
	case len(o.targets) == 0:
		return errors.New("no -targets")
	case storeNames[o.objectStore] == "":
		return fmt.Errorf("unknown -object-store %q: want moto or gofakes3", o.objectStore)
	}
	for _, t := range o.targets {
		if targetNames[t] == "" {
			return fmt.Errorf("unknown target %q: want samsa, kafka or kfake", t)
		}
	}
	known := map[string]bool{}
	for _, w := range workloads(o) {
		known[w.id] = true
	}
	for _, id := range splitList(o.workloadIDs) {
		if !known[id] {
			return fmt.Errorf("unknown workload %q", id)
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// selectedWorkloads are the workloads -workloads names, in table order.
func (o *options) selectedWorkloads() []workload {
	wanted := map[string]bool{}
	for _, id := range splitList(o.workloadIDs) {
		wanted[id] = true
	}
	var out []workload
	for _, w := range workloads(o) {
		if wanted[w.id] {
			out = append(out, w)
		}
	}
	return out
}

// run performs every round and prints the table on stdout; progress goes
// to log.
func run(ctx context.Context, o *options, stdout, log io.Writer) error {
	return runWith(ctx, o, newResults(o), stdout, log)
}

// runWith is run collecting into results.
func runWith(ctx context.Context, o *options, results *results, stdout, log io.Writer) error {
	started := time.Now()
	if o.needsKafka() {
		fmt.Fprintln(log, "resolving Apache Kafka's jars")
		if _, err := kafkaJars(); err != nil {
			return err
		}
	}
	for round := range o.runs {
		fmt.Fprintf(log, "round %d/%d: machine limits\n", round+1, o.runs)
		limits, err := measureLimits(o.workDir, o.limitDuration, o.duration)
		if err != nil {
			return err
		}
		results.addLimits(limits.sample())
		for _, w := range o.selectedWorkloads() {
			for i := range o.targets {
				// Rotate the order of the targets between rounds.
				target := o.targets[(i+round)%len(o.targets)]
				if err := ctx.Err(); err != nil {
					return err
				}
				if !w.runsOn(target) {
					continue
				}
				fmt.Fprintf(log, "round %d/%d: (%s) %s on %s\n", round+1, o.runs, w.id, w.title, targetNames[target])
				s, err := runOnce(ctx, o, w, target, log)
				if err != nil {
					return fmt.Errorf("(%s) on %s: %w", w.id, targetNames[target], err)
				}
				results.add(w.id, target, s)
			}
		}
	}
	fmt.Fprintf(log, "done in %s\n", time.Since(started).Round(time.Second))
	report := results.report(time.Now(), time.Since(started))
	fmt.Fprint(stdout, report.table())
	if o.resultsDir != "" {
		if err := report.write(o.resultsDir); err != nil {
			return err
		}
	}
	return nil
}

// runOnce runs one workload on a fresh broker.
func runOnce(ctx context.Context, o *options, w workload, target string, log io.Writer) (sample, error) {
	profileDir := ""
	if o.profileDir != "" && target == roleSamsa {
		profileDir = filepath.Join(o.profileDir, w.id)
	}
	var overrides []string
	var secured securitySetup
	if target == roleSamsa {
		overrides = append(slices.Clone(o.samsaOverrides), w.samsaOverrides...)
		if w.security != nil {
			var err error
			if secured, err = w.security(); err != nil {
				return nil, err
			}
			overrides = append(overrides, secured.overrides...)
		}
	}
	var tiered *tieredSetup
	if target == roleSamsa && w.objectStore {
		var tieredOverrides []string
		var err error
		if tiered, tieredOverrides, err = startTiered(ctx, o); err != nil {
			return nil, err
		}
		defer tiered.stop()
		overrides = append(overrides, tieredOverrides...)
	}
	b, err := startBroker(target, o.workDir, profileDir, overrides)
	if err != nil {
		return nil, err
	}
	env := &runEnv{opts: o, broker: b, clientOpts: secured.clientOpts, tiered: tiered}
	if o.verbose {
		env.log = log
		env.progress = func(p bench.Progress) {
			fmt.Fprintf(log, "  %5.1fs %10.0f records/s %8.1f MB/s  p99 %s\n",
				p.Elapsed.Seconds(), p.RecordsPerSecond(), p.MBPerSecond(), p.Latency.P99.Round(10*time.Microsecond))
		}
	}
	s, err := w.run(ctx, env)
	if stopErr := b.stop(); err == nil && stopErr != nil {
		err = stopErr
	}
	return s, err
}
