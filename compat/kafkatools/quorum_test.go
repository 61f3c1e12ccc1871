package kafkatools

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/clustertest"
)

// TestKafkaMetadataQuorumAddRemoveController runs Kafka 4.4's own
// kafka-features and kafka-metadata-quorum against a three-node cluster:
// upgrade kraft.version to 1, add a controller that joined through
// controller.quorum.bootstrap.servers (add-controller reads its
// server.properties and meta.properties, as on a Kafka node), see it in
// describe, and remove it again (remove-controller with its directory id).
func TestKafkaMetadataQuorumAddRemoveController(t *testing.T) {
	needTools(t)
	c := clustertest.StartCluster(t, 3)
	b := strings.Join(c.Addrs(), ",")
	controllers := fmt.Sprintf("127.0.0.1:%d", c.Nodes[0].ControllerPort)

	mustContain(t, "kafka-features upgrade",
		mustTool(t, "", "kafka-features", "--bootstrap-server", b, "upgrade", "--feature", "kraft.version=1"),
		"kraft.version was upgraded to 1")
	features := mustTool(t, "", "kafka-features", "--bootstrap-server", b, "describe")
	if !regexp.MustCompile(`Feature: kraft.version\s+SupportedMinVersion: 0\s+SupportedMaxVersion: 1\s+FinalizedVersionLevel: 1\s`).MatchString(features) {
		t.Fatalf("kafka-features describe does not show kraft.version 1 finalized:\n%s", features)
	}

	joiner := clustertest.StartJoiningController(t, c, 4)
	props := filepath.Join(t.TempDir(), "controller.properties")
	os.WriteFile(props, []byte(strings.Join([]string{
		"node.id=4",
		"process.roles=controller",
		"controller.listener.names=CONTROLLER",
		"listeners=CONTROLLER://127.0.0.1:" + strconv.Itoa(joiner.Port),
		"log.dirs=" + filepath.Join(joiner.Dir, "data"),
	}, "\n")+"\n"), 0o644)
	meta, err := os.ReadFile(filepath.Join(joiner.Dir, "data", "meta.properties"))
	if err != nil {
		t.Fatal(err)
	}
	match := regexp.MustCompile(`directory.id=(\S+)`).FindSubmatch(meta)
	if match == nil {
		t.Fatalf("no directory.id in meta.properties:\n%s", meta)
	}
	directoryID := string(match[1])

	added := waitTool(t, 90*time.Second, func(out string) error {
		if !strings.Contains(out, "Added controller 4 with directory id "+directoryID+" and endpoints: CONTROLLER://127.0.0.1:"+strconv.Itoa(joiner.Port)) {
			return fmt.Errorf("not added yet")
		}
		return nil
	}, "kafka-metadata-quorum", "--bootstrap-controller", controllers, "--command-config", props, "add-controller")
	t.Logf("add-controller: %s", added)

	status := waitTool(t, 30*time.Second, func(out string) error {
		if !strings.Contains(out, `{"id": 4, "directoryId": "`+directoryID+`", "endpoints": ["CONTROLLER://127.0.0.1:`+strconv.Itoa(joiner.Port)+`"]}`) {
			return fmt.Errorf("voter 4 not listed")
		}
		return nil
	}, "kafka-metadata-quorum", "--bootstrap-server", b, "describe", "--status")
	mustContain(t, "describe --status", status, "CurrentVoters:", `{"id": 1`, `{"id": 2`, `{"id": 3`)
	replication := mustTool(t, "", "kafka-metadata-quorum", "--bootstrap-controller", controllers, "describe", "--replication")
	if rows := tableRows(replication, "NodeId"); len(rows) < 4 {
		t.Fatalf("describe --replication lists %d replicas, want 4 voters:\n%s", len(rows), replication)
	}

	mustContain(t, "remove-controller",
		mustTool(t, "", "kafka-metadata-quorum", "--bootstrap-controller", controllers, "remove-controller",
			"--controller-id", "4", "--controller-directory-id", directoryID),
		"Removed KRaft controller 4 with directory id "+directoryID)
	waitTool(t, 30*time.Second, func(out string) error {
		if strings.Contains(out, `"id": 4`) {
			return fmt.Errorf("voter 4 still listed")
		}
		return nil
	}, "kafka-metadata-quorum", "--bootstrap-server", b, "describe", "--status")
	joiner.Stop()
}
