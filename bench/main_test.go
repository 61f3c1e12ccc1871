package main

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/kafkaref"
)

// TestMain lets the test binary serve as a broker child, as the program's
// own binary does.
func TestMain(m *testing.M) {
	maybeServeBroker()
	os.Exit(m.Run())
}

// TestSmoke runs every workload against every target for a moment and
// checks that records flowed and that the table and the chart are complete.
// It asserts nothing about speed.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts brokers as child processes")
	}
	o := smokeOptions()
	if _, err := kafkaJars(); errors.Is(err, kafkaref.ErrUnavailable) && os.Getenv("SAMSA_REQUIRE_KAFKA") == "" {
		t.Logf("without Apache Kafka: %v", err)
		o.targets = []string{roleSamsa, roleKfake}
		o.workloadIDs = "a,b,c,d,e,f,g"
	}
	o.workDir = t.TempDir()
	o.resultsDir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var table, log bytes.Buffer
	results := newResults(&o)
	// run prints the table; recompute it from the same results to check
	// the samples as well.
	if err := runWith(ctx, &o, results, &table, &log); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	for _, w := range o.selectedWorkloads() {
		for _, target := range o.targets {
			if !w.runsOn(target) {
				if n := len(results.samples[w.id][target]); n != 0 {
					t.Fatalf("(%s), not for %s, ran %d times on it", w.id, target, n)
				}
				continue
			}
			runs := results.samples[w.id][target]
			if len(runs) != o.runs {
				t.Fatalf("(%s) on %s: %d runs, want %d", w.id, target, len(runs), o.runs)
			}
			for _, s := range runs {
				if s[recordsKey] <= 0 {
					t.Errorf("(%s) on %s: no records flowed", w.id, target)
				}
				for _, m := range w.metrics {
					if _, ok := s[m.key]; !ok {
						t.Errorf("(%s) on %s: no figure for %q", w.id, target, m.label)
					}
				}
			}
		}
	}
	text := table.String()
	for _, m := range limitRows {
		if !strings.Contains(text, "| "+m.label+" | ") {
			t.Errorf("table lacks the limit row %q", m.label)
		}
	}
	for _, w := range o.selectedWorkloads() {
		for _, m := range w.metrics {
			if !strings.Contains(text, "| "+w.id+" | "+m.label+" | ") {
				t.Errorf("table lacks row %s %q", w.id, m.label)
			}
		}
	}
	// A workload row names a figure for every target: "–" for all of them
	// means nothing was measured. (A ratio may be "–": a peer's CPU can
	// round to 0 in a run this short.)
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) < 3+len(o.targets) || !slices.ContainsFunc(o.selectedWorkloads(), func(w workload) bool { return w.id == cells[0] }) {
			continue
		}
		figures := cells[3 : 3+len(o.targets)]
		if !slices.ContainsFunc(figures, func(c string) bool { return c != "–" }) {
			t.Errorf("table row with no figures: %s", line)
		}
	}
	markdown, err := os.ReadFile(filepath.Join(o.resultsDir, "RESULTS.md"))
	if err != nil || !strings.Contains(string(markdown), text) {
		t.Errorf("RESULTS.md missing or without the table: %v", err)
	}
	image, err := os.ReadFile(filepath.Join(o.resultsDir, "results.png"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(image)); err != nil {
		t.Errorf("results.png: %v", err)
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-smoke", "-workloads", "a,e"})
	if err != nil || o.runs != 1 || len(o.selectedWorkloads()) != 2 {
		t.Fatalf("parseFlags(-smoke) = %+v, %v", o, err)
	}
	o, err = parseFlags([]string{"-consume-gb", "10", "-partitions", "10000"})
	if err != nil || o.consumeBytes != 10e9 || o.manyPartitions != 10000 {
		t.Fatalf("parseFlags = %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"-workloads", "z"}, {"-targets", "zookeeper"}, {"-runs", "0"}, {"-object-store", "minio"}, {"extra"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%q) succeeded", bad)
		}
	}
}

func TestSpreadAndRatios(t *testing.T) {
	s := spreadOf([]float64{3, 1, 2})
	if s.median != 2 || s.min != 1 || s.max != 3 || s.text(0) != "2 (1–3)" {
		t.Errorf("spreadOf = %+v %q", s, s.text(0))
	}
	if got := spreadOf([]float64{1, 2, 3, 4}).median; got != 2.5 {
		t.Errorf("even median = %g", got)
	}
	if got := ratioText(spread{median: 3, n: 1}, spread{median: 2, n: 1}); got != "1.50×" {
		t.Errorf("ratio = %q", got)
	}
}

// TestRemoteReadSmoke runs the remote-read workload (n), which runs only
// when named, in its smoke size against Samsa on each object store: every
// record is read from local segments and again from the remote tier, and
// the store was read (an amplification below 1 would mean less came from
// it than was served).
func TestRemoteReadSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker and an S3 server as child processes")
	}
	for _, store := range []string{storeGofakes3, storeMoto} {
		t.Run(store, func(t *testing.T) {
			if _, err := exec.LookPath("moto_server"); store == storeMoto && err != nil {
				if os.Getenv("SAMSA_REQUIRE_MOTO") != "" {
					t.Fatal("moto_server not installed and SAMSA_REQUIRE_MOTO is set")
				}
				t.Skip("moto_server not installed (pip install 'moto[server]')")
			}
			testRemoteReadSmoke(t, store)
		})
	}
}

func testRemoteReadSmoke(t *testing.T, store string) {
	o := smokeOptions()
	o.workloadIDs, o.targets, o.objectStore = "n", []string{roleSamsa}, store
	o.workDir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var table, log bytes.Buffer
	results := newResults(&o)
	if err := runWith(ctx, &o, results, &table, &log); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	runs := results.samples["n"][roleSamsa]
	if len(runs) != 1 {
		t.Fatalf("%d runs of (n), want 1", len(runs))
	}
	s := runs[0]
	for _, w := range o.selectedWorkloads() {
		for _, m := range w.metrics {
			if _, ok := s[m.key]; !ok {
				t.Errorf("no figure for %q", m.label)
			}
			if !strings.Contains(table.String(), "| n | "+m.label+" | ") {
				t.Errorf("table lacks row %q", m.label)
			}
		}
	}
	if s[recordsKey] < float64(o.remoteBytes/1024) || s["remote_mbps"] <= 0 || s["local_mbps"] <= 0 {
		t.Fatalf("records %v, local %v MB/s, remote %v MB/s", s[recordsKey], s["local_mbps"], s["remote_mbps"])
	}
	if a := s["remote_amplification"]; a < 1 {
		t.Fatalf("read amplification %v: the store gave less than was served", a)
	}
	t.Logf("\n%s", table.String())
}
