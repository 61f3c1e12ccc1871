package server

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

// TestStreamsGroupInternalTopicsNeedCreate: the internal topics a streams
// heartbeat reports missing are created only where the principal has
// CREATE (on the topic or the cluster); the others come back as a
// MISSING_INTERNAL_TOPICS status "Unauthorized to CREATE on topics", as
// Kafka's KafkaApis answers.
func TestStreamsGroupInternalTopicsNeedCreate(t *testing.T) {
	principal := "User:ANONYMOUS"
	env := newMatrixEnv(t, principal)
	const changelog = "authz-app-changelog"
	topic := func(name string, op authz.Operation) authz.Binding {
		return allow(principal, authz.ResourceTopic, name, op)
	}
	base := []authz.Binding{
		allow(principal, authz.ResourceGroup, matrixGroup, authz.OpRead),
		topic(matrixTopic, authz.OpDescribe), topic(changelog, authz.OpDescribe),
	}
	heartbeat := func() *kmsg.StreamsGroupHeartbeatResponse {
		req := matrixStreamsHeartbeat().(*kmsg.StreamsGroupHeartbeatRequest)
		req.Topology.Subtopologies[0].StateChangelogTopics = []kmsg.TopicInfo{{Topic: changelog, ReplicationFactor: 1}}
		return env.send(req).(*kmsg.StreamsGroupHeartbeatResponse)
	}
	// FindCoordinator (DESCRIBE on the group) creates __consumer_offsets;
	// the heartbeat retries while the group's partition loads.
	ctx := testContext(t)
	adm := env.tn.admin()
	env.setACLs(append(base, allow(principal, authz.ResourceGroup, matrixGroup, authz.OpDescribe)))
	adm.FindGroupCoordinators(ctx, matrixGroup)
	env.setACLs(base)
	var resp *kmsg.StreamsGroupHeartbeatResponse
	eventually(t, 20*time.Second, "the group coordinator is loaded", func() bool {
		resp = heartbeat()
		return resp.ErrorCode != kerr.NotCoordinator.Code && resp.ErrorCode != kerr.CoordinatorLoadInProgress.Code && resp.ErrorCode != kerr.CoordinatorNotAvailable.Code
	})
	var detail []string
	for _, s := range resp.Status {
		if s.StatusCode == 3 {
			detail = append(detail, s.StatusDetail)
		}
	}
	if resp.ErrorCode != 0 || !strings.Contains(strings.Join(detail, " "), "Unauthorized to CREATE on topics "+changelog+".") {
		t.Fatalf("without CREATE: %+v", resp)
	}
	if topics, err := adm.ListTopics(ctx, changelog); err != nil || topics.Has(changelog) {
		t.Fatalf("created without CREATE: %v %v", topics, err)
	}

	env.setACLs(append(base, topic(changelog, authz.OpCreate)))
	if resp := heartbeat(); resp.ErrorCode != 0 {
		t.Fatalf("with CREATE: %+v", resp)
	} else {
		for _, st := range resp.Status {
			if strings.Contains(st.StatusDetail, "Unauthorized") {
				t.Fatalf("with CREATE: %+v", resp.Status)
			}
		}
	}
	eventually(t, 10*time.Second, "the changelog is created", func() bool {
		topics, err := adm.ListTopics(ctx, changelog)
		return err == nil && topics.Has(changelog)
	})
}
