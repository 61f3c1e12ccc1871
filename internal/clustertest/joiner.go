package clustertest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// StartJoiningController starts a dedicated controller (process.roles=
// controller) with node.id id that joins the running quorum of c through
// controller.quorum.bootstrap.servers (KIP-853): it waits as an observer
// until AddRaftVoter adds it. Its Port is its controller listener.
func StartJoiningController(t testing.TB, c *Cluster, id int32, overrides ...string) *Node {
	t.Helper()
	var bootstrap []string
	for _, n := range c.Nodes {
		if n.ControllerPort != 0 {
			bootstrap = append(bootstrap, fmt.Sprintf("127.0.0.1:%d", n.ControllerPort))
		}
	}
	for _, n := range c.Controllers {
		bootstrap = append(bootstrap, fmt.Sprintf("127.0.0.1:%d", n.Port))
	}
	node := &Node{t: t, Dir: t.TempDir(), Port: FreePort(t)}
	node.overrides = append([]string{
		"node.id=" + strconv.Itoa(int(id)),
		"process.roles=controller",
		fmt.Sprintf("listeners=CONTROLLER://127.0.0.1:%d", node.Port),
		"listener.security.protocol.map=CONTROLLER:PLAINTEXT",
		"controller.listener.names=CONTROLLER",
		"controller.quorum.bootstrap.servers=" + strings.Join(bootstrap, ","),
		"controller.quorum.election.timeout.ms=500",
	}, overrides...)
	t.Cleanup(node.Stop)
	node.Start()
	return node
}
