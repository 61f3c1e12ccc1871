package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-streaming/samsa/internal/config"
)

// Secrets the node's log must never contain.
const (
	saslAdminPassword = "admin-Secret-7f3a"
	saslAlicePassword = "alice-Secret-91bc"
	saslBobPassword   = "bob-Secret-4d2e"
)

// saslNode is a node with a PLAINTEXT listener (inter-broker) and a
// SASL_PLAINTEXT listener serving PLAIN, SCRAM and unsecured OAUTHBEARER,
// with an admin SCRAM user written at first start. Its log, at debug
// level, goes to the returned buffer.
type saslNode struct {
	node *Node
	log  *syncBuffer
}

func startSASLNode(t *testing.T, overrides ...string) *saslNode {
	t.Helper()
	over := append([]string{
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"log.dirs=" + t.TempDir(),
		"group.initial.rebalance.delay.ms=0",
		"log.level=debug",
		"metrics.listener=",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
		"samsa.sasl.plain.allow.plaintext=true",
		`listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="` + saslAlicePassword + `";`,
		`listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorRequiredScope="kafka";`,
		"samsa.scram.bootstrap.users=SCRAM-SHA-512=[name=admin,password=" + saslAdminPassword + ",iterations=8192]",
	}, overrides...)
	cfg, _, err := config.Load("", over, nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &syncBuffer{}
	n, err := Start(cfg, Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Shutdown(ctx)
		for _, secret := range []string{saslAdminPassword, saslAlicePassword, saslBobPassword} {
			if strings.Contains(logs.String(), secret) {
				t.Errorf("the node's log contains a password")
			}
		}
	})
	return &saslNode{node: n, log: logs}
}

func (sn *saslNode) saslAddr() string { return sn.node.Addrs()[1].String() }

func (sn *saslNode) client(t *testing.T, mechanism sasl.Mechanism, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(sn.saslAddr()), kgo.SASL(mechanism),
		kgo.RetryTimeout(5 * time.Second), kgo.RequestRetries(2)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func unsecuredJWT(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(claims)) + "."
}

