package clustertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A Network is a private IPv4 network for one test: a Linux bridge in the
// test's own network namespace and, per node, a network namespace joined to
// the bridge by a veth pair.
//
//	test process ── bridge samsabr<S> 10.77.<S>.254/24
//	                  ├─ samsa<S>h1 ══ veth ══ samsa<S>p1 10.77.<S>.1 in namespace samsa<S>n1
//	                  ├─ samsa<S>h2 ══ veth ══ samsa<S>p2 10.77.<S>.2 in namespace samsa<S>n2
//	                  └─ ...
//
// S is a subnet number claimed by creating the bridge (creation fails when
// the name exists, so two test processes never share one). The bridge's
// alias names the owning process; a later test removes what a dead owner
// left behind. Isolate sets a node's host-side veth down, which cuts the
// node off from its peers and from the test process, both ways; Heal sets
// it up again. A node still reaches its own address from inside its
// namespace, so DialInside can talk to an isolated node as a client on its
// side of the partition would.
//
// It needs root (CAP_NET_ADMIN) and iproute2's ip; NewNetwork skips the
// test when either is missing, or fails it when SAMSA_REQUIRE_NETNS=1 (as
// CI sets, so the tests cannot be skipped there unnoticed).
type Network struct {
	t      testing.TB
	ip     string // path of the ip binary
	subnet int
	bridge string

	mu struct {
		sync.Mutex
		// members are the namespaces made so far, by node number.
		members map[int]string
	}
}

const (
	// networkSubnetsMax bounds the subnets 10.77.0.0/24 .. 10.77.249.0/24
	// tried for a bridge.
	networkSubnetsMax = 250
	// networkAliasPrefix marks a bridge made by this package; the owner's
	// pid follows.
	networkAliasPrefix = "samsa-clustertest pid="
	// networkNodePort and networkControllerPort are the ports every node
	// listens on inside its own namespace.
	networkNodePort       = 9092
	networkControllerPort = 9093
)

// NewNetwork makes a bridge on a free subnet, removing what dead test
// processes left, and tears everything down in t.Cleanup.
func NewNetwork(t testing.TB) *Network {
	t.Helper()
	unavailable := func(format string, args ...any) {
		t.Helper()
		reason := fmt.Sprintf(format, args...)
		if os.Getenv("SAMSA_REQUIRE_NETNS") == "1" {
			t.Fatalf("network namespaces required (SAMSA_REQUIRE_NETNS=1) but unavailable: %s", reason)
		}
		t.Skipf("network namespaces unavailable: %s", reason)
	}
	if runtime.GOOS != "linux" {
		unavailable("not Linux")
	}
	if os.Geteuid() != 0 {
		unavailable("not root")
	}
	ip, err := lookupIP()
	if err != nil {
		unavailable("no ip command (iproute2): %v", err)
	}
	nw := &Network{t: t, ip: ip}
	nw.mu.members = map[int]string{}
	nw.removeStale()
	for s := range networkSubnetsMax {
		name := "samsabr" + strconv.Itoa(s)
		out, err := exec.Command(ip, "link", "add", name, "type", "bridge").CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "File exists") {
				continue
			}
			unavailable("ip link add %s type bridge: %v: %s", name, err, strings.TrimSpace(string(out)))
		}
		nw.subnet, nw.bridge = s, name
		break
	}
	if nw.bridge == "" {
		t.Fatalf("no free subnet for a test network among 10.77.0-%d.0/24", networkSubnetsMax-1)
	}
	t.Cleanup(nw.teardown)
	nw.run("link", "set", nw.bridge, "alias", networkAliasPrefix+strconv.Itoa(os.Getpid()))
	nw.run("addr", "add", nw.hostAddr(254)+"/24", "dev", nw.bridge)
	nw.run("link", "set", nw.bridge, "up")
	return nw
}

// lookupIP finds iproute2's ip in PATH or where distributions put it (a
// user's PATH often lacks the sbin directories).
func lookupIP() (string, error) {
	path, err := exec.LookPath("ip")
	if err == nil {
		return path, nil
	}
	for _, p := range []string{"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"} {
		if _, statErr := os.Stat(p); statErr == nil {
			return p, nil
		}
	}
	return "", err
}

func (nw *Network) hostAddr(i int) string { return fmt.Sprintf("10.77.%d.%d", nw.subnet, i) }

func (nw *Network) namespace(i int) string { return fmt.Sprintf("samsa%dn%d", nw.subnet, i) }

