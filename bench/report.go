package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// results collects every run's sample.
type results struct {
	opts    *options
	limits  map[string][]float64
	samples map[string]map[string][]sample // workload id -> target -> runs
}

func newResults(o *options) *results {
	return &results{opts: o, limits: map[string][]float64{}, samples: map[string]map[string][]sample{}}
}

func (r *results) addLimits(s sample) {
	for k, v := range s {
		r.limits[k] = append(r.limits[k], v)
	}
}

func (r *results) add(workloadID, target string, s sample) {
	if r.samples[workloadID] == nil {
		r.samples[workloadID] = map[string][]sample{}
	}
	r.samples[workloadID][target] = append(r.samples[workloadID][target], s)
}

// spread is a median with the min and max of the runs.
type spread struct {
	median, min, max float64
	n                int
}

func spreadOf(values []float64) spread {
	if len(values) == 0 {
		return spread{}
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		median = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	return spread{median: median, min: sorted[0], max: sorted[len(sorted)-1], n: len(sorted)}
}

func (r *results) limit(key string) spread { return spreadOf(r.limits[key]) }

func (r *results) figure(workloadID, target, key string) spread {
	var values []float64
	for _, s := range r.samples[workloadID][target] {
		if v, ok := s[key]; ok {
			values = append(values, v)
		}
	}
	return spreadOf(values)
}

// row is one line of the table.
type row struct {
	workload string // "a", or "" for a machine row
	metric   metric
	limit    spread // n == 0 when the row has no limit
	targets  []spread
}

// report is the table and what is needed to describe it.
type report struct {
	opts     *options
	when     time.Time
	took     time.Duration
	titles   []string // "(a) produce ..." per workload, in order
	rows     []row
	machine  []row
	targets  []string
	workload []workload
}

func (r *results) report(when time.Time, took time.Duration) *report {
	rep := &report{opts: r.opts, when: when, took: took, targets: r.opts.targets, workload: r.opts.selectedWorkloads()}
	for _, m := range limitRows {
		rep.machine = append(rep.machine, row{metric: m, limit: r.limit(m.key)})
	}
	for _, w := range rep.workload {
		rep.titles = append(rep.titles, fmt.Sprintf("(%s) %s", w.id, w.title))
		for _, m := range w.metrics {
			rw := row{workload: w.id, metric: m}
			if m.limit != "" {
				rw.limit = r.limit(m.limit)
			}
			for _, t := range r.opts.targets {
				rw.targets = append(rw.targets, r.figure(w.id, t, m.key))
			}
			rep.rows = append(rep.rows, rw)
		}
	}
	return rep
}

func formatFigure(v float64, digits int) string {
	return strconv.FormatFloat(v, 'f', digits, 64)
}

func (s spread) text(digits int) string {
	if s.n == 0 {
		return "–"
	}
	if s.n == 1 {
		return formatFigure(s.median, digits)
	}
	return fmt.Sprintf("%s (%s–%s)", formatFigure(s.median, digits), formatFigure(s.min, digits), formatFigure(s.max, digits))
}

func ratioText(a, b spread) string {
	if a.n == 0 || b.n == 0 || b.median == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a.median/b.median)
}