func TestSASLClientsAuthenticateAndWork(t *testing.T) {
	sn := startSASLNode(t)
	ctx := testContext(t)
	admin := sn.client(t, scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism())
	adm := kadm.NewClient(admin)
	mustCreateTopic(t, adm, "secured", 1, nil)

	// A SCRAM user created with AlterUserScramCredentials logs in.
	altered, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: saslBobPassword}})
	if err != nil || altered.Error() != nil {
		t.Fatalf("alter scram: %v %v", err, altered.Error())
	}
	described, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(described["admin"].CredInfos) != 1 || described["admin"].CredInfos[0].Iterations != 8192 ||
		len(described["bob"].CredInfos) != 1 || described["bob"].CredInfos[0].Mechanism != kadm.ScramSha256 {
		t.Fatalf("described %+v", described)
	}

	now := time.Now().Unix()
	for _, tc := range []struct {
		name      string
		mechanism sasl.Mechanism
	}{
		{"scram-sha-512 bootstrap user", scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism()},
		{"scram-sha-256 created user", scram.Auth{User: "bob", Pass: saslBobPassword}.AsSha256Mechanism()},
		{"plain jaas user", plain.Auth{User: "alice", Pass: saslAlicePassword}.AsMechanism()},
		{"plain with a scram user's password", plain.Auth{User: "bob", Pass: saslBobPassword}.AsMechanism()},
		{"oauthbearer unsecured jws", oauth.Auth{Token: unsecuredJWT(fmt.Sprintf(`{"sub":"carol","scope":"kafka","exp":%d}`, now+600))}.AsMechanism()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := sn.client(t, tc.mechanism, kgo.DefaultProduceTopic("secured"))
			value := []byte(tc.name)
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
		})
	}
	consumer := sn.client(t, scram.Auth{User: "bob", Pass: saslBobPassword}.AsSha256Mechanism(), kgo.ConsumeTopics("secured"))
	seen := 0
	for seen < 5 {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 5: %v", seen, err)
		}
		seen += fetches.NumRecords()
	}

	// Deleting bob's credential ends his logins.
	deleted, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha256}}, nil)
	if err != nil || deleted.Error() != nil {
		t.Fatalf("delete scram: %v %v", err, deleted.Error())
	}
	gone := sn.client(t, scram.Auth{User: "bob", Pass: saslBobPassword}.AsSha256Mechanism())
	if err := gone.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("ping as deleted user: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

func TestSASLScramCredentialErrors(t *testing.T) {
	sn := startSASLNode(t)
	ctx := testContext(t)
	admin := sn.client(t, scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism())
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	upsert := func(name string, mechanism int8, iterations int32) {
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = name, mechanism, iterations, []byte("salt"), bytes.Repeat([]byte{1}, 32)
		req.Upsertions = append(req.Upsertions, u)
	}
	upsert("few", 1, 100)
	upsert("many", 1, 20000)
	upsert("weird", 9, 4096)
	upsert("twice", 1, 4096)
	upsert("twice", 1, 4096)
	upsert("fine", 2, 4096)
	d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	d.Name, d.Mechanism = "nobody", 1
	req.Deletions = append(req.Deletions, d)
	resp, err := req.RequestWith(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int16{
		"few": kerr.UnacceptableCredential.Code, "many": kerr.UnacceptableCredential.Code,
		"weird": kerr.UnsupportedSaslMechanism.Code, "twice": kerr.DuplicateResource.Code,
		"fine": 0, "nobody": kerr.ResourceNotFound.Code,
	}
	if len(resp.Results) != len(want) {
		t.Fatalf("results %+v", resp.Results)
	}
	for _, r := range resp.Results {
		if r.ErrorCode != want[r.User] {
			t.Errorf("user %s: code %d, want %d", r.User, r.ErrorCode, want[r.User])
		}
	}
	describe := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, name := range []string{"fine", "few", "fine2", "fine2"} {
		u := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		u.Name = name
		describe.Users = append(describe.Users, u)
	}
	dresp, err := describe.RequestWith(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int16{}
	for _, r := range dresp.Results {
		codes[r.User] = r.ErrorCode
	}
	if codes["fine"] != 0 || codes["few"] != kerr.ResourceNotFound.Code || codes["fine2"] != kerr.DuplicateResource.Code || len(dresp.Results) != 3 {
		t.Fatalf("describe results %+v", dresp.Results)
	}
}

func TestSASLBadInput(t *testing.T) {
	sn := startSASLNode(t)
	ctx := testContext(t)

	for _, tc := range []struct {
		name      string
		mechanism sasl.Mechanism
	}{
		{"wrong scram password", scram.Auth{User: "admin", Pass: "not-it"}.AsSha512Mechanism()},
		{"unknown scram user", scram.Auth{User: "mallory", Pass: "not-it"}.AsSha512Mechanism()},
		{"wrong plain password", plain.Auth{User: "alice", Pass: "not-it"}.AsMechanism()},
		{"expired jwt", oauth.Auth{Token: unsecuredJWT(fmt.Sprintf(`{"sub":"carol","scope":"kafka","exp":%d}`, time.Now().Unix()-600))}.AsMechanism()},
		{"jwt without the required scope", oauth.Auth{Token: unsecuredJWT(fmt.Sprintf(`{"sub":"carol","exp":%d}`, time.Now().Unix()+600))}.AsMechanism()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := sn.client(t, tc.mechanism)
			if err := cl.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("ping: %v, want SASL_AUTHENTICATION_FAILED", err)
			}
		})
	}

	t.Run("same message for unknown user and wrong password", func(t *testing.T) {
		messages := map[string]string{}
		for _, user := range []string{"admin", "mallory"} {
			conn := dialSASL(t, sn.saslAddr())
			hs := kmsg.NewPtrSASLHandshakeRequest()
			hs.Version, hs.Mechanism = 1, "PLAIN"
			if resp := conn.roundTrip(t, hs).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
				t.Fatalf("handshake: %d", resp.ErrorCode)
			}
			auth := kmsg.NewPtrSASLAuthenticateRequest()
			auth.Version, auth.SASLAuthBytes = 1, []byte("\x00"+user+"\x00wrong")
			start := time.Now()
			resp := conn.roundTrip(t, auth).(*kmsg.SASLAuthenticateResponse)
			if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil {
				t.Fatalf("authenticate: %+v", resp)
			}
			if elapsed := time.Since(start); elapsed < 100*time.Millisecond {
				t.Fatalf("failure answered after %v, before connection.failed.authentication.delay.ms", elapsed)
			}
			messages[user] = *resp.ErrorMessage
			conn.expectClosed(t)
		}
		if messages["admin"] != messages["mallory"] {
			t.Fatalf("messages differ: %q", messages)
		}
	})

	t.Run("unsupported mechanism", func(t *testing.T) {
		conn := dialSASL(t, sn.saslAddr())
		versions := kmsg.NewPtrApiVersionsRequest()
		versions.Version = 3
		versions.ClientSoftwareName, versions.ClientSoftwareVersion = "raw", "1"
		if resp := conn.roundTrip(t, versions).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 {
			t.Fatalf("api versions before authentication: %d", resp.ErrorCode)
		}
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 1, "GSSAPI"
		resp := conn.roundTrip(t, hs).(*kmsg.SASLHandshakeResponse)
		if resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(resp.SupportedMechanisms, ",") != "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER" {
			t.Fatalf("handshake: %+v", resp)
		}
		conn.expectClosed(t)
	})

	t.Run("request before authentication", func(t *testing.T) {
		conn := dialSASL(t, sn.saslAddr())
		conn.send(t, kmsg.NewPtrMetadataRequest())
		conn.expectClosed(t)
	})

	t.Run("authenticate before handshake", func(t *testing.T) {
		conn := dialSASL(t, sn.saslAddr())
		auth := kmsg.NewPtrSASLAuthenticateRequest()
		auth.SASLAuthBytes = []byte("\x00alice\x00" + saslAlicePassword)
		conn.send(t, auth)
		conn.expectClosed(t)
	})

	t.Run("oversize token", func(t *testing.T) {
		conn := dialSASL(t, sn.saslAddr())
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 1, "PLAIN"
		conn.roundTrip(t, hs)
		auth := kmsg.NewPtrSASLAuthenticateRequest()
		auth.Version, auth.SASLAuthBytes = 1, bytes.Repeat([]byte{'x'}, 524288+1)
		conn.send(t, auth)
		conn.expectClosed(t)
	})

	t.Run("oversize raw token", func(t *testing.T) {
		conn := dialSASL(t, sn.saslAddr())
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 0, "PLAIN"
		conn.roundTrip(t, hs)
		var size [4]byte
		binary.BigEndian.PutUint32(size[:], 524288+1)
		conn.conn.Write(size[:])
		conn.expectClosed(t)
	})

	t.Run("raw token mode authenticates", func(t *testing.T) {
		conn := dialSASL(t, sn.saslAddr())
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 0, "PLAIN"
		if resp := conn.roundTrip(t, hs).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
			t.Fatalf("handshake v0: %d", resp.ErrorCode)
		}
		token := []byte("\x00alice\x00" + saslAlicePassword)
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(token)))
		conn.conn.Write(append(frame, token...))
		reply := make([]byte, 4)
		if _, err := io.ReadFull(conn.conn, reply); err != nil || binary.BigEndian.Uint32(reply) != 0 {
			t.Fatalf("raw reply %v %v", reply, err)
		}
		metadata := kmsg.NewPtrMetadataRequest()
		metadata.Version = 12
		if _, ok := conn.roundTrip(t, metadata).(*kmsg.MetadataResponse); !ok {
			t.Fatal("no metadata response after raw authentication")
		}
	})

	// The node is still serving.
	cl := sn.client(t, plain.Auth{User: "alice", Pass: saslAlicePassword}.AsMechanism())
	if err := cl.Ping(ctx); err != nil {
		t.Fatalf("ping after bad input: %v", err)
	}
}