func (nw *Network) hostVeth(i int) string { return fmt.Sprintf("samsa%dh%d", nw.subnet, i) }

// run runs ip with args, failing the test when it fails.
func (nw *Network) run(args ...string) {
	nw.t.Helper()
	if out, err := exec.Command(nw.ip, args...).CombinedOutput(); err != nil {
		nw.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
}

// AddMember makes the namespace of node i (1..253) with address
// 10.77.<S>.i on the bridge and returns the namespace's name and the
// address.
func (nw *Network) AddMember(i int) (namespace, addr string) {
	nw.t.Helper()
	if i < 1 || i > 253 {
		nw.t.Fatalf("network member %d out of 1..253", i)
	}
	ns, host, peer := nw.namespace(i), nw.hostVeth(i), fmt.Sprintf("samsa%dp%d", nw.subnet, i)
	nw.run("netns", "add", ns)
	nw.mu.Lock()
	nw.mu.members[i] = ns
	nw.mu.Unlock()
	nw.run("link", "add", host, "type", "veth", "peer", "name", peer)
	nw.run("link", "set", peer, "netns", ns)
	nw.run("-n", ns, "addr", "add", nw.hostAddr(i)+"/24", "dev", peer)
	nw.run("-n", ns, "link", "set", peer, "up")
	nw.run("-n", ns, "link", "set", "lo", "up")
	nw.run("link", "set", host, "master", nw.bridge)
	nw.run("link", "set", host, "up")
	return ns, nw.hostAddr(i)
}

// Isolate cuts member i off from the bridge, in both directions.
func (nw *Network) Isolate(i int) { nw.t.Helper(); nw.run("link", "set", nw.hostVeth(i), "down") }

// Heal joins member i to the bridge again.
func (nw *Network) Heal(i int) { nw.t.Helper(); nw.run("link", "set", nw.hostVeth(i), "up") }

// teardown kills what still runs in the namespaces and removes them, the
// veths and the bridge. It runs in t.Cleanup, also after a failure.
func (nw *Network) teardown() {
	nw.mu.Lock()
	members := nw.mu.members
	nw.mu.members = map[int]string{}
	nw.mu.Unlock()
	for i, ns := range members {
		killNamespacePids(nw.ip, ns)
		exec.Command(nw.ip, "link", "del", nw.hostVeth(i)).Run()
		if out, err := exec.Command(nw.ip, "netns", "del", ns).CombinedOutput(); err != nil {
			nw.t.Logf("ip netns del %s: %v: %s", ns, err, out)
		}
	}
	if out, err := exec.Command(nw.ip, "link", "del", nw.bridge).CombinedOutput(); err != nil {
		nw.t.Logf("ip link del %s: %v: %s", nw.bridge, err, out)
	}
}

// removeStale removes the bridges, veths and namespaces of test processes
// that died without cleaning up (a timeout's panic, a SIGKILL), and the
// server processes they left running in those namespaces.
func (nw *Network) removeStale() {
	links, _ := os.ReadDir("/sys/class/net")
	live := map[int]bool{}
	for _, l := range links {
		s, ok := strings.CutPrefix(l.Name(), "samsabr")
		subnet, err := strconv.Atoi(s)
		if !ok || err != nil {
			continue
		}
		alias, _ := os.ReadFile("/sys/class/net/" + l.Name() + "/ifalias")
		pidText, ok := strings.CutPrefix(strings.TrimSpace(string(alias)), networkAliasPrefix)
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || processAlive(pid) {
			// Still owned, or being set up right now.
			live[subnet] = true
			continue
		}
		nw.t.Logf("removing the test network of dead process %d: bridge %s", pid, l.Name())
		live[subnet] = false
	}
	namespaces, _ := os.ReadDir("/var/run/netns")
	for _, e := range namespaces {
		var subnet, member int
		if n, _ := fmt.Sscanf(e.Name(), "samsa%dn%d", &subnet, &member); n != 2 || e.Name() != fmt.Sprintf("samsa%dn%d", subnet, member) {
			continue
		}
		// A namespace is made after its bridge and removed before it, so
		// one without a bridge is stale too, unless the bridge was made
		// since the links were read.
		if alive, known := live[subnet]; alive || !known && bridgeExists(subnet) {
			continue
		}
		killNamespacePids(nw.ip, e.Name())
		exec.Command(nw.ip, "link", "del", fmt.Sprintf("samsa%dh%d", subnet, member)).Run()
		exec.Command(nw.ip, "netns", "del", e.Name()).Run()
	}
	for subnet, alive := range live {
		if !alive {
			// The pid was read before: the bridge is the dead owner's.
			exec.Command(nw.ip, "link", "del", "samsabr"+strconv.Itoa(subnet)).Run()
		}
	}
}

func bridgeExists(subnet int) bool {
	_, err := os.Stat("/sys/class/net/samsabr" + strconv.Itoa(subnet))
	return err == nil
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// killNamespacePids SIGKILLs the processes running in namespace ns: only
// servers this package started there.
func killNamespacePids(ip, ns string) {
	out, err := exec.Command(ip, "netns", "pids", ns).Output()
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// dialInNamespace dials addr from inside network namespace ns: the socket
// is made by a thread switched into ns, and stays there after the thread
// switches back.
func dialInNamespace(ctx context.Context, ns, network, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		own, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("open own network namespace: %w", err)}
			return
		}
		defer unix.Close(own)
		target, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("open network namespace %s: %w", ns, err)}
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("enter network namespace %s: %w", ns, err)}
			return
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		// A thread that cannot switch back stays locked, so the runtime
		// ends it with this goroutine instead of reusing it.
		if unix.Setns(own, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{conn, err}
	}()
	r := <-done
	return r.conn, r.err
}

