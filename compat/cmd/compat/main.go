// Command compat runs the real-client compatibility suite: it builds and
// starts a samsa node (or uses COMPAT_BROKER), runs every client driver's
// scenarios against it with bounded timeouts, stops the node, prints the
// client x scenario matrix, writes it to compat/RESULTS.md, and ends with
// "compat: N passed, M failed". Run it from the repository root, normally
// through `make compat` (compat/run.sh installs the clients first).
// compat/README.md documents the environment variables.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-streaming/samsa/internal/netport"
)

var scenarios = []string{"metadata", "produce", "consume", "groups", "transactions", "admin", "errors", "scram-ssl", "plain-ssl", "mtls", "oauth"}

// client is one third-party client and how to run its driver.
type client struct {
	name string
	// command runs one scenario; tmp holds the built Go driver.
	command func(tmp, scenario string) []string
	// probe succeeds when the client is installed.
	probe func() error
}

func python() string { return getenv("COMPAT_PYTHON", "/usr/bin/python3") }

func pypiPython() string { return getenv("COMPAT_PYPI_PYTHON", "compat/python/.venv/bin/python") }

func goDriver(name string) func(tmp, scenario string) []string {
	return func(tmp, scenario string) []string {
		return []string{filepath.Join(tmp, "compat-go"), "-client", name, scenario}
	}
}

