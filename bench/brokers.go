package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/kafkaref"
	"github.com/samsa-streaming/samsa/internal/server"
)

// A broker under test runs as a child process of this program, started by
// re-executing the program's own binary with brokerRoleEnv set, so its CPU
// time and peak RSS can be read from /proc without the load generator's.
// The child prints "listening ADDR" on stdout, serves until its stdin
// closes, then shuts down and exits.
const (
	brokerRoleEnv      = "SAMSA_BENCH_BROKER"
	brokerDirEnv       = "SAMSA_BENCH_DIR"
	brokerProfileEnv   = "SAMSA_BENCH_PROFILE"
	brokerOverridesEnv = "SAMSA_BENCH_OVERRIDES"

	roleSamsa = "samsa"
	roleKfake = "kfake"
	// roleKafka is Apache Kafka itself, a JVM started directly (see
	// kafka.go), not a re-executed child.
	roleKafka = "kafka"

	// brokerStartTimeout bounds the wait for a child's listening line.
	brokerStartTimeout = 60 * time.Second
	// brokerStopTimeout bounds a child's graceful shutdown before it is
	// killed.
	brokerStopTimeout = 30 * time.Second
	// Profiling rates when profiling is on: one mutex contention event in
	// mutexProfileFraction, and blocking events of blockProfileRateNs or
	// more.
	mutexProfileFraction = 10
	blockProfileRateNs   = 10_000
)

// targetNames are the brokers compared, in table order.
var targetNames = map[string]string{roleSamsa: "Samsa", roleKafka: "Kafka", roleKfake: "kfake"}

// maybeServeBroker runs this process as a broker child if brokerRoleEnv
// says so, and then exits; otherwise it returns.
func maybeServeBroker() {
	role := os.Getenv(brokerRoleEnv)
	if role == "" {
		return
	}
	if err := serveBroker(role); err != nil {
		fmt.Fprintf(os.Stderr, "bench broker %s: %v\n", role, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func serveBroker(role string) error {
	profileDir := os.Getenv(brokerProfileEnv)
	var stopProfiles func() error
	if profileDir != "" {
		var err error
		if stopProfiles, err = startProfiles(profileDir); err != nil {
			return err
		}
	}
	var addr string
	var shutdown func() error
	switch role {
	case roleSamsa:
		overrides := []string{
			"listeners=PLAINTEXT://127.0.0.1:0",
			"log.dirs=" + os.Getenv(brokerDirEnv),
			"metrics.listener=",
			"group.initial.rebalance.delay.ms=0",
		}
		if extra := os.Getenv(brokerOverridesEnv); extra != "" {
			overrides = append(overrides, strings.Split(extra, "\n")...)
		}
		cfg, _, err := config.Load("", overrides, nil)
		if err != nil {
			return err
		}
		node, err := server.Start(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			return err
		}
		addr = node.Addrs()[0].String()
		shutdown = func() error {
			ctx, cancel := context.WithTimeout(context.Background(), brokerStopTimeout)
			defer cancel()
			return node.Shutdown(ctx)
		}
	case roleKfake:
		cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			return err
		}
		addr = cluster.ListenAddrs()[0]
		shutdown = func() error { cluster.Close(); return nil }
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	fmt.Printf("listening %s\n", addr)
	_, _ = io.Copy(io.Discard, os.Stdin)
	if stopProfiles != nil {
		if err := stopProfiles(); err != nil {
			return err
		}
	}
	return shutdown()
}

// startProfiles starts a CPU profile, an execution trace (trace.out, for
// "go tool trace" and its -pprof=sched view of scheduling latency) and
// mutex and block sampling; the returned function writes cpu.pprof,
// allocs.pprof, mutex.pprof and block.pprof into dir and ends the trace.
func startProfiles(dir string) (func() error, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cpu, err := os.Create(filepath.Join(dir, "cpu.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, err
	}
	traceFile, err := os.Create(filepath.Join(dir, "trace.out"))
	if err != nil {
		pprof.StopCPUProfile()
		cpu.Close()
		return nil, err
	}
	if err := trace.Start(traceFile); err != nil {
		pprof.StopCPUProfile()
		cpu.Close()
		traceFile.Close()
		return nil, err
	}
	runtime.SetMutexProfileFraction(mutexProfileFraction)
	runtime.SetBlockProfileRate(blockProfileRateNs)
	return func() error {
		pprof.StopCPUProfile()
		trace.Stop()
		if err := errors.Join(cpu.Close(), traceFile.Close()); err != nil {
			return err
		}
		for _, name := range []string{"allocs", "mutex", "block"} {
			f, err := os.Create(filepath.Join(dir, name+".pprof"))
			if err != nil {
				return err
			}
			werr := pprof.Lookup(name).WriteTo(f, 0)
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				return werr
			}
		}
		return nil
	}, nil
}

// brokerProcess is a running broker child.
type brokerProcess struct {
	role  string
	addr  string
	dir   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// stderr collects the child's diagnostics for error messages.
	stderr *strings.Builder
	// kafka is set instead of cmd, stdin and stderr for roleKafka.
	kafka *kafkaref.Node
}

// pid is the broker's process: the child, or Kafka's JVM.
func (b *brokerProcess) pid() int {
	if b.kafka != nil {
		return b.kafka.Pid()
	}
	return b.cmd.Process.Pid
}

// startBroker starts a fresh broker child with an empty data dir under
// workDir. With profileDir set, the child profiles itself into it.
func startBroker(role, workDir, profileDir string, overrides []string) (*brokerProcess, error) {
	if role == roleKafka {
		return startKafka(workDir, overrides)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(workDir, "samsa-bench-"+role+"-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(),
		brokerRoleEnv+"="+role,
		brokerDirEnv+"="+dir,
		brokerProfileEnv+"="+profileDir,
		brokerOverridesEnv+"="+strings.Join(overrides, "\n"),
	)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	b := &brokerProcess{role: role, dir: dir, cmd: cmd, stdin: stdin, stderr: &strings.Builder{}}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	lines := listeningAddrs(stdout)
	select {
	case addr, ok := <-lines:
		if !ok {
			_ = cmd.Wait()
			os.RemoveAll(dir)
			return nil, fmt.Errorf("%s broker exited before listening: %s", role, b.stderr.String())
		}
		b.addr = addr
	case <-time.After(brokerStartTimeout):
		b.kill()
		return nil, fmt.Errorf("%s broker did not start within %s", role, brokerStartTimeout)
	}
	return b, nil
}

// listeningAddrs reads a child's stdout and sends the address of each
// "listening ADDR" line; it is closed when stdout ends (the child exited).
// The bench's broker children and the gofakes3 server print that line once
// they accept connections.
func listeningAddrs(stdout io.Reader) <-chan string {
	lines := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if addr, ok := strings.CutPrefix(scanner.Text(), "listening "); ok {
				lines <- addr
			}
		}
		close(lines)
	}()
	return lines
}

// stop shuts the child down gracefully (killing it after brokerStopTimeout)
// and removes its data dir.
func (b *brokerProcess) stop() error {
	defer os.RemoveAll(b.dir)
	if b.kafka != nil {
		return b.kafka.Stop()
	}
	_ = b.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- b.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s broker: %w: %s", b.role, err, b.stderr.String())
		}
		return nil
	case <-time.After(brokerStopTimeout + 5*time.Second):
		_ = b.cmd.Process.Kill()
		<-done
		return fmt.Errorf("%s broker did not stop within %s", b.role, brokerStopTimeout)
	}
}