func TestSASLReauthentication(t *testing.T) {
	sn := startSASLNode(t, "connections.max.reauth.ms=1000")
	ctx := testContext(t)

	// franz-go re-authenticates before session_lifetime_ms runs out and
	// keeps producing.
	admin := sn.client(t, scram.Auth{User: "admin", Pass: saslAdminPassword}.AsSha512Mechanism(), kgo.DefaultProduceTopic("reauth"), kgo.AllowAutoTopicCreation())
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(sn.log.String(), "SASL authenticated") < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("no re-authentication seen: %s", grepLines(sn.log.String(), "SASL"))
		}
		if err := admin.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce across re-authentication: %v", err)
		}
	}

	// A raw client that never re-authenticates is closed on its first
	// request after the session expires.
	conn := dialSASL(t, sn.saslAddr())
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	conn.roundTrip(t, hs)
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, []byte("\x00alice\x00"+saslAlicePassword)
	resp := conn.roundTrip(t, auth).(*kmsg.SASLAuthenticateResponse)
	if resp.ErrorCode != 0 || resp.SessionLifetimeMillis <= 0 || resp.SessionLifetimeMillis > 1000 {
		t.Fatalf("authenticate: %+v", resp)
	}
	expiry := time.Now().Add(time.Duration(resp.SessionLifetimeMillis) * time.Millisecond)
	for time.Now().Before(expiry.Add(-200 * time.Millisecond)) {
		metadata := kmsg.NewPtrMetadataRequest()
		metadata.Version = 12
		if _, ok := conn.roundTrip(t, metadata).(*kmsg.MetadataResponse); !ok {
			t.Fatal("metadata failed within the session")
		}
	}
	for time.Now().Before(expiry) {
		time.Sleep(time.Until(expiry)) // the session's own lifetime, not a guess
	}
	metadata := kmsg.NewPtrMetadataRequest()
	metadata.Version = 12
	conn.send(t, metadata)
	conn.expectClosed(t)

	// Re-authenticating as another principal is refused.
	conn = dialSASL(t, sn.saslAddr())
	conn.roundTrip(t, hs)
	conn.roundTrip(t, auth)
	conn.roundTrip(t, hs)
	other := kmsg.NewPtrSASLAuthenticateRequest()
	other.Version = 1
	other.SASLAuthBytes = []byte("\x00admin\x00" + saslAdminPassword)
	if r := conn.roundTrip(t, other).(*kmsg.SASLAuthenticateResponse); r.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("re-authentication as another principal: %+v", r)
	}
	conn.expectClosed(t)
}

