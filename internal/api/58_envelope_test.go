package api

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/network"
)

// The principal survives the round trip in Kafka's serde, and a request
// wrapped by envelopeFor parses back, header and body, on the controller's
// side.
func TestEnvelopeRoundTrip(t *testing.T) {
	encoded := encodePrincipal("User:alice", true)
	principal, token, err := decodePrincipal(encoded)
	if err != nil || principal != "User:alice" || !token {
		t.Fatalf("decodePrincipal = %q %v %v", principal, token, err)
	}
	// Kafka's bytes for User:alice, not token-authenticated: version 0,
	// compact strings "User" and "alice", false, no tags.
	want := []byte{0, 0, 5, 'U', 's', 'e', 'r', 6, 'a', 'l', 'i', 'c', 'e', 0, 0}
	if got := encodePrincipal("User:alice", false); string(got) != string(want) {
		t.Fatalf("encodePrincipal = % x, want % x", got, want)
	}

	clientID := "tool"
	conn := &network.ConnInfo{Principal: "User:bob", RemoteAddr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3)}}
	c := &call{req: network.NewRequest(network.RequestHeader{APIKey: 19, APIVersion: 7, CorrelationID: 9, ClientID: &clientID}, nil, conn, nil), version: 7}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "t", 3, 1
	req.Topics = append(req.Topics, rt)
	envelope := envelopeFor(c, req, 7)
	if net.IP(envelope.ClientHostAddress).String() != "10.1.2.3" || len(envelope.ClientHostAddress) != 4 {
		t.Fatalf("client address % x", envelope.ClientHostAddress)
	}
	header, body, err := network.ParseRequestHeader(envelope.RequestData, nil)
	if err != nil || header.APIKey != 19 || header.APIVersion != 7 || header.CorrelationID != 9 || *header.ClientID != "tool" {
		t.Fatalf("header %+v, %v", header, err)
	}
	back := kmsg.NewPtrCreateTopicsRequest()
	back.Version = 7
	if err := back.ReadFrom(body); err != nil || back.Topics[0].Topic != "t" || back.Topics[0].NumPartitions != 3 {
		t.Fatalf("body %+v, %v", back, err)
	}

	resp := kmsg.NewPtrCreateTopicsResponse()
	resp.Version = 7
	st := kmsg.NewCreateTopicsResponseTopic()
	st.Topic, st.ErrorCode = "t", 29
	resp.Topics = append(resp.Topics, st)
	data := resp.AppendTo(appendResponseHeader(nil, header))
	decoded, err := decodeEnveloped(req, data)
	if err != nil || decoded.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode != 29 {
		t.Fatalf("decodeEnveloped = %+v, %v", decoded, err)
	}
}

// FuzzEnvelopeDecoders feeds arbitrary bytes to the decoders of what an
// Envelope carries: the forwarded principal and the inner response.
func FuzzEnvelopeDecoders(f *testing.F) {
	f.Add(encodePrincipal("User:alice", false))
	f.Add([]byte{0, 0, 0, 0, 7, 0, 0, 0, 0, 2, 2, 't'})
	f.Add([]byte{0, 0, 0, 1, 5, 1, 200, 200})
	f.Fuzz(func(t *testing.T, data []byte) {
		decodePrincipal(data)
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = 7
		decodeEnveloped(req, data)
		skipResponseTags(data)
	})
}

// Every API a node forwards may travel in an Envelope: a lint over this
// package's API files.
func TestForwardedAPIsAreForwardable(t *testing.T) {
	files, err := filepath.Glob("[0-9][0-9]_*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(src)
		if !strings.Contains(text, "b.forwarded(c, ") && !strings.Contains(text, "b.forward(c, ") && !strings.Contains(text, "b.forwardThen(c, ") {
			continue
		}
		key, _ := strconv.Atoi(f[:2])
		checked++
		if !forwardableAPIs[int16(key)] {
			t.Errorf("%s forwards API %d, which forwardableAPIs does not list", f, key)
		}
	}
	if checked < 8 {
		t.Fatalf("found %d forwarding API files; the lint does not see them", checked)
	}
}
