package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	typeV2       = "application/vnd.kafka.v2+json"
	typeV2Binary = "application/vnd.kafka.binary.v2+json"
	typeV2JSON   = "application/vnd.kafka.json.v2+json"
	typeV2Avro   = "application/vnd.kafka.avro.v2+json"
)

func startProxyNode(t *testing.T, overrides ...string) *testNode {
	t.Helper()
	return startTestNode(t, append([]string{"schema.registry.listeners=http://127.0.0.1:0", "http.proxy.listeners=http://127.0.0.1:0"}, overrides...)...)
}

func proxyURL(tn *testNode) string { return "http://" + tn.node.HTTPProxyAddrs()[0].String() }

// httpAnswer is one HTTP exchange's outcome.
type httpAnswer struct {
	status      int
	body        string
	contentType string
}

func (a httpAnswer) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(a.body), v); err != nil {
		t.Fatalf("decoding %q: %v", a.body, err)
	}
}

// call sends one request as curl would: a method, a URL, a body type, a
// body, and header pairs.
func call(t *testing.T, method, url, contentType, body string, headers ...string) httpAnswer {
	t.Helper()
	request, err := http.NewRequestWithContext(testContext(t), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		request.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		request.Header.Set(headers[i], headers[i+1])
	}
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	data, err := io.ReadAll(response.Body)
	if err != nil {
		t.Fatal(err)
	}
	return httpAnswer{status: response.StatusCode, body: string(data), contentType: response.Header.Get("Content-Type")}
}

func wantAnswer(t *testing.T, what string, got httpAnswer, status int, contains ...string) {
	t.Helper()
	if got.status != status {
		t.Fatalf("%s: status %d (%s), want %d", what, got.status, got.body, status)
	}
	for _, c := range contains {
		if !strings.Contains(got.body, c) {
			t.Fatalf("%s: %s does not contain %s", what, got.body, c)
		}
	}
}

type v2Offsets struct {
	KeySchemaID   *int `json:"key_schema_id"`
	ValueSchemaID *int `json:"value_schema_id"`
	Offsets       []struct {
		Partition *int32  `json:"partition"`
		Offset    *int64  `json:"offset"`
		ErrorCode *int    `json:"error_code"`
		Error     *string `json:"error"`
	} `json:"offsets"`
}

