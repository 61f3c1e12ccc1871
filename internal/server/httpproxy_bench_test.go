package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkHTTPProxyProduce produces batches of 100 records of 100 bytes
// through the REST proxy's v2 binary route and its v3 records stream, and,
// as the reference in the same run, with franz-go straight to the broker
// (acks=all, like the proxy's producer). Each op is one batch.
func BenchmarkHTTPProxyProduce(b *testing.B) {
	tn := startTestNode(b, "http.proxy.listeners=http://127.0.0.1:0")
	ctx := context.Background()
	if created, err := tn.admin().CreateTopics(ctx, 1, 1, nil, "bench-proxy"); err != nil || created["bench-proxy"].Err != nil {
		b.Fatalf("create: %v %v", err, created["bench-proxy"].Err)
	}
	const records, size = 100, 100
	payload := bytes.Repeat([]byte("x"), size)
	encoded := base64.StdEncoding.EncodeToString(payload)
	var v2 strings.Builder
	v2.WriteString(`{"records":[`)
	for i := range records {
		if i > 0 {
			v2.WriteString(",")
		}
		fmt.Fprintf(&v2, `{"value":%q}`, encoded)
	}
	v2.WriteString("]}")
	var v3 strings.Builder
	for range records {
		fmt.Fprintf(&v3, `{"value":{"type":"BINARY","data":%q}}`+"\n", encoded)
	}
	base := "http://" + tn.node.HTTPProxyAddrs()[0].String()
	clusterID := tn.node.controller.Image().ClusterID
	post := func(b *testing.B, url, contentType, body string) {
		response, err := http.Post(url, contentType, strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		answer, _ := io.ReadAll(response.Body)
		response.Body.Close()
		if response.StatusCode != 200 || bytes.Contains(answer, []byte(`"error_code":5`)) {
			b.Fatalf("%d %s", response.StatusCode, answer)
		}
	}
	b.Run("proxy-v2-binary", func(b *testing.B) {
		b.SetBytes(records * size)
		for b.Loop() {
			post(b, base+"/topics/bench-proxy", typeV2Binary, v2.String())
		}
	})
	b.Run("proxy-v3-records", func(b *testing.B) {
		b.SetBytes(records * size)
		for b.Loop() {
			post(b, base+"/v3/clusters/"+clusterID+"/topics/bench-proxy/records", "application/json", v3.String())
		}
	})
	b.Run("franz-go-direct", func(b *testing.B) {
		client := tn.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0))
		batch := make([]*kgo.Record, records)
		b.SetBytes(records * size)
		for b.Loop() {
			for i := range batch {
				batch[i] = &kgo.Record{Topic: "bench-proxy", Value: payload}
			}
			if err := client.ProduceSync(ctx, batch...).FirstErr(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
