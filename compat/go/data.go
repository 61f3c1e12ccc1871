package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The data set every driver produces (compat/README.md describes it, and the
// Python and kafkajs drivers build the same records):
//
//	key        "key-%03d" of i % 97, so equal keys repeat across the run
//	value      "value-%06d-" + "samsa-compat-" x 8 + "ok" (119 bytes)
//	headers    idx=<i>, client=<client name>
//	timestamp  base + i ms, base an hour before the run (CreateTime)

const numKeys = 97

// padding makes values compressible, and makes a kcat input line
// ("key-NNN<TAB>value<LF>") exactly 128 bytes (see kcatInput).
var padding = strings.Repeat("samsa-compat-", 8) + "ok"

// codecs in the order the scenarios use them; "none" first.
var codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

type header struct{ Key, Value string }

type record struct {
	Partition int32
	Offset    int64
	Key       string
	Value     string
	Headers   []header
	Timestamp int64 // ms since the epoch
}

func keyFor(i int) string   { return fmt.Sprintf("key-%03d", i%numKeys) }
func valueFor(i int) string { return fmt.Sprintf("value-%06d-%s", i, padding) }

func headersFor(client string, i int) []header {
	return []header{{"idx", strconv.Itoa(i)}, {"client", client}}
}

// tsBase is the timestamp of record 0: an hour ago on a whole second, well
// inside any retention and the broker's timestamp bounds.
func tsBase() int64 { return time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli() }

func idxOf(value string) (int, bool) {
	rest, ok := strings.CutPrefix(value, "value-")
	if !ok || len(rest) < 6 {
		return 0, false
	}
	i, err := strconv.Atoi(rest[:6])
	return i, err == nil
}

// expectation describes the records a consumer must get back.
type expectation struct {
	idx []int // the record indexes expected, each exactly once
	// want returns the record expected for index i (Partition and Offset
	// are ignored). nil checks key and value only.
	want func(i int) record
	// tsRange, when want is nil or its timestamps are unknown (tools that
	// stamp records themselves), bounds the timestamps.
	tsLo, tsHi int64
	// checkHeaders compares headers as well.
	checkHeaders bool
	// partitions maps an index to the partition its delivery report named.
	partitions map[int]int32
}

func rangeIdx(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// verify checks got (in the order the client delivered it) against e: every
// expected record exactly once and nothing else; key, value, headers and
// timestamp intact; per partition, offsets and production order increasing;
// equal keys on one partition.
func verify(got []record, e expectation) error {
	want := map[int]bool{}
	for _, i := range e.idx {
		want[i] = true
	}
	var problems []string
	add := func(format string, args ...any) {
		if len(problems) < 8 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	seen := map[int]record{}
	last := map[int32]record{}
	keyPart := map[string]int32{}
	for _, r := range got {
		i, ok := idxOf(r.Value)
		if !ok {
			add("partition %d offset %d: unexpected value %q", r.Partition, r.Offset, trunc(r.Value))
			continue
		}
		if !want[i] {
			add("record %d (partition %d offset %d) was not expected here", i, r.Partition, r.Offset)
			continue
		}
		if prev, dup := seen[i]; dup {
			add("record %d delivered twice (partition %d offsets %d and %d)", i, r.Partition, prev.Offset, r.Offset)
			continue
		}
		seen[i] = r
		if r.Key != keyFor(i) {
			add("record %d: key %q, want %q", i, r.Key, keyFor(i))
		}
		if r.Value != valueFor(i) {
			add("record %d: value %q, want %q", i, trunc(r.Value), trunc(valueFor(i)))
		}
		if e.want != nil {
			w := e.want(i)
			if e.checkHeaders && !equalHeaders(r.Headers, w.Headers) {
				add("record %d: headers %v, want %v", i, r.Headers, w.Headers)
			}
			if w.Timestamp != 0 && r.Timestamp != w.Timestamp {
				add("record %d: timestamp %d, want %d", i, r.Timestamp, w.Timestamp)
			}
		}
		if e.tsLo != 0 && (r.Timestamp < e.tsLo || r.Timestamp > e.tsHi) {
			add("record %d: timestamp %d outside the produce window [%d, %d]", i, r.Timestamp, e.tsLo, e.tsHi)
		}
		if p, ok := e.partitions[i]; ok && p != r.Partition {
			add("record %d: consumed from partition %d, delivery report said %d", i, r.Partition, p)
		}
		if l, ok := last[r.Partition]; ok {
			li, _ := idxOf(l.Value)
			if r.Offset <= l.Offset {
				add("partition %d: offset %d after %d", r.Partition, r.Offset, l.Offset)
			}
			if i < li {
				add("partition %d: record %d after record %d (production order lost)", r.Partition, i, li)
			}
		}
		last[r.Partition] = r
		if p, ok := keyPart[r.Key]; ok && p != r.Partition {
			add("key %q on partitions %d and %d", r.Key, p, r.Partition)
		}
		keyPart[r.Key] = r.Partition
	}
	var missing []int
	for _, i := range e.idx {
		if _, ok := seen[i]; !ok {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		add("%d of %d records missing (first: %v)", len(missing), len(e.idx), head(missing, 5))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d records consumed: %s", len(got), strings.Join(problems, "; "))
	}
	return nil
}

// checkDense checks that the offsets acknowledged for each partition are
// exactly 0..n-1, and returns the per-partition counts.
func checkDense(offsets map[int32][]int64) (map[int32]int64, error) {
	counts := map[int32]int64{}
	for p, offs := range offsets {
		sort.Slice(offs, func(a, b int) bool { return offs[a] < offs[b] })
		for j, o := range offs {
			if o != int64(j) {
				return nil, fmt.Errorf("partition %d: acknowledged offsets not 0..%d (position %d has %d)", p, len(offs)-1, j, o)
			}
		}
		counts[p] = int64(len(offs))
	}
	return counts, nil
}

func equalHeaders(a, b []header) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func head(xs []int, n int) []int {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}

// waitFor polls cond until it returns nil or ctx or the limit ends, and
// returns the last error.
func waitFor(ctx context.Context, limit time.Duration, cond func() error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// assignmentSplit checks that two members' partitions are disjoint, both
// non-empty, and together cover 0..n-1.
func assignmentSplit(a, b []int32, n int) error {
	if len(a) == 0 || len(b) == 0 {
		return fmt.Errorf("members hold %v and %v: not split yet", a, b)
	}
	seen := map[int32]bool{}
	for _, p := range append(append([]int32{}, a...), b...) {
		if seen[p] {
			return fmt.Errorf("members hold %v and %v: partition %d twice", a, b, p)
		}
		seen[p] = true
	}
	if len(seen) != n {
		return fmt.Errorf("members hold %v and %v: %d of %d partitions", a, b, len(seen), n)
	}
	return nil
}

func sortedParts(m map[int32]bool) []int32 {
	var out []int32
	for p, ok := range m {
		if ok {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// groupsPlan is the shape of the groups scenario, the same for every client.
const (
	groupPartitions = 4
	groupFirst      = 400 // records consumed by the two members and committed
	groupSecond     = 100 // records produced while the group is down
)

// txn scenario sizes.
const (
	idemRecords = 1000
	txnRecords  = 128 // per transaction (a multiple of 8: see kcatInput)
)