// StartNetworkCluster is StartCluster with each node in its own network
// namespace on a private Network (see there): node i listens on
// 10.77.<S>.i, so Isolate and Heal can cut it off and join it again. It
// skips the test where namespaces are unavailable.
func StartNetworkCluster(t testing.TB, n int, overrides ...string) *Cluster {
	t.Helper()
	nw := NewNetwork(t)
	c := &Cluster{Network: nw}
	voters := make([]string, n)
	for i := range n {
		voters[i] = fmt.Sprintf("%d@%s:%d", i+1, nw.hostAddr(i+1), networkControllerPort)
	}
	for i := range n {
		ns, host := nw.AddMember(i + 1)
		node := &Node{t: t, Dir: t.TempDir(), Port: networkNodePort, Host: host, Namespace: ns, ipCommand: nw.ip}
		node.overrides = append([]string{
			"node.id=" + strconv.Itoa(i+1),
			"process.roles=broker,controller",
			fmt.Sprintf("listeners=PLAINTEXT://%s:%d,CONTROLLER://%s:%d", host, networkNodePort, host, networkControllerPort),
			fmt.Sprintf("advertised.listeners=PLAINTEXT://%s:%d", host, networkNodePort),
			"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
			"controller.listener.names=CONTROLLER",
			"controller.quorum.voters=" + strings.Join(voters, ","),
			"controller.quorum.election.timeout.ms=500",
			"broker.heartbeat.interval.ms=300",
			"broker.session.timeout.ms=3000",
		}, overrides...)
		c.Nodes = append(c.Nodes, node)
		t.Cleanup(node.Stop)
	}
	// Cleanups run last-registered first: heal every node before they are
	// stopped, so a test failing while one is cut off still shuts down
	// gracefully and quickly.
	t.Cleanup(func() {
		for i := range c.Nodes {
			exec.Command(nw.ip, "link", "set", nw.hostVeth(i+1), "up").Run()
		}
	})
	startTogether(c.Nodes)
	c.waitForBrokers(t, n)
	return c
}

// Isolate cuts node off the cluster's network: no packet reaches it or
// leaves it, from its peers or the test, until Heal.
func (c *Cluster) Isolate(node *Node) {
	c.Network.t.Helper()
	c.Network.Isolate(c.memberOf(node))
}

// Heal joins an isolated node to the cluster's network again.
func (c *Cluster) Heal(node *Node) {
	c.Network.t.Helper()
	c.Network.Heal(c.memberOf(node))
}

func (c *Cluster) memberOf(node *Node) int {
	if c.Network == nil {
		node.t.Fatal("Isolate and Heal need a cluster from StartNetworkCluster")
	}
	for i, n := range c.Nodes {
		if n == node {
			return i + 1
		}
	}
	node.t.Fatal("node is not in this cluster")
	return 0
}

// DialInside dials addr from inside the node's network namespace, as a
// client on the node's side of a partition would; it reaches the node
// itself also while it is isolated. Use it as a kgo.Dialer.
func (n *Node) DialInside(ctx context.Context, network, addr string) (net.Conn, error) {
	if n.Namespace == "" {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return dialInNamespace(ctx, n.Namespace, network, addr)
}
