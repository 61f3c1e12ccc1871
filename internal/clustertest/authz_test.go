package clustertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestACLsOnEveryBroker: on a three-node cluster with the authorizer on,
// an ACL created through a node that is not the active controller is
// forwarded, committed to the metadata log and enforced by every broker.
// allow.everyone.if.no.acl.found keeps the cluster resource (and so the
// brokers' own requests, as User:ANONYMOUS on plaintext) open; a DENY on one
// topic closes that topic on every node while another topic stays open.
func TestACLsOnEveryBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	c := StartCluster(t, 3, "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"allow.everyone.if.no.acl.found=true")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	for _, topic := range []string{"locked", "open"} {
		if _, err := adm.CreateTopic(ctx, 3, 3, nil, topic); err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	// Create the DENY through every node in turn, so at least one forwards.
	for i, n := range c.Nodes {
		cl := newClient(t, []string{n.Addr()}, kgo.RequestRetries(0))
		req := kmsg.NewPtrCreateACLsRequest()
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, "locked", kmsg.ACLResourcePatternTypeLiteral
		cr.Principal, cr.Host = "User:ANONYMOUS", "*"
		cr.Operation, cr.PermissionType = kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeDeny
		if i > 0 {
			cr.Principal = fmt.Sprintf("User:other-%d", i)
		}
		req.Creations = append(req.Creations, cr)
		resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
		if err != nil {
			t.Fatalf("CreateAcls on node %d: %v", i+1, err)
		}
		if err := kerr.ErrorForCode(resp.Results[0].ErrorCode); err != nil {
			t.Fatalf("CreateAcls on node %d: %v", i+1, err)
		}
	}
	// Every node lists all three, and every partition leader refuses the
	// write to "locked".
	for i, n := range c.Nodes {
		cl := newClient(t, []string{n.Addr()})
		WaitFor(t, 30*time.Second, func() error {
			req := kmsg.NewPtrDescribeACLsRequest()
			req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
			req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
			resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
			if err != nil {
				return err
			}
			if len(resp.Resources) != 1 || len(resp.Resources[0].ACLs) != 3 {
				return fmt.Errorf("node %d describes %+v", i+1, resp.Resources)
			}
			return nil
		})
	}
	producer := newClient(t, c.Addrs(), kgo.RecordRetries(2), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(3) {
		err := producer.ProduceSync(ctx, &kgo.Record{Topic: "locked", Partition: p, Value: []byte("x")}).FirstErr()
		if err == nil || !isTopicAuthorizationFailed(err) {
			t.Fatalf("produce to locked/%d: %v, want TOPIC_AUTHORIZATION_FAILED", p, err)
		}
	}
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "open", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("produce to open: %v", err)
	}
}

func isTopicAuthorizationFailed(err error) bool { return errors.Is(err, kerr.TopicAuthorizationFailed) }
