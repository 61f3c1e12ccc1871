package kafkaref

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	// Version is the Apache Kafka release the pom resolves.
	Version = "4.4.0"

	// serverMainClass is what kafka-server-start.sh runs, and
	// storageMainClass what kafka-storage.sh runs.
	serverMainClass  = "kafka.Kafka"
	storageMainClass = "kafka.tools.StorageTool"

	// defaultStartTimeout bounds formatting plus the wait until the broker
	// answers Metadata with itself; a cold JVM on two busy cores takes
	// tens of seconds.
	defaultStartTimeout = 180 * time.Second
	// defaultStopTimeout bounds a controlled shutdown after SIGTERM before
	// the JVM is killed.
	defaultStopTimeout = 60 * time.Second
	// readyPollInterval is the pause between readiness probes.
	readyPollInterval = 250 * time.Millisecond
	// outputTailBytes bounds what is kept of the JVM's output.
	outputTailBytes = 64 << 10
)

// ServerHeapOptions are kafka-server-start.sh's KAFKA_HEAP_OPTS.
var ServerHeapOptions = []string{"-Xmx1G", "-Xms1G"}

// ToolHeapOptions are the KAFKA_HEAP_OPTS kafka-producer-perf-test.sh and
// kafka-consumer-perf-test.sh set.
var ToolHeapOptions = []string{"-Xmx512M"}

// jvmPerformanceOptions are kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS.
var jvmPerformanceOptions = []string{
	"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
	"-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
}

// singleNodeOverrides are the settings Kafka's own config/server.properties
// changes from the defaults for a single node: internal topics with one
// replica (the default of 3 cannot be placed on one broker) and no initial
// rebalance delay.
var singleNodeOverrides = []string{
	"offsets.topic.replication.factor=1",
	"transaction.state.log.replication.factor=1",
	"transaction.state.log.min.isr=1",
	"share.coordinator.state.topic.replication.factor=1",
	"share.coordinator.state.topic.min.isr=1",
	"group.initial.rebalance.delay.ms=0",
}

// Config says how to start a node.
type Config struct {
	// Classpath is the jar list (see Classpath).
	Classpath string
	// Dir is the node's directory; it is created if missing and must
	// otherwise be empty. log.dirs is Dir/data.
	Dir string
	// Overrides are extra server.properties lines, key=value, applied
	// after the single-node settings.
	Overrides []string
	// StartTimeout and StopTimeout default to 180 s and 60 s.
	StartTimeout time.Duration
	StopTimeout  time.Duration
}

// Node is a running Kafka broker and controller in one JVM.
type Node struct {
	// Addr is the PLAINTEXT listener, host:port.
	Addr string
	// ControllerAddr is the CONTROLLER listener.
	ControllerAddr string
	// ClusterID is the id the storage was formatted with.
	ClusterID string

	cmd         *exec.Cmd
	output      *tailBuffer
	exited      chan struct{}
	waitErr     error
	stopTimeout time.Duration
}

// Start formats a fresh node's storage, starts the JVM and waits until the
// broker lists itself in a Metadata response.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Classpath == "" || cfg.Dir == "" {
		return nil, errors.New("kafkaref: Classpath and Dir are required")
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = defaultStartTimeout
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = defaultStopTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()

	ports, err := freeLoopbackPorts(2)
	if err != nil {
		return nil, err
	}
	node := &Node{
		Addr:           net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		ControllerAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		ClusterID:      newClusterID(),
		output:         &tailBuffer{limit: outputTailBytes},
		exited:         make(chan struct{}),
		stopTimeout:    cfg.StopTimeout,
	}
	dataDir := filepath.Join(cfg.Dir, "data")
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	propertiesPath := filepath.Join(cfg.Dir, "server.properties")
	if err := os.WriteFile(propertiesPath, []byte(node.serverProperties(dataDir, cfg.Overrides)), 0o644); err != nil {
		return nil, err
	}

	format := Command(ctx, cfg.Classpath, nil, storageMainClass,
		"format", "--cluster-id", node.ClusterID, "--config", propertiesPath)
	formatOutput := &tailBuffer{limit: outputTailBytes}
	format.Stdout, format.Stderr = formatOutput, formatOutput
	if err := format.Run(); err != nil {
		return nil, fmt.Errorf("kafkaref: kafka-storage format: %w: %s", err, formatOutput.String())
	}

	node.cmd = Command(context.Background(), cfg.Classpath, ServerHeapOptions, serverMainClass, propertiesPath)
	node.cmd.Stdout, node.cmd.Stderr = node.output, node.output
	if err := node.cmd.Start(); err != nil {
		return nil, fmt.Errorf("kafkaref: starting the JVM: %w", err)
	}
	go func() {
		node.waitErr = node.cmd.Wait()
		close(node.exited)
	}()
	if err := node.waitReady(ctx); err != nil {
		node.kill()
		return nil, fmt.Errorf("kafkaref: %w: %s", err, node.output.String())
	}
	return node, nil
}

