package server

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestUserQuotasFollowThePrincipal: a user quota applies to the
// authenticated principal (alice over SASL PLAIN), not to another user on
// the same listener (admin over SCRAM); the anonymous principal of the
// plaintext listener is the user ANONYMOUS, as in Kafka.
func TestUserQuotasFollowThePrincipal(t *testing.T) {
	sn := startSASLNode(t, "quota.window.num=2")
	admin := sn.client(t, scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism())
	adm := kadm.NewClient(admin)
	mustCreateTopic(t, adm, "quota-users", 1, nil)
	const rate = 1 << 20
	setQuota(t, adm, kadm.ClientQuotaEntity{{Type: "user", Name: kadmName("alice")}}, "producer_byte_rate", rate)
	setQuota(t, adm, kadm.ClientQuotaEntity{{Type: "user", Name: kadmName("ANONYMOUS")}}, "producer_byte_rate", rate)

	produce := func(name string, cl func(...kgo.Opt) *kgo.Client) int64 {
		t.Helper()
		hook := &throttleHook{}
		c := cl(kgo.WithHooks(hook), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.DefaultProduceTopic("quota-users"))
		value := make([]byte, 64<<10)
		rand.Read(value)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// Three times the quota's one-window allowance: throttled if the
		// quota applies.
		for i := 0; i < 3*rate/len(value); i++ {
			if err := c.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		return hook.throttles.Load()
	}
	alice := produce("alice", func(opts ...kgo.Opt) *kgo.Client {
		return sn.client(t, plain.Auth{User: "alice", Pass: saslAlicePassword}.AsMechanism(), opts...)
	})
	other := produce("admin", func(opts ...kgo.Opt) *kgo.Client {
		return sn.client(t, scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism(), opts...)
	})
	anonymous := produce("anonymous", func(opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(sn.node.Addrs()[0].String())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	})
	t.Logf("throttles: alice %d, admin %d, anonymous %d", alice, other, anonymous)
	if alice == 0 || anonymous == 0 || other != 0 {
		t.Fatalf("throttles: alice %d, admin %d, anonymous %d; want alice and anonymous throttled, admin not", alice, other, anonymous)
	}
}