type v2Record struct {
	Topic     string          `json:"topic"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Partition int32           `json:"partition"`
	Offset    int64           `json:"offset"`
}

// pollRecords reads a consumer instance's records until want have come,
// with a deadline.
func pollRecords(t *testing.T, instanceURL, accept string, want int) []v2Record {
	t.Helper()
	var all []v2Record
	deadline := time.Now().Add(30 * time.Second)
	for len(all) < want {
		if time.Now().After(deadline) {
			t.Fatalf("got %d of %d records: %+v", len(all), want, all)
		}
		answer := call(t, "GET", instanceURL+"/records?timeout=500", "", "", "Accept", accept)
		wantAnswer(t, "records", answer, 200)
		if answer.contentType != accept {
			t.Fatalf("records answered as %q, want %q", answer.contentType, accept)
		}
		var records []v2Record
		answer.decode(t, &records)
		all = append(all, records...)
	}
	return all
}

// TestHTTPProxyV2Flow drives Confluent's documented v2 flow: metadata,
// binary and JSON produce (to a topic and to a partition), then a consumer
// instance that subscribes, reads, commits and is deleted, and a new
// instance of the same group that resumes from the committed offset. The
// records are read back with a Kafka client too, and the instance shows as
// a member of its group.
func TestHTTPProxyV2Flow(t *testing.T) {
	tn := startProxyNode(t)
	base := proxyURL(tn)
	adm := tn.admin()
	mustCreateTopic(t, adm, "rest-binary", 3, nil)
	mustCreateTopic(t, adm, "rest-json", 1, nil)

	wantAnswer(t, "topics", call(t, "GET", base+"/topics", "", ""), 200, `"rest-binary"`, `"rest-json"`)
	topic := call(t, "GET", base+"/topics/rest-binary", "", "")
	wantAnswer(t, "topic", topic, 200, `"name":"rest-binary"`, `"partition":2`, `"in_sync":true`, `"cleanup.policy":"delete"`)
	if topic.contentType != typeV2 {
		t.Fatalf("content type %q", topic.contentType)
	}
	wantAnswer(t, "partitions", call(t, "GET", base+"/topics/rest-binary/partitions", "", ""), 200, `"partition":1`, `"leader":1`)
	wantAnswer(t, "partition", call(t, "GET", base+"/topics/rest-binary/partitions/1", "", ""), 200, `"partition":1`)
	wantAnswer(t, "brokers", call(t, "GET", base+"/brokers", "", ""), 200, `{"brokers":[1]}`)

	key, value := base64.StdEncoding.EncodeToString([]byte("k1")), base64.StdEncoding.EncodeToString([]byte("hello"))
	produced := call(t, "POST", base+"/topics/rest-binary", typeV2Binary,
		fmt.Sprintf(`{"records":[{"key":%q,"value":%q},{"value":%q,"partition":2}]}`, key, value, value))
	wantAnswer(t, "produce binary", produced, 200)
	var offsets v2Offsets
	produced.decode(t, &offsets)
	if len(offsets.Offsets) != 2 || offsets.Offsets[1].Partition == nil || *offsets.Offsets[1].Partition != 2 || offsets.Offsets[0].ErrorCode != nil {
		t.Fatalf("binary offsets: %s", produced.body)
	}
	toPartition := call(t, "POST", base+"/topics/rest-binary/partitions/0", typeV2Binary, fmt.Sprintf(`{"records":[{"value":%q}]}`, value))
	wantAnswer(t, "produce to partition", toPartition, 200, `"partition":0`)
	onTwo := 1
	if *offsets.Offsets[0].Partition == 2 {
		onTwo = 2
	}
	wantAnswer(t, "partition offsets", call(t, "GET", base+"/topics/rest-binary/partitions/2/offsets", "", ""), 200, `"beginning_offset":0`, fmt.Sprintf(`"end_offset":%d`, onTwo))

	// The records are what a Kafka client reads.
	reader := tn.client(kgo.ConsumeTopics("rest-binary"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]int{}
	ctx := testContext(t)
	for count := 0; count < 3; {
		fetches := reader.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading back: %v (%v)", err, seen)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			seen[string(r.Key)+"="+string(r.Value)]++
			count++
		})
	}
	if seen["k1=hello"] != 1 || seen["=hello"] != 2 {
		t.Fatalf("read back %v", seen)
	}

	for i := range 3 {
		wantAnswer(t, "produce json", call(t, "POST", base+"/topics/rest-json", typeV2JSON,
			fmt.Sprintf(`{"records":[{"key":{"id":%d},"value":{"n":%d,"tags":["a","b"]}}]}`, i, i)), 200, `"offset":`+fmt.Sprint(i))
	}

	// A consumer instance: create, subscribe, read, commit, delete.
	created := call(t, "POST", base+"/consumers/rest-group", typeV2, `{"name":"first","format":"json","auto.offset.reset":"earliest","auto.commit.enable":"false"}`)
	wantAnswer(t, "create consumer", created, 200, `"instance_id":"first"`, `/consumers/rest-group/instances/first"`)
	var instance struct {
		BaseURI string `json:"base_uri"`
	}
	created.decode(t, &instance)
	wantAnswer(t, "duplicate instance", call(t, "POST", base+"/consumers/rest-group", typeV2, `{"name":"first","format":"json"}`), 409, `"error_code":40902`)
	wantAnswer(t, "subscribe", call(t, "POST", instance.BaseURI+"/subscription", typeV2, `{"topics":["rest-json"]}`), 204)
	wantAnswer(t, "subscription", call(t, "GET", instance.BaseURI+"/subscription", "", ""), 200, `{"topics":["rest-json"]}`)
	wantAnswer(t, "assign while subscribed", call(t, "POST", instance.BaseURI+"/assignments", typeV2, `{"partitions":[{"topic":"rest-json","partition":0}]}`), 409, `"error_code":40903`)
	records := pollRecords(t, instance.BaseURI, typeV2JSON, 3)
	if string(records[0].Value) != `{"n":0,"tags":["a","b"]}` || string(records[2].Key) != `{"id":2}` {
		t.Fatalf("json records: %+v", records)
	}
	wantAnswer(t, "wrong format", call(t, "GET", instance.BaseURI+"/records", "", "", "Accept", typeV2Binary), 406, `"error_code":40601`)
	// The instance is a real member of its group.
	described, err := adm.DescribeGroups(ctx, "rest-group")
	if err != nil || len(described["rest-group"].Members) != 1 || described["rest-group"].Members[0].ClientID != "first" {
		t.Fatalf("group: %+v %v", described, err)
	}
	wantAnswer(t, "assignments", call(t, "GET", instance.BaseURI+"/assignments", "", ""), 200, `{"topic":"rest-json","partition":0}`)
	// Commit the first two (offset 1 is the last consumed), read them back.
	wantAnswer(t, "commit", call(t, "POST", instance.BaseURI+"/offsets", typeV2, `{"offsets":[{"topic":"rest-json","partition":0,"offset":1}]}`), 200)
	wantAnswer(t, "committed", call(t, "GET", instance.BaseURI+"/offsets", typeV2, `{"partitions":[{"topic":"rest-json","partition":0}]}`), 200, `"offset":2`)
	wantAnswer(t, "delete", call(t, "DELETE", instance.BaseURI, typeV2, ""), 204)
	wantAnswer(t, "deleted", call(t, "GET", instance.BaseURI+"/records", "", "", "Accept", typeV2JSON), 404, `"error_code":40403`)

	// A new instance of the group resumes at the committed offset 2.
	second := call(t, "POST", base+"/consumers/rest-group", typeV2, `{"name":"second","format":"json","auto.offset.reset":"earliest"}`)
	wantAnswer(t, "second consumer", second, 200)
	second.decode(t, &instance)
	wantAnswer(t, "subscribe second", call(t, "POST", instance.BaseURI+"/subscription", typeV2, `{"topics":["rest-json"]}`), 204)
	resumed := pollRecords(t, instance.BaseURI, typeV2JSON, 1)
	if resumed[0].Offset != 2 {
		t.Fatalf("resumed at %d, want 2", resumed[0].Offset)
	}
	// An empty commit commits what was read: offset 3.
	wantAnswer(t, "commit read", call(t, "POST", instance.BaseURI+"/offsets", typeV2, ""), 200)
	committed, err := adm.FetchOffsets(ctx, "rest-group")
	if at, ok := committed.Lookup("rest-json", 0); err != nil || !ok || at.At != 3 {
		t.Fatalf("committed after empty commit: %+v %v", at, err)
	}
	// Seek back to the beginning and read everything again.
	wantAnswer(t, "seek beginning", call(t, "POST", instance.BaseURI+"/positions/beginning", typeV2, `{"partitions":[{"topic":"rest-json","partition":0}]}`), 204)
	if again := pollRecords(t, instance.BaseURI, typeV2JSON, 3); again[0].Offset != 0 {
		t.Fatalf("after seek: %+v", again)
	}
	wantAnswer(t, "seek", call(t, "POST", instance.BaseURI+"/positions", typeV2, `{"offsets":[{"topic":"rest-json","partition":0,"offset":2}]}`), 204)
	if again := pollRecords(t, instance.BaseURI, typeV2JSON, 1); again[0].Offset != 2 {
		t.Fatalf("after seek to 2: %+v", again)
	}

	// A pattern subscription reads every matching topic; unsubscribing
	// leaves the group and reading then is a state conflict.
	pattern := call(t, "POST", base+"/consumers/rest-pattern", typeV2, `{"name":"pattern","format":"binary","auto.offset.reset":"earliest"}`)
	pattern.decode(t, &instance)
	wantAnswer(t, "subscribe pattern", call(t, "POST", instance.BaseURI+"/subscription", typeV2, `{"topic_pattern":"rest-bin.*"}`), 204)
	if matched := pollRecords(t, instance.BaseURI, typeV2Binary, 3); matched[0].Topic != "rest-binary" {
		t.Fatalf("pattern records: %+v", matched)
	}
	wantAnswer(t, "pattern subscription", call(t, "GET", instance.BaseURI+"/subscription", "", ""), 200, `"rest-binary"`)
	wantAnswer(t, "unsubscribe", call(t, "DELETE", instance.BaseURI+"/subscription", typeV2, ""), 204)
	wantAnswer(t, "empty subscription", call(t, "GET", instance.BaseURI+"/subscription", "", ""), 200, `{"topics":[]}`)
	wantAnswer(t, "read unsubscribed", call(t, "GET", instance.BaseURI+"/records", "", "", "Accept", typeV2Binary), 409, `"error_code":40903`)
	wantAnswer(t, "delete pattern", call(t, "DELETE", instance.BaseURI, typeV2, ""), 204)

	// With auto commit on, what an instance answered is committed when it
	// is deleted, so its group resumes after it.
	auto := call(t, "POST", base+"/consumers/rest-auto", typeV2, `{"name":"auto","format":"json","auto.offset.reset":"earliest"}`)
	auto.decode(t, &instance)
	wantAnswer(t, "subscribe auto", call(t, "POST", instance.BaseURI+"/subscription", typeV2, `{"topics":["rest-json"]}`), 204)
	pollRecords(t, instance.BaseURI, typeV2JSON, 3)
	wantAnswer(t, "delete auto", call(t, "DELETE", instance.BaseURI, typeV2, ""), 204)
	committed, err = adm.FetchOffsets(ctx, "rest-auto")
	if at, ok := committed.Lookup("rest-json", 0); err != nil || !ok || at.At != 3 {
		t.Fatalf("auto commit on delete: %+v %v", at, err)
	}

	// An assigned (not subscribed) binary instance reads partition 2 and
	// commits as a simple consumer of its group.
	third := call(t, "POST", base+"/consumers/rest-assigned", typeV2, `{"name":"third","format":"binary","auto.offset.reset":"earliest","auto.commit.enable":"false"}`)
	third.decode(t, &instance)
	wantAnswer(t, "assign", call(t, "POST", instance.BaseURI+"/assignments", typeV2, `{"partitions":[{"topic":"rest-binary","partition":2}]}`), 204)
	wantAnswer(t, "get assignments", call(t, "GET", instance.BaseURI+"/assignments", "", ""), 200, `{"topic":"rest-binary","partition":2}`)
	binaryRecords := pollRecords(t, instance.BaseURI, typeV2Binary, 1)
	if string(binaryRecords[0].Value) != fmt.Sprintf("%q", value) || (string(binaryRecords[0].Key) != "null" && string(binaryRecords[0].Key) != fmt.Sprintf("%q", key)) {
		t.Fatalf("binary record: %+v", binaryRecords[0])
	}
	wantAnswer(t, "commit assigned", call(t, "POST", instance.BaseURI+"/offsets", typeV2, ""), 200)
	committed, err = adm.FetchOffsets(ctx, "rest-assigned")
	if at, ok := committed.Lookup("rest-binary", 2); err != nil || !ok || at.At != binaryRecords[len(binaryRecords)-1].Offset+1 {
		t.Fatalf("assigned commit: %+v %v", at, err)
	}
}