// saslConn speaks the Kafka protocol on a socket, for requests no client
// library would send, with kmsg's request formatter.
type saslConn struct {
	conn          net.Conn
	correlationID int32
}

func dialSASL(t *testing.T, addr string) *saslConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &saslConn{conn: conn}
}

func (c *saslConn) send(t *testing.T, req kmsg.Request) {
	t.Helper()
	c.correlationID++
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, c.correlationID)
	c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write(frame); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func (c *saslConn) roundTrip(t *testing.T, req kmsg.Request) kmsg.Response {
	t.Helper()
	c.send(t, req)
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c.conn, size[:]); err != nil {
		t.Fatalf("read response to key %d: %v", req.Key(), err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.conn, body); err != nil {
		t.Fatalf("read: %v", err)
	}
	body = body[4:] // correlation id
	resp := req.ResponseKind()
	if req.IsFlexible() && req.Key() != 18 {
		body = body[1:] // empty header tags
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return resp
}

// expectClosed reads until the server closes the connection.
func (c *saslConn) expectClosed(t *testing.T) {
	t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4096)
	for {
		_, err := c.conn.Read(buf)
		if err == nil {
			continue
		}
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			t.Fatal("connection still open")
		}
		return
	}
}

func grepLines(text, substring string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, substring) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