func runs(args ...string) func() error {
	return func() error {
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
}

var clients = []client{
	{
		name:    "kcat",
		command: goDriver("kcat"),
		probe:   runs("kcat", "-V"),
	},
	{
		name: "confluent-kafka-python",
		command: func(_, s string) []string {
			return []string{python(), "compat/python/confluent_test.py", s}
		},
		probe: func() error { return runs(python(), "-c", "import confluent_kafka")() },
	},
	{
		// The same driver on the newest confluent-kafka from PyPI, whose
		// wheels bundle a current librdkafka (compat/run.sh installs it).
		name: "confluent-kafka-python-pypi",
		command: func(_, s string) []string {
			return []string{pypiPython(), "compat/python/confluent_test.py", s}
		},
		probe: func() error { return runs(pypiPython(), "-c", "import confluent_kafka")() },
	},
	{
		name: "kafka-python",
		command: func(_, s string) []string {
			return []string{python(), "compat/python/kafka_python_test.py", s}
		},
		probe: func() error { return runs(python(), "-c", "import kafka")() },
	},
	{
		name:    "kafkajs",
		command: func(_, s string) []string { return []string{"node", "compat/kafkajs/test.js", s} },
		probe: func() error {
			if _, err := os.Stat("compat/kafkajs/node_modules/kafkajs/package.json"); err != nil {
				return errors.New("compat/kafkajs/node_modules has no kafkajs (run npm ci there)")
			}
			return runs("node", "--version")()
		},
	},
	{
		name:    "java",
		command: javaDriver,
		probe:   javaProbe,
	},
	{name: "franz-go", command: goDriver("franz-go")},
	{name: "sarama", command: goDriver("sarama")},
	{name: "kafka-go", command: goDriver("kafka-go")},
}

// support is compat/support.json.
type support struct {
	NotYetSupported map[string]string   `json:"not_yet_supported"`
	Needs           map[string][]string `json:"needs"`
	NeedsWhy        map[string]string   `json:"needs_why"`
}

// trailingComma matches a comma left before a closing brace when a line is
// deleted from support.json.
var trailingComma = regexp.MustCompile(`,(\s*[}\]])`)

// parseSupport reads support.json, forgiving trailing commas so that enabling
// a scenario is deleting its line.
func parseSupport(b []byte) (support, error) {
	var s support
	err := json.Unmarshal(trailingComma.ReplaceAll(b, []byte("$1")), &s)
	return s, err
}

// skipReason says why client/scenario is not run yet ("" when it runs),
// and a note on a dependency through "needs".
func (s support) skipReason(cl, sc string) (reason, note string) {
	if r, ok := s.NotYetSupported[sc]; ok {
		return r, ""
	}
	for _, dep := range s.Needs[cl+"/"+sc] {
		if r, ok := s.NotYetSupported[dep]; ok {
			return r, s.NeedsWhy[cl+"/"+sc]
		}
	}
	return "", ""
}

const (
	statusPass = "pass"
	statusFail = "FAIL"
	statusNA   = "n/a"
	statusNYS  = "not-yet-supported"
)

type cell struct {
	status  string
	detail  string // the client's error, or the reason
	note    string // for a not-yet-supported cell that waits through "needs"
	seconds float64
}

func (c cell) text() string {
	if c.status == statusNYS {
		return statusNYS + " (" + c.detail + ")"
	}
	return c.status
}

// driverResult is one JSON line a driver prints.
type driverResult struct {
	Client   string `json:"client"`
	Scenario string `json:"scenario"`
	Status   string `json:"status"`
	Detail   string `json:"detail"`
	Version  string `json:"version"`
}

func main() {
	os.Exit(run())
}

func run() int {
	if _, err := os.Stat("compat/support.json"); err != nil {
		fmt.Fprintln(os.Stderr, "compat: run me from the repository root (make compat)")
		return 2
	}
	b, err := os.ReadFile("compat/support.json")
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		return 2
	}
	sup, err := parseSupport(b)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: compat/support.json:", err)
		return 2
	}
	if os.Getenv("COMPAT_ALL") == "1" {
		sup = support{}
	}
	wantClients := filterList(os.Getenv("COMPAT_CLIENTS"), clientNames())
	wantScenarios := filterList(os.Getenv("COMPAT_SCENARIOS"), scenarios)
	timeout := time.Duration(atoi(getenv("COMPAT_SCENARIO_TIMEOUT", "180"))) * time.Second
	// A bound on the whole suite, so a broker that hangs every request cannot
	// hold CI for hours: past it, the remaining cells fail unrun.
	suiteLimit := time.Duration(atoi(getenv("COMPAT_SUITE_TIMEOUT", "1200"))) * time.Second

	tmp, err := os.MkdirTemp("", "samsa-compat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		return 2
	}
	// The work directory goes at the end, except the logs of a failed run
	// (or everything, with COMPAT_KEEP=1).
	cleanup := func(failedRun bool) {
		switch {
		case os.Getenv("COMPAT_KEEP") == "1":
			logf("work directory kept: %s", tmp)
		case failedRun:
			os.RemoveAll(filepath.Join(tmp, "data"))
			logf("logs of the failed run kept in %s", tmp)
		default:
			os.RemoveAll(tmp)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	matrix := map[string]map[string]cell{}
	versions := map[string]string{}
	setCell := func(cl, sc string, c cell) {
		// RESULTS.md is committed: no paths of this machine in it.
		c.detail = strings.ReplaceAll(c.detail, tmp, "<work dir>")
		if matrix[cl] == nil {
			matrix[cl] = map[string]cell{}
		}
		matrix[cl][sc] = c
	}

	// Build the Go driver, and samsa unless a broker is given.
	var fatal string
	if err := goBuild(filepath.Join(tmp, "compat-go"), "./compat/go"); err != nil {
		fatal = "building the Go driver failed: " + err.Error()
	}
	brokerName := getenv("COMPAT_BROKER_NAME", "samsa (built from this tree)")
	bootstrap := os.Getenv("COMPAT_BROKER")
	var node *samsaNode
	if fatal == "" && bootstrap == "" {
		if err := goBuild(filepath.Join(tmp, "samsa"), "./cmd/samsa"); err != nil {
			fatal = "building samsa failed: " + err.Error()
		} else if node, err = startSamsa(ctx, tmp); err != nil {
			fatal = "samsa did not start: " + err.Error()
		} else {
			bootstrap = node.addr
		}
	} else if bootstrap != "" {
		brokerName = getenv("COMPAT_BROKER_NAME", "an external broker (COMPAT_BROKER)")
	}
	if fatal == "" {
		if err := waitKafka(ctx, bootstrap, 30*time.Second); err != nil {
			fatal = fmt.Sprintf("the broker did not answer a metadata request listing a broker within 30s: %v", err)
			if node != nil {
				fatal += "; samsa log: " + node.tail()
			}
		}
	}
	if fatal != "" {
		logf("%s", fatal)
	}

	runID := randomID()
	start := time.Now()
	suiteDeadline := start.Add(suiteLimit)
	for _, cl := range clients {
		if !wantClients[cl.name] {
			continue
		}
		var probeErr error
		if cl.probe != nil && fatal == "" {
			probeErr = cl.probe()
		}
		for _, sc := range scenarios {
			if !wantScenarios[sc] {
				continue
			}
			if r, note := sup.skipReason(cl.name, sc); r != "" {
				setCell(cl.name, sc, cell{status: statusNYS, detail: r, note: note})
				continue
			}
			switch {
			case fatal != "":
				setCell(cl.name, sc, cell{status: statusFail, detail: fatal})
				continue
			case probeErr != nil:
				setCell(cl.name, sc, cell{status: statusFail, detail: "client not installed: " + probeErr.Error()})
				continue
			case ctx.Err() != nil:
				setCell(cl.name, sc, cell{status: statusFail, detail: "interrupted"})
				continue
			case node != nil && node.exited():
				setCell(cl.name, sc, cell{status: statusFail, detail: "samsa exited during the suite: " + node.tail()})
				continue
			case time.Until(suiteDeadline) < 10*time.Second:
				setCell(cl.name, sc, cell{status: statusFail, detail: fmt.Sprintf("not run: the suite's %s limit (COMPAT_SUITE_TIMEOUT) had passed", suiteLimit)})
				continue
			case securityScenarios[sc] && node == nil:
				setCell(cl.name, sc, cell{status: statusNA, detail: "the security scenarios need the suite's own node and its secured listeners (COMPAT_BROKER was given)"})
				continue
			}
			prefix := fmt.Sprintf("compat-%s-%s", runID, cl.name)
			var extraEnv []string
			if securityScenarios[sc] {
				if err := createSecureTopic(ctx, bootstrap, prefix+"-"+sc); err != nil {
					setCell(cl.name, sc, cell{status: statusFail, detail: err.Error()})
					continue
				}
				extraEnv = node.securityEnv
			}
			c, version := runScenario(ctx, tmp, cl, sc, bootstrap, prefix, extraEnv,
				min(timeout, time.Until(suiteDeadline)))
			if version != "" {
				versions[cl.name] = version
			}
			if node != nil && node.exited() && c.status == statusFail {
				c.detail += " (samsa exited: " + node.tail() + ")"
			}
			setCell(cl.name, sc, c)
			logf("%-24s %-13s %-5s %5.1fs %s", cl.name, sc, c.status, c.seconds, oneLine(c.detail, 160))
		}
	}
	elapsed := time.Since(start)
	var brokerNote string
	if node != nil {
		if err := node.stop(30 * time.Second); err != nil {
			brokerNote = "Stopping samsa: " + strings.ReplaceAll(err.Error(), tmp, "<work dir>")
			logf("%s", brokerNote)
		} else {
			logf("samsa stopped")
		}
	}

	passed, failed := 0, 0
	for _, row := range matrix {
		for _, c := range row {
			switch c.status {
			case statusPass:
				passed++
			case statusFail:
				failed++
			}
		}
	}
	table := renderText(matrix, wantClients, wantScenarios)
	fmt.Println()
	fmt.Print(table)
	fmt.Println()
	fmt.Print(renderDetails(matrix, wantClients, wantScenarios, false))
	summary := fmt.Sprintf("compat: %d passed, %d failed", passed, failed)
	md := renderMarkdown(matrix, wantClients, wantScenarios, versions, brokerName, brokerNote, elapsed, summary)
	resultsPath := getenv("COMPAT_RESULTS", "compat/RESULTS.md")
	if err := os.WriteFile(resultsPath, []byte(md), 0o644); err != nil {
		logf("writing %s: %v", resultsPath, err)
	} else {
		logf("matrix written to %s (suite took %s)", resultsPath, elapsed.Round(time.Second))
	}
	cleanup(failed > 0)
	fmt.Println(summary)
	if failed > 0 {
		return 1
	}
	return 0
}

// runScenario runs one driver process with a deadline and reads its result.
func runScenario(ctx context.Context, tmp string, cl client, sc, bootstrap, prefix string, extraEnv []string, timeout time.Duration) (cell, string) {
	args := cl.command(tmp, sc)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(),
		"COMPAT_BOOTSTRAP="+bootstrap,
		"COMPAT_PREFIX="+prefix,
		"COMPAT_CLIENT="+cl.name,
		"COMPAT_TIMEOUT="+strconv.Itoa(int(timeout.Seconds())),
		"COMPAT_RECORDS="+getenv("COMPAT_RECORDS", "10000"),
	)
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stdout bytes.Buffer
	logPath := filepath.Join(tmp, "logs", cl.name+"-"+sc+".log")
	os.MkdirAll(filepath.Dir(logPath), 0o755)
	logFile, err := os.Create(logPath)
	if err != nil {
		return cell{status: statusFail, detail: err.Error()}, ""
	}
	defer logFile.Close()
	cmd.Stdout = &stdout
	cmd.Stderr = logFile
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return cell{status: statusFail, detail: "cannot start driver: " + err.Error()}, ""
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	timedOut := false
	select {
	case waitErr = <-done:
	case <-time.After(timeout):
		timedOut = true
	case <-ctx.Done():
		timedOut = true
	}
	if timedOut {
		// The driver and anything it started (kcat, librdkafka threads) go.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		waitErr = <-done
	} else {
		// Leftover children of a finished driver.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	secs := time.Since(start).Seconds()
	var res *driverResult
	for _, line := range strings.Split(stdout.String(), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var r driverResult
		if json.Unmarshal([]byte(line), &r) == nil && r.Scenario == sc {
			res = &r
		}
	}
	tail := func() string { return lastLines(logPath, 4) }
	switch {
	case res == nil && timedOut:
		return cell{status: statusFail, seconds: secs, detail: fmt.Sprintf("no result within %s (driver killed); last log lines: %s", timeout, tail())}, ""
	case res == nil:
		return cell{status: statusFail, seconds: secs, detail: fmt.Sprintf("driver printed no result (%v); last log lines: %s", waitErr, tail())}, ""
	}
	c := cell{seconds: secs, detail: res.Detail}
	switch res.Status {
	case "pass":
		c.status = statusPass
	case "n/a":
		c.status = statusNA
	default:
		c.status = statusFail
		if c.detail == "" {
			c.detail = "failed; last log lines: " + tail()
		}
	}
	return c, res.Version
}

// samsaNode is the broker process the suite started.
type samsaNode struct {
	cmd  *exec.Cmd
	addr string
	// securityEnv tells the security scenarios' drivers the secured
	// listeners and their credentials.
	securityEnv []string
	logPath     string
	done        chan struct{}
	waitErr     error
}

func startSamsa(ctx context.Context, tmp string) (*samsaNode, error) {
	port, err := netport.Free()
	if err != nil {
		return nil, err
	}
	dataDir := filepath.Join(tmp, "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logPath := filepath.Join(tmp, "samsa.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	securityOverrides, securityEnv, err := securitySetup(tmp)
	if err != nil {
		return nil, err
	}
	listeners, listenerEnv, err := secureListenerSpecs()
	if err != nil {
		return nil, err
	}
	args := []string{"server",
		"--override", "listeners=" + strings.Join(append([]string{"PLAINTEXT://" + addr}, listeners...), ","),
		"--override", "log.dirs=" + dataDir,
		"--override", "auto.create.topics.enable=false",
	}
	// The metrics endpoint on a port of its own, so the suite runs beside
	// other nodes on this host.
	if metricsPort, err := netport.Free(); err == nil {
		args = append(args, "--override", fmt.Sprintf("metrics.listener=127.0.0.1:%d", metricsPort))
	}
	for _, o := range securityOverrides {
		args = append(args, "--override", o)
	}
	cmd := exec.Command(filepath.Join(tmp, "samsa"), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group; and it goes if the runner dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	n := &samsaNode{cmd: cmd, addr: addr, securityEnv: append(securityEnv, listenerEnv...), logPath: logPath, done: make(chan struct{})}
	go func() {
		n.waitErr = cmd.Wait()
		logFile.Close()
		close(n.done)
	}()
	logf("started samsa (pid %d) on %s", cmd.Process.Pid, addr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if n.exited() {
			return nil, fmt.Errorf("exited (%v): %s", n.waitErr, n.tail())
		}
		c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
		if err == nil {
			c.Close()
			return n, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			n.stop(5 * time.Second)
			return nil, fmt.Errorf("port %d did not answer within 30s: %s", port, n.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (n *samsaNode) exited() bool {
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

func (n *samsaNode) tail() string { return lastLines(n.logPath, 3) }

// stop sends SIGTERM and waits; past limit it kills.
func (n *samsaNode) stop(limit time.Duration) error {
	if n.exited() {
		return fmt.Errorf("samsa had already exited (%v): %s", n.waitErr, n.tail())
	}
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
		if n.waitErr != nil {
			return fmt.Errorf("samsa exited with %v after SIGTERM: %s", n.waitErr, n.tail())
		}
		return nil
	case <-time.After(limit):
		syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
		<-n.done
		return fmt.Errorf("samsa did not exit within %s of SIGTERM; killed", limit)
	}
}

// waitKafka waits until the broker answers a metadata request listing a
// broker.
func waitKafka(ctx context.Context, addr string, limit time.Duration) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
		bs, err := adm.ListBrokers(rctx)
		rcancel()
		if err == nil && len(bs) > 0 {
			return nil
		}
		if err == nil {
			err = errors.New("no brokers listed")
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func goBuild(out, pkg string) error {
	logf("go build -o %s %s", out, pkg)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, oneLine(string(b), 400))
	}
	return nil
}

func renderText(m map[string]map[string]cell, cls, scs map[string]bool) string {
	header := []string{"client"}
	for _, sc := range scenarios {
		if scs[sc] {
			header = append(header, sc)
		}
	}
	rows := [][]string{header}
	for _, cl := range clients {
		if !cls[cl.name] {
			continue
		}
		row := []string{cl.name}
		for _, sc := range scenarios {
			if scs[sc] {
				row = append(row, m[cl.name][sc].text())
			}
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(header))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
			} else {
				fmt.Fprintf(&b, "%-*s  ", widths[i], c)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// renderDetails lists what failed or does not apply, with the reason; cells
// with the same reason (a broker that never started) share one line.
func renderDetails(m map[string]map[string]cell, cls, scs map[string]bool, markdown bool) string {
	var b strings.Builder
	for _, want := range []string{statusFail, statusNA, statusNYS} {
		var order []string
		where := map[string][]string{}
		for _, cl := range clients {
			if !cls[cl.name] {
				continue
			}
			for _, sc := range scenarios {
				c, ok := m[cl.name][sc]
				if !ok || !scs[sc] || c.status != want {
					continue
				}
				detail := oneLine(c.detail, 600)
				if c.status == statusNYS {
					// Plain not-yet-supported cells say all in the matrix.
					if c.note == "" {
						continue
					}
					detail += " (" + c.note + ")"
				}
				if _, seen := where[detail]; !seen {
					order = append(order, detail)
				}
				where[detail] = append(where[detail], cl.name+"/"+sc)
			}
		}
		for _, detail := range order {
			cells := strings.Join(where[detail], ", ")
			if len(where[detail]) > 3 {
				cells = fmt.Sprintf("%d cells (%s, ...)", len(where[detail]), strings.Join(where[detail][:3], ", "))
			}
			if markdown {
				fmt.Fprintf(&b, "- **%s** — %s: %s\n", cells, want, mdEscape(detail))
			} else {
				fmt.Fprintf(&b, "%s %s: %s\n", want, cells, detail)
			}
		}
	}
	return b.String()
}

func renderMarkdown(m map[string]map[string]cell, cls, scs map[string]bool, versions map[string]string, broker, brokerNote string, elapsed time.Duration, summary string) string {
	var b strings.Builder
	b.WriteString("# Client compatibility results\n\n")
	fmt.Fprintf(&b, "Written by `make compat` (compat/README.md) on %s against %s; the suite took %s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), broker, elapsed.Round(time.Second))
	b.WriteString("| client |")
	sep := "|---|"
	for _, sc := range scenarios {
		if scs[sc] {
			fmt.Fprintf(&b, " %s |", sc)
			sep += "---|"
		}
	}
	b.WriteString("\n" + sep + "\n")
	for _, cl := range clients {
		if !cls[cl.name] {
			continue
		}
		name := cl.name
		if v := versions[cl.name]; v != "" {
			name += " " + v
		}
		fmt.Fprintf(&b, "| %s |", mdEscape(name))
		for _, sc := range scenarios {
			if !scs[sc] {
				continue
			}
			c := m[cl.name][sc]
			t := c.text()
			if c.status == statusFail {
				t = "**FAIL**"
			}
			fmt.Fprintf(&b, " %s |", mdEscape(t))
		}
		b.WriteString("\n")
	}
	if brokerNote != "" {
		b.WriteString("\n" + mdEscape(brokerNote) + "\n")
	}
	if d := renderDetails(m, cls, scs, true); d != "" {
		b.WriteString("\n## Details\n\n" + d)
	}
	b.WriteString("\n" + summary + "\n")
	return b.String()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func clientNames() []string {
	var out []string
	for _, c := range clients {
		out = append(out, c.name)
	}
	return out
}

// filterList turns "a,b" into a set, checking names; empty means all.
func filterList(spec string, all []string) map[string]bool {
	set := map[string]bool{}
	if strings.TrimSpace(spec) == "" {
		for _, a := range all {
			set[a] = true
		}
		return set
	}
	known := map[string]bool{}
	for _, a := range all {
		known[a] = true
	}
	for _, s := range strings.Split(spec, ",") {
		s = strings.TrimSpace(s)
		if !known[s] {
			names := append([]string(nil), all...)
			sort.Strings(names)
			fmt.Fprintf(os.Stderr, "compat: unknown name %q (known: %s)\n", s, strings.Join(names, ", "))
			os.Exit(2)
		}
		set[s] = true
	}
	return set
}

func lastLines(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return oneLine(strings.Join(lines, " | "), 600)
}

func oneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return s
}

func randomID() string {
	b := make([]byte, 3)
	rand.Read(b)
	return hex.EncodeToString(b)
}

var logMu sync.Mutex

func logf(format string, args ...any) {
	logMu.Lock()
	defer logMu.Unlock()
	fmt.Fprintf(os.Stderr, "compat %s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "compat: not a number: %q\n", s)
		os.Exit(2)
	}
	return n
}
