package share

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPartitionScript runs testdata/partition.txt: each command drives the
// share-partition and the line after it, starting "=>", is its expected
// output.
func TestPartitionScript(t *testing.T) {
	f, err := os.Open("testdata/partition.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var p *Partition
	var got string
	haveOutput := false
	scanner := bufio.NewScanner(f)
	lineNumber := 0
	for scanner.Scan() {
		lineNumber++
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if want, ok := strings.CutPrefix(line, "=> "); ok {
			if !haveOutput {
				t.Fatalf("line %d: expectation without output", lineNumber)
			}
			if got != want {
				t.Errorf("line %d: got %q, want %q", lineNumber, got, want)
			}
			haveOutput = false
			continue
		}
		var err error
		got, haveOutput, err = runCommand(&p, line)
		if err != nil {
			t.Fatalf("line %d: %v", lineNumber, err)
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
}

func runCommand(pp **Partition, line string) (string, bool, error) {
	fields := strings.Fields(line)
	args := map[string]string{}
	var positional []string
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			args[k] = v
		} else {
			positional = append(positional, f)
		}
	}
	num := func(k string) int64 {
		n, _ := strconv.ParseInt(args[k], 10, 64)
		return n
	}
	p := *pp
	if fields[0] != "new" && p == nil {
		return "", false, fmt.Errorf("no partition")
	}
	switch fields[0] {
	case "new":
		*pp = NewPartition(Config{RecordLockDurationMs: num("lockms"), DeliveryCountLimit: int16(num("limit")), MaxRecordLocks: num("locks")}, num("start"))
		return "", false, nil
	case "acquire":
		batches, err := parseBatches(args["batches"])
		if err != nil {
			return "", false, err
		}
		var aborted []AbortedTxn
		if a := args["aborted"]; a != "" {
			for _, s := range strings.Split(a, ",") {
				pid, r, _ := strings.Cut(s, ":")
				first, last, err := parseRange(r)
				if err != nil {
					return "", false, err
				}
				id, _ := strconv.ParseInt(pid, 10, 64)
				aborted = append(aborted, AbortedTxn{ProducerID: id, FirstOffset: first, LastOffset: last})
			}
		}
		committed := false
		for _, f := range positional {
			committed = committed || f == "committed"
		}
		ranges := p.Acquire(args["member"], batches, aborted, committed, int(num("max")), num("now"))
		var out []string
		for _, r := range ranges {
			out = append(out, fmt.Sprintf("%d-%d/%d", r.FirstOffset, r.LastOffset, r.DeliveryCount))
		}
		return strings.Join(out, " "), true, nil
	case "ack":
		var acks []AckBatch
		renew := false
		for _, f := range positional {
			if f == "renew" {
				renew = true
				continue
			}
			r, types, _ := strings.Cut(f, ":")
			first, last, err := parseRange(r)
			if err != nil {
				return "", false, err
			}
			b := AckBatch{FirstOffset: first, LastOffset: last}
			for _, t := range strings.Split(types, ",") {
				n, _ := strconv.Atoi(t)
				b.Types = append(b.Types, AckType(n))
			}
			acks = append(acks, b)
		}
		return strconv.Itoa(int(p.Acknowledge(args["member"], acks, renew, num("now")))), true, nil
	case "tick":
		return strconv.Itoa(p.Tick(num("now"))), true, nil
	case "release":
		return strconv.Itoa(p.ReleaseMember(args["member"])), true, nil
	case "fetchoffset":
		return strconv.FormatInt(p.FetchOffset(), 10), true, nil
	case "canacquire":
		return strconv.FormatBool(p.CanAcquire()), true, nil
	case "advance":
		n, _ := strconv.ParseInt(positional[0], 10, 64)
		p.AdvanceTo(n)
		return "", false, nil
	case "state":
		out := []string{fmt.Sprintf("spso=%d speo=%d", p.StartOffset(), p.EndOffset())}
		for offset := p.StartOffset(); offset < p.EndOffset(); offset++ {
			s, dc := p.State(offset)
			out = append(out, fmt.Sprintf("%d:%s/%d", offset, s, dc))
		}
		return strings.Join(out, " "), true, nil
	case "snapshot":
		var out []string
		for _, b := range p.Snapshot() {
			out = append(out, formatStateBatch(b))
		}
		return strings.Join(out, " "), true, nil
	case "restore":
		var batches []StateBatch
		for _, f := range positional {
			b, err := parseStateBatch(f)
			if err != nil {
				return "", false, err
			}
			batches = append(batches, b)
		}
		p.Restore(num("start"), int32(num("epoch")), batches)
		return "", false, nil
	}
	return "", false, fmt.Errorf("unknown command %q", fields[0])
}

func parseRange(s string) (int64, int64, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		b = a
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("bad range %q", s)
	}
	return first, last, nil
}

func parseBatches(s string) ([]Batch, error) {
	var out []Batch
	for _, spec := range strings.Split(s, ",") {
		parts := strings.Split(spec, ":")
		first, last, err := parseRange(parts[0])
		if err != nil {
			return nil, err
		}
		b := Batch{BaseOffset: first, LastOffset: last, ProducerID: -1}
		for _, flag := range parts[1:] {
			switch {
			case flag == "txn":
				b.Transactional = true
			case flag == "ctl":
				b.Control = true
			case strings.HasPrefix(flag, "p"):
				b.ProducerID, _ = strconv.ParseInt(flag[1:], 10, 64)
			}
		}
		out = append(out, b)
	}
	return out, nil
}

func formatStateBatch(b StateBatch) string {
	return fmt.Sprintf("%d-%d:%s/%d", b.FirstOffset, b.LastOffset, b.State, b.DeliveryCount)
}

func parseStateBatch(s string) (StateBatch, error) {
	r, rest, _ := strings.Cut(s, ":")
	state, dc, _ := strings.Cut(rest, "/")
	first, last, err := parseRange(r)
	if err != nil {
		return StateBatch{}, err
	}
	n, _ := strconv.Atoi(dc)
	b := StateBatch{FirstOffset: first, LastOffset: last, DeliveryCount: int16(n)}
	for _, st := range []RecordState{Available, Acquired, Acknowledged, Archived} {
		if st.String() == state {
			b.State = st
		}
	}
	return b, nil
}
