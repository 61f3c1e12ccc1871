package diffcheck

import (
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestCompareFindsDifferencesAndHonoursTheAllowList(t *testing.T) {
	kafka := kmsg.NewPtrMetadataResponse()
	samsa := kmsg.NewPtrMetadataResponse()
	for i, resp := range []*kmsg.MetadataResponse{kafka, samsa} {
		resp.ClusterID = kmsg.StringPtr([]string{"kafka-cluster", "samsa-cluster"}[i])
		broker := kmsg.NewMetadataResponseBroker()
		broker.Host, broker.Port = "127.0.0.1", int32(9092+i)
		resp.Brokers = append(resp.Brokers, broker)
	}
	for _, name := range []string{"b", "a"} {
		topic := kmsg.NewMetadataResponseTopic()
		topic.Topic = kmsg.StringPtr(name)
		kafka.Topics = append(kafka.Topics, topic)
	}
	// The same topics in the other order, one with another error.
	for _, name := range []string{"a", "b"} {
		topic := kmsg.NewMetadataResponseTopic()
		topic.Topic = kmsg.StringPtr(name)
		if name == "b" {
			topic.ErrorCode = 3
		}
		samsa.Topics = append(samsa.Topics, topic)
	}
	normalize(reflect.ValueOf(kafka))
	normalize(reflect.ValueOf(samsa))
	got := Compare(3, kafka, samsa)
	if len(got) != 1 || !strings.Contains(got[0], "Topics[b].ErrorCode: kafka=0 samsa=3") {
		t.Fatalf("differences %q, want only topic b's error code", got)
	}
	if got := Compare(3, kafka, kafka); len(got) != 0 {
		t.Errorf("a response differs from itself: %q", got)
	}
}

func TestTableCollapsesVersionsWithTheSameResult(t *testing.T) {
	outcomes := []Outcome{
		{Key: 3, Version: 1, Case: "one topic"},
		{Key: 3, Version: 2, Case: "one topic"},
		{Key: 3, Version: 3, Case: "one topic", Differences: []string{"Topics[a].ErrorCode: kafka=0 samsa=3"}},
	}
	table := Table(nil, outcomes, "4.4.0", false)
	for _, want := range []string{"| Metadata (3) | v1–v2 | 1 | identical |", "| Metadata (3) | v3 | 1 | differs: *one topic*: Topics[a].ErrorCode"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