func (b *brokerProcess) kill() {
	if b.kafka != nil {
		_ = b.kafka.Stop()
		os.RemoveAll(b.dir)
		return
	}
	_ = b.cmd.Process.Kill()
	_ = b.cmd.Wait()
	os.RemoveAll(b.dir)
}

// processStats are what /proc says of a process: CPU time used and the
// resident set's high-water mark.
type processStats struct {
	cpu       time.Duration
	peakRSSKB int64
	// minorFaults and majorFaults count page faults, a diagnostic: on
	// some virtual machines a fault on a file mapping costs a millisecond.
	minorFaults, majorFaults int64
}

// clockTicksPerSecond is USER_HZ, which Linux fixes at 100 for /proc.
const clockTicksPerSecond = 100

// readProcessStats reads utime+stime from /proc/PID/stat and VmHWM from
// /proc/PID/status.
func readProcessStats(pid int) (processStats, error) {
	var s processStats
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// Fields after the command name, which is in parentheses and may
	// contain spaces: state is field 3, minflt 10, majflt 12, utime 14 and
	// stime 15.
	closing := strings.LastIndexByte(string(stat), ')')
	if closing < 0 {
		return s, errors.New("malformed /proc stat")
	}
	fields := strings.Fields(string(stat[closing+1:]))
	if len(fields) < 13 {
		return s, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	minor, err3 := strconv.ParseInt(fields[7], 10, 64)
	major, err4 := strconv.ParseInt(fields[9], 10, 64)
	s.minorFaults, s.majorFaults = minor, major
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return s, err
	}
	s.cpu = time.Duration(utime+stime) * time.Second / clockTicksPerSecond
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return s, err
			}
			s.peakRSSKB = kb
		}
	}
	return s, nil
}

// resetPeakRSS starts a new VmHWM high-water mark (Linux 4.0+), so a
// phase's peak excludes what came before it. Failure is not fatal: the
// peak then covers the process's whole life.
func resetPeakRSS(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

func (b *brokerProcess) stats() (processStats, error) { return readProcessStats(b.pid()) }
