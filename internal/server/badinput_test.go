package server

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/record"
)

// rawConn is a plain TCP connection speaking the Kafka framing by hand.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	corr int32
}

func dialRaw(t *testing.T, tn *testNode) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", tn.addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, conn: c}
}

func (rc *rawConn) writeFrame(frame []byte) {
	rc.t.Helper()
	var size [4]byte
	binary.BigEndian.PutUint32(size[:], uint32(len(frame)))
	rc.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := rc.conn.Write(append(size[:], frame...)); err != nil {
		rc.t.Fatal(err)
	}
}

// request encodes req with a v1/v2 request header at version v.
func (rc *rawConn) request(req kmsg.Request, version int16) {
	rc.t.Helper()
	req.SetVersion(version)
	rc.corr++
	frame := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	frame = binary.BigEndian.AppendUint16(frame, uint16(version))
	frame = binary.BigEndian.AppendUint32(frame, uint32(rc.corr))
	frame = binary.BigEndian.AppendUint16(frame, 4)
	frame = append(frame, "test"...)
	if req.IsFlexible() {
		frame = append(frame, 0)
	}
	rc.writeFrame(req.AppendTo(frame))
}

// response reads one response and decodes it into resp at version.
func (rc *rawConn) response(resp kmsg.Response, version int16) {
	rc.t.Helper()
	body, err := rc.readFrame()
	if err != nil {
		rc.t.Fatalf("read response: %v", err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != rc.corr {
		rc.t.Fatalf("correlation id %d, want %d", got, rc.corr)
	}
	body = body[4:]
	resp.SetVersion(version)
	if resp.IsFlexible() && resp.Key() != 18 {
		body = body[1:] // empty tagged fields of response header v1
	}
	if err := resp.ReadFrom(body); err != nil {
		rc.t.Fatalf("decode response: %v", err)
	}
}

func (rc *rawConn) readFrame() ([]byte, error) {
	rc.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(rc.conn, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err := io.ReadFull(rc.conn, body)
	return body, err
}

// expectClosed asserts the broker closes the connection.
func (rc *rawConn) expectClosed() {
	rc.t.Helper()
	_, err := rc.readFrame()
	if err == nil {
		rc.t.Fatal("broker answered instead of closing the connection")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		rc.t.Fatal("broker neither answered nor closed the connection")
	}
}

// stillServes checks the node answers a fresh client.
func stillServes(t *testing.T, tn *testNode) {
	t.Helper()
	rc := dialRaw(t, tn)
	rc.request(kmsg.NewPtrApiVersionsRequest(), 3)
	resp := kmsg.NewPtrApiVersionsResponse()
	rc.response(resp, 3)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("ApiVersions after bad input: error %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
	}
}

func TestBadFramesCloseTheConnection(t *testing.T) {
	tn := startTestNode(t, "socket.request.max.bytes=1048576")
	cases := map[string]func(rc *rawConn){
		"oversize frame": func(rc *rawConn) {
			rc.conn.Write([]byte{0x7f, 0xff, 0xff, 0xff, 0, 18, 0, 0})
		},
		"negative size": func(rc *rawConn) { rc.conn.Write([]byte{0xff, 0xff, 0xff, 0xf0}) },
		"truncated frame": func(rc *rawConn) {
			rc.conn.Write([]byte{0, 0, 0, 100, 0, 18, 0, 3})
			rc.conn.(*net.TCPConn).CloseWrite()
		},
		"garbage header": func(rc *rawConn) { rc.writeFrame([]byte{0, 3, 0, 9, 0, 0, 0, 1, 0x7f, 0xff}) },
		"unknown api key": func(rc *rawConn) {
			rc.writeFrame([]byte{0x0f, 0xff, 0, 0, 0, 0, 0, 1, 0xff, 0xff})
		},
		"unsupported version": func(rc *rawConn) {
			rc.writeFrame([]byte{0, 3, 0x7f, 0, 0, 0, 0, 1, 0xff, 0xff})
		},
		"malformed body": func(rc *rawConn) {
			rc.writeFrame([]byte{0, 19, 0, 4, 0, 0, 0, 1, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff})
		},
	}
	for name, send := range cases {
		t.Run(name, func(t *testing.T) {
			rc := dialRaw(t, tn)
			send(rc)
			rc.expectClosed()
			stillServes(t, tn)
		})
	}
}

func TestAPIVersionsFallback(t *testing.T) {
	tn := startTestNode(t)
	rc := dialRaw(t, tn)
	// A version newer than we serve: the answer is v0 with UNSUPPORTED_VERSION.
	frame := []byte{0, 18, 0, 99, 0, 0, 0, 1, 0, 4, 't', 'e', 's', 't', 0, 0, 0, 0}
	rc.corr = 1
	rc.writeFrame(frame)
	resp := kmsg.NewPtrApiVersionsResponse()
	rc.response(resp, 0)
	if resp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("error %d, want UNSUPPORTED_VERSION", resp.ErrorCode)
	}
	found := false
	for _, k := range resp.ApiKeys {
		if k.ApiKey == 18 && k.MaxVersion >= 3 {
			found = true
		}
	}
	if !found {
		t.Fatalf("fallback response lacks ApiVersions range: %+v", resp.ApiKeys)
	}
}

// produceRaw sends one Produce v9 with records for topic-0 and returns the
// partition error code.
func produceRaw(t *testing.T, rc *rawConn, topic string, records []byte, acks int16) int16 {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks = acks
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	rc.request(req, 9)
	resp := kmsg.NewPtrProduceResponse()
	rc.response(resp, 9)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// validBatch builds a one-record batch.
func validBatch(value string) []byte {
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = time.Now().UnixMilli()
	b, err := record.Build(opts, []record.Record{{Value: []byte(value)}})
	if err != nil {
		panic(err)
	}
	return b
}

func TestProduceBadBatches(t *testing.T) {
	tn := startTestNode(t)
	mustCreateTopic(t, tn.admin(), "bad", 1, nil)
	rc := dialRaw(t, tn)
	good := validBatch("hello")
	if code := produceRaw(t, rc, "bad", good, 1); code != 0 {
		t.Fatalf("valid batch: error %d", code)
	}
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-1] ^= 0xff
	wrongMagic := append([]byte(nil), good...)
	wrongMagic[16] = 1
	twoBatches := append(append([]byte(nil), good...), good...)
	cases := []struct {
		name    string
		records []byte
		acks    int16
		want    *kerr.Error
	}{
		{"bad crc", badCRC, 1, kerr.CorruptMessage},
		{"wrong magic", wrongMagic, 1, kerr.CorruptMessage},
		{"truncated batch", good[:len(good)-3], 1, kerr.CorruptMessage},
		{"two batches", twoBatches, 1, kerr.InvalidRecord},
		{"invalid acks", good, 2, kerr.InvalidRequiredAcks},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if code := produceRaw(t, rc, "bad", tc.records, tc.acks); code != tc.want.Code {
				t.Fatalf("error %v, want %v", kerr.ErrorForCode(code), tc.want)
			}
		})
	}
	if code := produceRaw(t, rc, "unknown-topic", good, 1); code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %v", kerr.ErrorForCode(code))
	}
	// Nothing bad was written: exactly the one good record is there.
	recs := consumeAll(t, tn, "bad", 1)
	if len(recs) != 1 || string(recs[0].Value) != "hello" {
		t.Fatalf("log holds %d records", len(recs))
	}
	end, err := tn.admin().ListEndOffsets(testContext(t), "bad")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := end.Lookup("bad", 0); o.Offset != 1 {
		t.Fatalf("end offset %d after bad batches, want 1", o.Offset)
	}
}

