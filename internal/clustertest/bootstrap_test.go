package clustertest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDedicatedControllersBootstrapWithoutBrokers: a quorum of dedicated
// controllers writes the cluster id and the bootstrap SCRAM users at its
// first election, as Kafka's bootstrap metadata has them from the start,
// so DescribeCluster and DescribeUserScramCredentials on the controller
// listener answer before any broker has registered. A broker that joins
// later finds the same cluster id.
func TestDedicatedControllersBootstrapWithoutBrokers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	const users = "SCRAM-SHA-512=[name=alice,password=alice-secret,iterations=8192]," +
		"SCRAM-SHA-256=[name=bob,password=bob-secret]"
	c := StartDedicatedCluster(t, 3, 0, "samsa.scram.bootstrap.users="+users)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	clusterID := ""
	for _, controller := range c.Controllers {
		WaitFor(t, 30*time.Second, func() error {
			req := kmsg.NewPtrDescribeClusterRequest()
			req.Version, req.EndpointType = 1, 2
			resp, err := tryRequestOn[*kmsg.DescribeClusterResponse](ctx, controller.Addr(), req)
			if err != nil {
				return err
			}
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				return err
			}
			if resp.ClusterID == "" || resp.ControllerID < 1 {
				return fmt.Errorf("controller %s: cluster id %q, active controller %d", controller.Addr(), resp.ClusterID, resp.ControllerID)
			}
			if clusterID != "" && resp.ClusterID != clusterID {
				return errStopWaiting{fmt.Errorf("controller %s has cluster id %q, another %q", controller.Addr(), resp.ClusterID, clusterID)}
			}
			clusterID = resp.ClusterID
			return nil
		})
		WaitFor(t, 30*time.Second, func() error {
			resp, err := tryRequestOn[*kmsg.DescribeUserSCRAMCredentialsResponse](ctx, controller.Addr(), kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
			if err != nil {
				return err
			}
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				return err
			}
			var got []string
			for _, r := range resp.Results {
				for _, info := range r.CredentialInfos {
					got = append(got, fmt.Sprintf("%s/%d/%d", r.User, info.Mechanism, info.Iterations))
				}
			}
			slices.Sort(got)
			if want := []string{"alice/2/8192", "bob/1/4096"}; !slices.Equal(got, want) {
				return fmt.Errorf("controller %s describes SCRAM credentials %v, want %v", controller.Addr(), got, want)
			}
			return nil
		})
	}

	// A broker that registers now joins the cluster the controllers
	// bootstrapped.
	voters := ""
	for i, controller := range c.Controllers {
		if i > 0 {
			voters += ","
		}
		voters += fmt.Sprintf("%d@127.0.0.1:%d", i+1, controller.Port)
	}
	broker := &Node{t: t, Dir: t.TempDir(), Port: FreePort(t)}
	broker.overrides = append([]string{"node.id=4", "process.roles=broker"}, clusterOverrides(voters)...)
	t.Cleanup(broker.Stop)
	broker.Start()
	WaitFor(t, 60*time.Second, func() error {
		resp, err := tryRequestOn[*kmsg.DescribeClusterResponse](ctx, broker.Addr(), kmsg.NewPtrDescribeClusterRequest())
		if err != nil {
			return err
		}
		if resp.ClusterID != clusterID || len(resp.Brokers) != 1 {
			return fmt.Errorf("broker: cluster id %q (want %q), %d brokers", resp.ClusterID, clusterID, len(resp.Brokers))
		}
		return nil
	})
}