// TestHTTPProxyV3 drives the v3 routes: clusters, brokers, topic create,
// describe, configs, partitions, records (one and streamed), consumer
// groups and lag, ACLs listing, and topic delete.
func TestHTTPProxyV3(t *testing.T) {
	tn := startProxyNode(t)
	base := proxyURL(tn)
	clusters := call(t, "GET", base+"/v3/clusters", "", "")
	wantAnswer(t, "clusters", clusters, 200, `"kind":"KafkaClusterList"`)
	var list struct {
		Data []map[string]any `json:"data"`
	}
	clusters.decode(t, &list)
	clusterID := list.Data[0]["cluster_id"].(string)
	if clusterID != tn.node.controller.Image().ClusterID {
		t.Fatalf("cluster id %q, want %q", clusterID, tn.node.controller.Image().ClusterID)
	}
	cluster := base + "/v3/clusters/" + clusterID
	wantAnswer(t, "cluster", call(t, "GET", cluster, "", ""), 200, `"kind":"KafkaCluster"`, `"controller"`)
	wantAnswer(t, "unknown cluster", call(t, "GET", base+"/v3/clusters/nope/topics", "", ""), 404, `"error_code":404`)
	wantAnswer(t, "brokers", call(t, "GET", cluster+"/brokers", "", ""), 200, `"broker_id":1`, `"host":"127.0.0.1"`)
	wantAnswer(t, "broker", call(t, "GET", cluster+"/brokers/1", "", ""), 200, `"broker_id":1`)

	created := call(t, "POST", cluster+"/topics", "application/json", `{"topic_name":"v3-topic","partitions_count":2,"replication_factor":1,"configs":[{"name":"retention.ms","value":"3600000"}]}`)
	wantAnswer(t, "create topic", created, 201, `"topic_name":"v3-topic"`, `"partitions_count":2`)
	wantAnswer(t, "create again", call(t, "POST", cluster+"/topics", "application/json", `{"topic_name":"v3-topic","partitions_count":1}`), 400, `"error_code":40002`, "already exists")
	wantAnswer(t, "topics", call(t, "GET", cluster+"/topics", "", ""), 200, `"topic_name":"v3-topic"`)
	wantAnswer(t, "topic", call(t, "GET", cluster+"/topics/v3-topic", "", ""), 200, `"replication_factor":1`, `"partitions_count":2`)
	wantAnswer(t, "unknown topic", call(t, "GET", cluster+"/topics/nope", "", ""), 404, `"error_code":40403`)
	wantAnswer(t, "partitions", call(t, "GET", cluster+"/topics/v3-topic/partitions", "", ""), 200, `"partition_id":1`, `"kind":"KafkaPartition"`)
	wantAnswer(t, "partition", call(t, "GET", cluster+"/topics/v3-topic/partitions/0", "", ""), 200, `"partition_id":0`, `/replicas/1"`)
	wantAnswer(t, "config", call(t, "GET", cluster+"/topics/v3-topic/configs/retention.ms", "", ""), 200, `"value":"3600000"`, `"source":"DYNAMIC_TOPIC_CONFIG"`)
	wantAnswer(t, "set config", call(t, "PUT", cluster+"/topics/v3-topic/configs/retention.ms", "application/json", `{"value":"7200000"}`), 204)
	wantAnswer(t, "alter configs", call(t, "POST", cluster+"/topics/v3-topic/configs:alter", "application/json", `{"data":[{"name":"segment.ms","value":"86400000"},{"name":"retention.ms","operation":"DELETE"}]}`), 204)
	configs := call(t, "GET", cluster+"/topics/v3-topic/configs", "", "")
	wantAnswer(t, "configs", configs, 200, `"name":"segment.ms","value":"86400000"`, `"name":"retention.ms","value":"604800000","is_default":true`)
	wantAnswer(t, "bad config", call(t, "PUT", cluster+"/topics/v3-topic/configs/retention.ms", "application/json", `{"value":"soon"}`), 400, `"error_code":40002`)
	wantAnswer(t, "reset config", call(t, "DELETE", cluster+"/topics/v3-topic/configs/segment.ms", "", ""), 204)
	wantAnswer(t, "config after reset", call(t, "GET", cluster+"/topics/v3-topic/configs/segment.ms", "", ""), 200, `"value":"604800000"`, `"is_default":true`)

	// One record: its own status and answer.
	one := call(t, "POST", cluster+"/topics/v3-topic/records", "application/json",
		`{"partition_id":1,"headers":[{"name":"h","value":"aGk="}],"key":{"type":"STRING","data":"k"},"value":{"type":"JSON","data":{"a":1}}}`)
	wantAnswer(t, "produce one", one, 200, `"error_code":200`, `"partition_id":1`, `"offset":0`, `"key":{"type":"STRING","size":1}`, `"value":{"type":"JSON","size":7}`)
	// Several records in one body: one answer a line.
	stream := call(t, "POST", cluster+"/topics/v3-topic/records", "application/json",
		`{"partition_id":0,"value":{"type":"BINARY","data":"AAE="}} {"partition_id":0,"value":{"data":"AAI="}} {"partition_id":9,"value":{"data":"AAM="}}`)
	wantAnswer(t, "produce several", stream, 200)
	lines := strings.Split(strings.TrimSpace(stream.body), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"offset":0`) || !strings.Contains(lines[1], `"offset":1`) || !strings.Contains(lines[2], `"error_code":404`) {
		t.Fatalf("stream answers: %q", lines)
	}
	// A chunked stream: records answered as they are produced.
	reader, writer := io.Pipe()
	request, _ := http.NewRequestWithContext(testContext(t), "POST", cluster+"/topics/v3-topic/records", reader)
	request.Header.Set("Content-Type", "application/json")
	answers := make(chan *http.Response, 1)
	go func() {
		response, err := http.DefaultClient.Do(request)
		if err != nil {
			t.Error(err)
			close(answers)
			return
		}
		answers <- response
	}()
	fmt.Fprint(writer, `{"partition_id":0,"value":{"type":"STRING","data":"first"}}`)
	response := <-answers
	if response == nil {
		t.FailNow()
	}
	lineReader := newLineReader(response.Body)
	if line := lineReader.next(t); !strings.Contains(line, `"offset":2`) {
		t.Fatalf("first streamed answer: %s", line)
	}
	fmt.Fprint(writer, `{"partition_id":0,"value":{"type":"STRING","data":"second"}}`)
	if line := lineReader.next(t); !strings.Contains(line, `"offset":3`) {
		t.Fatalf("second streamed answer: %s", line)
	}
	writer.Close()
	response.Body.Close()

	// The records are what a Kafka client reads, headers and all.
	client := tn.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"v3-topic": {1: kgo.NewOffset().AtStart()}}))
	fetches := client.PollFetches(testContext(t))
	first := fetches.Records()[0]
	if string(first.Key) != "k" || string(first.Value) != `{"a":1}` || len(first.Headers) != 1 || string(first.Headers[0].Value) != "hi" {
		t.Fatalf("v3 record: %+v", first)
	}

	// Consumer groups and lag: a group that committed 1 of the 4 records of
	// partition 0.
	adm := tn.admin()
	commit := kadm.Offsets{}
	commit.Add(kadm.Offset{Topic: "v3-topic", Partition: 0, At: 1, LeaderEpoch: -1})
	if committed, err := adm.CommitOffsets(testContext(t), "v3-group", commit); err != nil || committed.Error() != nil {
		t.Fatalf("commit: %v %v", err, committed.Error())
	}
	wantAnswer(t, "groups", call(t, "GET", cluster+"/consumer-groups", "", ""), 200, `"consumer_group_id":"v3-group"`)
	wantAnswer(t, "group", call(t, "GET", cluster+"/consumer-groups/v3-group", "", ""), 200, `"kind":"KafkaConsumerGroup"`)
	wantAnswer(t, "lags", call(t, "GET", cluster+"/consumer-groups/v3-group/lags", "", ""), 200, `"current_offset":1`, `"log_end_offset":4`, `"lag":3`)
	wantAnswer(t, "lag summary", call(t, "GET", cluster+"/consumer-groups/v3-group/lag-summary", "", ""), 200, `"max_lag":3`, `"total_lag":3`)
	wantAnswer(t, "unknown group", call(t, "GET", cluster+"/consumer-groups/nope", "", ""), 404)
	wantAnswer(t, "consumers", call(t, "GET", cluster+"/consumer-groups/v3-group/consumers", "", ""), 200, `"kind":"KafkaConsumerList"`)

	wantAnswer(t, "delete topic", call(t, "DELETE", cluster+"/topics/v3-topic", "", ""), 204)
	deadline := time.Now().Add(10 * time.Second)
	for {
		topics, err := adm.ListTopics(testContext(t))
		if err == nil && !topics.Has("v3-topic") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("v3-topic was not deleted")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type lineReader struct {
	body   io.Reader
	buffer bytes.Buffer
}

func newLineReader(body io.Reader) *lineReader { return &lineReader{body: body} }

// next reads one answer line of a stream.
func (l *lineReader) next(t *testing.T) string {
	t.Helper()
	chunk := make([]byte, 4096)
	for !bytes.Contains(l.buffer.Bytes(), []byte("\n")) {
		n, err := l.body.Read(chunk)
		l.buffer.Write(chunk[:n])
		if err != nil && n == 0 {
			t.Fatalf("stream ended: %v (%q)", err, l.buffer.String())
		}
	}
	line, _ := l.buffer.ReadString('\n')
	return line
}

// TestHTTPProxyPythonRequestsAndKcat drives the proxy from Python's
// requests (testdata/httpproxy_requests.py) and reads what it produced
// with kcat (librdkafka).
func TestHTTPProxyPythonRequestsAndKcat(t *testing.T) {
	if out, err := exec.Command("/usr/bin/python3", "-c", "import requests").CombinedOutput(); err != nil {
		t.Skipf("/usr/bin/python3 lacks requests (apt-get install python3-requests): %s", out)
	}
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (apt-get install kcat)")
	}
	tn := startProxyNode(t)
	mustCreateTopic(t, tn.admin(), "py-topic", 1, nil)
	ctx := testContext(t)
	out, err := exec.CommandContext(ctx, "/usr/bin/python3", "testdata/httpproxy_requests.py", proxyURL(tn), "py-topic").CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("requests script: %v", err)
	}
	if !strings.Contains(string(out), "ok lag summary") {
		t.Fatal("the requests script stopped early")
	}
	read, err := exec.CommandContext(ctx, kcat, "-b", tn.addr(), "-C", "-t", "py-topic", "-o", "beginning", "-e", "-q", "-f", "%k=%s\n").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat: %v %s", err, read)
	}
	want := "\"py-1\"={\"from\":\"python\",\"n\":1}\npy-2=python bytes\npy-3={\"v3\":true}\n"
	if string(read) != want {
		t.Fatalf("kcat read %q, want %q", read, want)
	}
}