// TestProduceAcksZeroFailureClosesTheConnection: an acks=0 produce gets no
// answer, so when a partition fails the broker closes the connection, as
// Kafka does; one that succeeds keeps it open, and the node keeps serving.
func TestProduceAcksZeroFailureClosesTheConnection(t *testing.T) {
	tn := startTestNode(t, "auto.create.topics.enable=false")
	mustCreateTopic(t, tn.admin(), "acks0", 1, nil)
	produce := func(rc *rawConn, topic string) {
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = 0, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = validBatch("fire and forget")
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		rc.request(req, 9)
	}
	rc := dialRaw(t, tn)
	produce(rc, "acks0")
	// The connection is still open: the next request is answered.
	rc.request(kmsg.NewPtrApiVersionsRequest(), 3)
	versions := kmsg.NewPtrApiVersionsResponse()
	rc.response(versions, 3)
	if versions.ErrorCode != 0 {
		t.Fatalf("ApiVersions after a good acks=0 produce: error %d", versions.ErrorCode)
	}
	produce(rc, "no-such-topic")
	rc.expectClosed()
	stillServes(t, tn)
	if recs := consumeAll(t, tn, "acks0", 1); len(recs) != 1 || string(recs[0].Value) != "fire and forget" {
		t.Fatalf("acks0 holds %d records, want the one good record", len(recs))
	}
}

func TestCreateTopicErrors(t *testing.T) {
	tn := startTestNode(t)
	adm := tn.admin()
	mustCreateTopic(t, adm, "exists", 1, nil)
	mustCreateTopic(t, adm, "a.b", 1, nil)
	bad := "not-a-number"
	cases := []struct {
		name       string
		partitions int32
		factor     int16
		configs    map[string]*string
		want       *kerr.Error
	}{
		{"exists", 1, 1, nil, kerr.TopicAlreadyExists},
		{"bad/name", 1, 1, nil, kerr.InvalidTopicException},
		{".", 1, 1, nil, kerr.InvalidTopicException},
		{"a_b", 1, 1, nil, kerr.InvalidTopicException},
		{string(make([]byte, 250)), 1, 1, nil, kerr.InvalidTopicException},
		{"zero-partitions", 0, 1, nil, kerr.InvalidPartitions},
		{"negative-partitions", -5, 1, nil, kerr.InvalidPartitions},
		{"factor-too-big", 1, 3, nil, kerr.InvalidReplicationFactor},
		{"bad-config", 1, 1, map[string]*string{"retention.ms": &bad}, kerr.InvalidConfig},
		{"unknown-config", 1, 1, map[string]*string{"no.such.config": &bad}, kerr.InvalidConfig},
	}
	for _, tc := range cases {
		resp, err := adm.CreateTopics(testContext(t), tc.partitions, tc.factor, tc.configs, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp[tc.name].Err; !errors.Is(got, tc.want) {
			t.Errorf("%q: got %v, want %v", tc.name, got, tc.want)
		}
	}
	stillServes(t, tn)
}