// table renders the results as Markdown: the machine's limits, then every
// workload's figures.
func (rep *report) table() string {
	var b strings.Builder
	b.WriteString("Machine limits, measured in every round:\n\n")
	b.WriteString("| limit | median (min–max) |\n|---|---:|\n")
	for _, rw := range rep.machine {
		fmt.Fprintf(&b, "| %s | %s |\n", rw.metric.label, rw.limit.text(rw.metric.digits))
	}
	b.WriteString("\nWorkloads:\n\n")
	for _, title := range rep.titles {
		fmt.Fprintf(&b, "- %s\n", title)
	}
	b.WriteString("\n| | metric | limit |")
	for _, t := range rep.targets {
		fmt.Fprintf(&b, " %s |", targetNames[t])
	}
	// One ratio column per peer: Samsa / Kafka, Samsa / kfake.
	samsaIndex := slices.Index(rep.targets, roleSamsa)
	var peers []int
	if samsaIndex >= 0 {
		for i, t := range rep.targets {
			if t != roleSamsa {
				peers = append(peers, i)
			}
		}
	}
	for _, i := range peers {
		fmt.Fprintf(&b, " Samsa / %s |", targetNames[rep.targets[i]])
	}
	if samsaIndex >= 0 {
		b.WriteString(" Samsa / limit |")
	}
	b.WriteString("\n|---|---|---:|")
	for range rep.targets {
		b.WriteString("---:|")
	}
	for range peers {
		b.WriteString("---:|")
	}
	if samsaIndex >= 0 {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, rw := range rep.rows {
		limitText := "–"
		if rw.limit.n > 0 {
			limitText = formatFigure(rw.limit.median, rw.metric.digits)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |", rw.workload, rw.metric.label, limitText)
		for _, s := range rw.targets {
			fmt.Fprintf(&b, " %s |", s.text(rw.metric.digits))
		}
		for _, i := range peers {
			fmt.Fprintf(&b, " %s |", ratioText(rw.targets[samsaIndex], rw.targets[i]))
		}
		if samsaIndex >= 0 {
			fmt.Fprintf(&b, " %s |", ratioText(rw.targets[samsaIndex], rw.limit))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// write rewrites RESULTS.md and results.png in dir.
func (rep *report) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.png"), rep.plot(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "RESULTS.md"), []byte(rep.markdown()), 0o644)
}

func (rep *report) markdown() string {
	o := rep.opts
	var b strings.Builder
	b.WriteString("# Benchmark results\n\n")
	b.WriteString("Generated by `go run ./bench -results bench`")
	fmt.Fprintf(&b, " on %s, in %s.\n\n", rep.when.UTC().Format("2006-01-02"), rep.took.Round(time.Second))
	fmt.Fprintf(&b, "Machine: %s.\n\n", machineDescription())
	fmt.Fprintf(&b, "Settings: %d rounds; produce and end-to-end runs of %s; limit probes of %s; "+
		"workload d writes and reads %s; workload f uses %d partitions.\n\n",
		o.runs, o.duration, o.limitDuration, formatBytes(o.consumeBytes), o.manyPartitions)
	b.WriteString(`How to read it: each figure is the median of the rounds with (min–max).
Every round measures the machine's limits, then runs each workload against a
fresh Samsa node, a fresh Apache Kafka node and a fresh franz-go kfake
cluster, rotating which goes first; brokers run as child processes (Kafka
as a JVM from the 4.4.0 jars: KRaft, broker and controller in one process,
Kafka's defaults, a 1 GiB heap as kafka-server-start.sh sets, its log dir
on the same disk as Samsa's), the load generator (franz-go) in the parent,
all on the same cores. Workload h is Kafka's own perf tools, each run in
its own JVM. MB is 10^6 bytes of record keys and values
(whole batches for raw fetches). Ratios are of medians: above 1 is better for
throughput, below 1 is better for latency, CPU and RSS. Broker CPU and peak
RSS come from /proc of the broker process; peak RSS is reset when the measured
phase starts. The e2e limit is the loopback round trip of a 1 KiB message, a
floor no broker can beat. Produce is compared with loopback TCP and with a
file written for as long as a produce run: a broker stores what it
acknowledges, and once the dirty pages pass the kernel's writeback
thresholds every writer goes at the disk's pace. The load generator runs
with GOGC=400; the Go brokers with Go's defaults.

The machine is shared, so absolute figures are noisy; the interleaving makes
the ratios the figures to trust.

`)
	b.WriteString(rep.table())
	b.WriteString("\n![throughput and latency per workload](results.png)\n")
	return b.String()
}

// machineDescription says what the machine is without naming it: cores,
// memory, CPU model, kernel and Go version.
func machineDescription() string {
	parts := []string{fmt.Sprintf("%d CPUs", runtime.NumCPU())}
	if model := procField("/proc/cpuinfo", "model name"); model != "" {
		parts[0] += " (" + model + ")"
	}
	if mem := procField("/proc/meminfo", "MemTotal"); mem != "" {
		if kb, err := strconv.ParseFloat(strings.TrimSuffix(mem, " kB"), 64); err == nil {
			parts = append(parts, fmt.Sprintf("%.0f GiB memory", kb/(1<<20)))
		}
	}
	if kernel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		parts = append(parts, runtime.GOOS+" kernel "+strings.TrimSpace(string(kernel)))
	}
	parts = append(parts, runtime.Version()+" "+runtime.GOARCH)
	return strings.Join(parts, ", ")
}

// procField returns the value of the first "name : value" line of a /proc
// file.
func procField(path, name string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == name {
			return strings.TrimSpace(value)
		}
	}
	return ""
}
