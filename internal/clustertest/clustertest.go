// Package clustertest starts real samsa server processes for tests, kills
// (SIGKILL), pauses (SIGSTOP), resumes and restarts them, and waits on
// conditions with deadlines. Each node gets its own data dir and fixed
// loopback ports, so a restarted node comes back where clients and peers
// expect it. StartNetworkCluster puts each node in its own Linux network
// namespace instead, so a test can cut one off the network and heal it
// (see Network).
package clustertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/netport"
)

var (
	buildOnce   sync.Once
	builtBinary string
	buildErr    error
)

// Binary builds ./cmd/samsa once per test process and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "samsa-clustertest-")
		if err != nil {
			buildErr = err
			return
		}
		builtBinary = filepath.Join(dir, "samsa")
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		cmd := exec.Command("go", "build", "-o", builtBinary, "./cmd/samsa")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/samsa: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBinary
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := netport.Free()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Node is one samsa server process.
type Node struct {
	t    testing.TB
	Dir  string
	Port int
	// ControllerPort is the CONTROLLER listener's port of a voter started
	// by StartCluster, 0 for other nodes.
	ControllerPort int
	overrides      []string
	// Host is the address the node listens on, 127.0.0.1 when empty;
	// Namespace the network namespace it runs in (StartNetworkCluster),
	// empty for the test's own.
	Host      string
	Namespace string
	ipCommand string // iproute2's ip, to run the node in Namespace

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// StartNode starts a node with its own data dir and port; overrides are
// extra --override key=value settings.
func StartNode(t testing.TB, overrides ...string) *Node {
	t.Helper()
	n := &Node{t: t, Dir: t.TempDir(), Port: FreePort(t), overrides: overrides}
	n.Start()
	t.Cleanup(n.Stop)
	return n
}

// Addr is the node's client address.
func (n *Node) Addr() string { return net.JoinHostPort(n.host(), strconv.Itoa(n.Port)) }

func (n *Node) host() string {
	if n.Host == "" {
		return "127.0.0.1"
	}
	return n.Host
}

// Start starts the process (again) and waits until it accepts connections.
func (n *Node) Start() {
	n.t.Helper()
	// Overrides given later win, so a cluster node's own listeners replace
	// the default single listener.
	args := []string{"server",
		"--override", "listeners=PLAINTEXT://" + n.Addr(),
		"--override", "log.dirs=" + filepath.Join(n.Dir, "data"),
		"--override", "metrics.listener=",
	}
	for _, o := range n.overrides {
		args = append(args, "--override", o)
	}
	cmd := exec.Command(Binary(n.t), args...)
	if n.Namespace != "" {
		cmd = exec.Command(n.ipCommand, append([]string{"netns", "exec", n.Namespace, Binary(n.t)}, args...)...)
	}
	logFile, err := os.OpenFile(filepath.Join(n.Dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		n.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		logFile.Close()
		close(done)
	}()
	n.mu.Lock()
	n.cmd, n.done = cmd, done
	n.mu.Unlock()
	WaitFor(n.t, 30*time.Second, func() error {
		if err := n.exited(); err != nil {
			return err
		}
		c, err := net.DialTimeout("tcp", n.Addr(), time.Second)
		if err != nil {
			return err
		}
		c.Close()
		return nil
	})
}

// exited stops a WaitFor with the node's log once its process has exited.
func (n *Node) exited() error {
	n.mu.Lock()
	done := n.done
	n.mu.Unlock()
	select {
	case <-done:
		return errStopWaiting{fmt.Errorf("node %s exited:\n%s", n.Addr(), n.Log())}
	default:
		return nil
	}
}

// Kill sends SIGKILL and waits for the process to exit: a crash.
func (n *Node) Kill() { n.signalAndWait(syscall.SIGKILL) }

// Stop sends SIGTERM and waits for a graceful exit (SIGKILL after 30 s).
func (n *Node) Stop() {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	n.mu.Lock()
	n.cmd = nil
	n.mu.Unlock()
}

// Pause stops the process (SIGSTOP) without killing it; Resume continues it.
func (n *Node) Pause()  { n.signal(syscall.SIGSTOP) }
func (n *Node) Resume() { n.signal(syscall.SIGCONT) }

// Restart kills the node and starts it again on the same dir and port.
func (n *Node) Restart() {
	n.t.Helper()
	n.Kill()
	n.Start()
}

func (n *Node) signal(sig syscall.Signal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		n.cmd.Process.Signal(sig)
	}
}

func (n *Node) signalAndWait(sig syscall.Signal) {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(sig)
	<-done
}

// Log returns what the node printed so far.
func (n *Node) Log() string {
	b, _ := os.ReadFile(filepath.Join(n.Dir, "server.log"))
	return string(b)
}

// LogLines calls fn for each line the node printed so far.
func (n *Node) LogLines(fn func(string)) {
	f, err := os.Open(filepath.Join(n.Dir, "server.log"))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fn(sc.Text())
	}
}