// serverProperties is the generated server.properties.
func (n *Node) serverProperties(dataDir string, overrides []string) string {
	lines := []string{
		"# Generated: Apache Kafka " + Version + " as a single combined-role node.",
		"process.roles=broker,controller",
		"node.id=1",
		"controller.quorum.voters=1@" + n.ControllerAddr,
		"listeners=PLAINTEXT://" + n.Addr + ",CONTROLLER://" + n.ControllerAddr,
		"advertised.listeners=PLAINTEXT://" + n.Addr,
		"controller.listener.names=CONTROLLER",
		"inter.broker.listener.name=PLAINTEXT",
		"listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"log.dirs=" + dataDir,
	}
	lines = append(lines, singleNodeOverrides...)
	lines = append(lines, overrides...)
	return strings.Join(lines, "\n") + "\n"
}

// waitReady polls the broker with Metadata until it lists a broker and a
// controller, the JVM exits or ctx ends.
func (n *Node) waitReady(ctx context.Context) error {
	client, err := kgo.NewClient(kgo.SeedBrokers(n.Addr), kgo.RequestRetries(0),
		kgo.RequestTimeoutOverhead(2*time.Second), kgo.DialTimeout(2*time.Second))
	if err != nil {
		return err
	}
	defer client.Close()
	var lastErr error
	for {
		probeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		request := kmsg.NewPtrMetadataRequest()
		response, err := request.RequestWith(probeCtx, client)
		cancel()
		if err == nil && len(response.Brokers) > 0 && response.ControllerID >= 0 {
			return nil
		}
		lastErr = err
		select {
		case <-n.exited:
			return fmt.Errorf("the JVM exited before the broker was ready: %v", n.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("broker not ready: %w (last probe: %v)", ctx.Err(), lastErr)
		case <-time.After(readyPollInterval):
		}
	}
}

// Pid is the JVM's process id, for /proc figures and CPU affinity.
func (n *Node) Pid() int { return n.cmd.Process.Pid }

// Output is the tail of what the JVM printed.
func (n *Node) Output() string { return n.output.String() }

// Stop asks the JVM to shut down (SIGTERM: Kafka's controlled shutdown)
// and kills it if it has not exited within the stop timeout. The node's
// directory is left for the caller to remove.
func (n *Node) Stop() error {
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
		// The JVM exits with 143 (128+SIGTERM) after a clean shutdown hook.
		var exitErr *exec.ExitError
		if n.waitErr != nil && !(errors.As(n.waitErr, &exitErr) && exitErr.ExitCode() == 143) {
			return fmt.Errorf("kafkaref: JVM exit: %w: %s", n.waitErr, n.output.String())
		}
		return nil
	case <-time.After(n.stopTimeout):
		n.kill()
		return fmt.Errorf("kafkaref: the JVM did not stop within %s", n.stopTimeout)
	}
}

func (n *Node) kill() {
	_ = n.cmd.Process.Kill()
	<-n.exited
}

// Command is a JVM running mainClass from classpath with the given heap
// options and kafka-run-class.sh's performance options, as Kafka's shell
// scripts run their tools.
func Command(ctx context.Context, classpath string, heapOptions []string, mainClass string, args ...string) *exec.Cmd {
	jvmArgs := append([]string{}, heapOptions...)
	jvmArgs = append(jvmArgs, jvmPerformanceOptions...)
	jvmArgs = append(jvmArgs, "-cp", classpath, mainClass)
	jvmArgs = append(jvmArgs, args...)
	return exec.CommandContext(ctx, javaBinary(), jvmArgs...)
}

// javaBinary is $JAVA_HOME/bin/java if JAVA_HOME is set, as
// kafka-run-class.sh chooses, else java from PATH.
func javaBinary() string {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		return filepath.Join(home, "bin", "java")
	}
	return "java"
}

// newClusterID is a random Kafka Uuid in its text form (22 characters of
// URL-safe base64), as `kafka-storage random-uuid` prints. Kafka avoids
// ids whose text starts with '-', which its command lines would take for
// a flag.
func newClusterID() string {
	for {
		var raw [16]byte
		_, _ = rand.Read(raw[:])
		id := base64.RawURLEncoding.EncodeToString(raw[:])
		if id[0] != '-' {
			return id
		}
	}
}

// freeLoopbackPorts returns count distinct ports that were free on
// 127.0.0.1 a moment ago.
func freeLoopbackPorts(count int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	var ports []int
	for range count {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	mu struct {
		sync.Mutex
		data []byte
	}
	limit int
}

var _ io.Writer = (*tailBuffer)(nil)

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.data = append(t.mu.data, p...)
	if excess := len(t.mu.data) - t.limit; excess > 0 {
		t.mu.data = append(t.mu.data[:0], t.mu.data[excess:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.mu.data)
}