// errStopWaiting makes WaitFor fail at once.
type errStopWaiting struct{ error }

// WaitFor polls cond until it returns nil, failing the test with cond's
// last error after timeout.
func WaitFor(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		last = cond()
		if last == nil {
			return
		}
		var stop errStopWaiting
		if errors.As(last, &stop) {
			t.Fatal(stop.error)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("condition not met within %v: %v", timeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Cluster is a set of nodes forming one cluster: combined broker+controller
// nodes (StartCluster), or dedicated brokers and controllers
// (StartDedicatedCluster).
type Cluster struct {
	// Nodes are the nodes with the broker role: every node of a combined
	// cluster.
	Nodes []*Node
	// Controllers are the dedicated controllers (process.roles=controller);
	// empty for a combined cluster. A controller's Port is its controller
	// listener.
	Controllers []*Node
	// Network is the private network of a StartNetworkCluster, else nil.
	Network *Network
	// ClientOpts are the options a client of this cluster needs (TLS for
	// StartSSLCluster).
	ClientOpts []kgo.Opt
}

// StartCluster starts n nodes (node.id 1..n), combined brokers and
// controllers (with an even n the last is a broker only, see
// StartClusterEach), whose controllers
// form the quorum, and waits until every one accepts connections.
func StartCluster(t testing.TB, n int, overrides ...string) *Cluster {
	t.Helper()
	return StartClusterEach(t, n, nil, overrides...)
}

// StartClusterEach is StartCluster with, when each is not nil, overrides of
// each node's own (each(0) for node.id 1, ...), which win over the shared
// ones: a broker.rack per node, a metrics.listener per node.
func StartClusterEach(t testing.TB, n int, each func(i int) []string, overrides ...string) *Cluster {
	t.Helper()
	return startClusterEach(t, &Cluster{}, n, each, overrides...)
}

// startClusterEach is StartClusterEach into c, whose ClientOpts are used to
// wait for the brokers.
func startClusterEach(t testing.TB, c *Cluster, n int, each func(i int) []string, overrides ...string) *Cluster {
	t.Helper()
	// A quorum needs an odd number of voters: with an even n the last node
	// is a broker only (process.roles=broker), following the metadata log.
	voterCount := n
	if n%2 == 0 {
		voterCount = n - 1
	}
	controllerPorts := make([]int, voterCount)
	voters := ""
	for i := range voterCount {
		controllerPorts[i] = FreePort(t)
		if i > 0 {
			voters += ","
		}
		voters += fmt.Sprintf("%d@127.0.0.1:%d", i+1, controllerPorts[i])
	}
	for i := range n {
		node := &Node{t: t, Dir: t.TempDir(), Port: FreePort(t)}
		own := []string{
			"node.id=" + strconv.Itoa(i+1),
			"process.roles=broker",
			"listeners=PLAINTEXT://127.0.0.1:" + strconv.Itoa(node.Port),
		}
		if i < voterCount {
			node.ControllerPort = controllerPorts[i]
			own = []string{
				"node.id=" + strconv.Itoa(i+1),
				"process.roles=broker,controller",
				fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", node.Port, controllerPorts[i]),
				"advertised.listeners=PLAINTEXT://127.0.0.1:" + strconv.Itoa(node.Port),
			}
		}
		node.overrides = append(append(own, clusterOverrides(voters)...), overrides...)
		if each != nil {
			node.overrides = append(node.overrides, each(i)...)
		}
		c.Nodes = append(c.Nodes, node)
		t.Cleanup(node.Stop)
	}
	startTogether(c.Nodes)
	c.waitForBrokers(t, n)
	return c
}

// clusterOverrides are the settings every node of a test cluster shares:
// the quorum and timeouts tuned for tests.
func clusterOverrides(voters string) []string {
	return []string{
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"controller.listener.names=CONTROLLER",
		"controller.quorum.voters=" + voters,
		"controller.quorum.election.timeout.ms=500",
		"broker.heartbeat.interval.ms=300",
		"broker.session.timeout.ms=3000",
	}
}

// startTogether starts nodes at once: a node finishes starting only once a
// quorum elected a leader.
func startTogether(nodes []*Node) {
	var wg sync.WaitGroup
	for _, node := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			node.Start()
		}()
	}
	wg.Wait()
}

// StartDedicatedCluster starts controllers dedicated controllers (node.id
// 1..controllers, process.roles=controller) forming the quorum and brokers
// dedicated brokers (node.id controllers+1.., process.roles=broker) that
// follow the metadata log, and waits until every broker knows all brokers.
func StartDedicatedCluster(t testing.TB, controllers, brokers int, overrides ...string) *Cluster {
	t.Helper()
	return startDedicatedCluster(t, &Cluster{}, controllers, brokers, overrides...)
}

// startDedicatedCluster is StartDedicatedCluster into c, whose ClientOpts
// are used to wait for the brokers.
func startDedicatedCluster(t testing.TB, c *Cluster, controllers, brokers int, overrides ...string) *Cluster {
	t.Helper()
	voters := ""
	for i := range controllers {
		node := &Node{t: t, Dir: t.TempDir(), Port: FreePort(t)}
		if i > 0 {
			voters += ","
		}
		voters += fmt.Sprintf("%d@127.0.0.1:%d", i+1, node.Port)
		c.Controllers = append(c.Controllers, node)
	}
	for i, node := range c.Controllers {
		node.overrides = append(append([]string{
			"node.id=" + strconv.Itoa(i+1),
			"process.roles=controller",
			fmt.Sprintf("listeners=CONTROLLER://127.0.0.1:%d", node.Port),
		}, clusterOverrides(voters)...), overrides...)
		t.Cleanup(node.Stop)
	}
	for i := range brokers {
		node := &Node{t: t, Dir: t.TempDir(), Port: FreePort(t)}
		node.overrides = append(append([]string{
			"node.id=" + strconv.Itoa(controllers+i+1),
			"process.roles=broker",
		}, clusterOverrides(voters)...), overrides...)
		c.Nodes = append(c.Nodes, node)
		t.Cleanup(node.Stop)
	}
	startTogether(c.Controllers)
	startTogether(c.Nodes)
	c.waitForBrokers(t, brokers)
	return c
}

// waitForBrokers waits until every broker serves and knows n brokers, and
// logs the nodes' warnings when they do not.
func (c *Cluster) waitForBrokers(t testing.TB, n int) {
	t.Helper()
	defer func() {
		if t.Failed() {
			logNodeWarnings(t, c)
		}
	}()
	// A node's port accepts connections before the node has registered;
	// the cluster is ready once every node serves and knows all the others.
	for _, node := range c.Nodes {
		WaitFor(t, 60*time.Second, func() error {
			if err := node.exited(); err != nil {
				return err
			}
			brokers, err := brokerCount(node.Addr(), c.ClientOpts...)
			if err != nil {
				return err
			}
			if brokers != n {
				return fmt.Errorf("node %s knows %d of %d brokers", node.Addr(), brokers, n)
			}
			return nil
		})
	}
}

// brokerCount asks one node how many live brokers it knows.
func brokerCount(addr string, opts ...kgo.Opt) (int, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return 0, err
	}
	return len(resp.(*kmsg.MetadataResponse).Brokers), nil
}

// Addrs are the client addresses of every node.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr()
	}
	return out
}

// logNodeWarnings logs the distinct warnings and errors the nodes printed,
// to explain failed deliveries.
func logNodeWarnings(t testing.TB, c *Cluster) {
	for i, n := range c.Nodes {
		seen := map[string]int{}
		n.LogLines(func(line string) {
			if !strings.Contains(line, "WARN") && !strings.Contains(line, "ERROR") {
				return
			}
			key := line
			if j := strings.Index(line, "msg="); j >= 0 {
				key = line[j:]
				if len(key) > 160 {
					key = key[:160]
				}
			}
			seen[key]++
		})
		for k, v := range seen {
			t.Logf("node %d: %d x %s", i+1, v, k)
		}
	}
}
