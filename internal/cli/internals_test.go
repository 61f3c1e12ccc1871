package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestFormatErrorIsOneLine(t *testing.T) {
	t.Parallel()
	opts := newGlobalOptions()
	opts.seeds = []string{"127.0.0.1:9092"}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("describe topic %q: %w", "x", kerr.UnknownTopicOrPartition),
			`error: describe topic "x": UNKNOWN_TOPIC_OR_PARTITION: This server does not host this topic-partition. (hint: check the name with 'samsa topics list')`},
		{fmt.Errorf("create topic %q: %w", "x", kafkaError(kerr.InvalidConfig, "retention.ms must be a number")),
			`error: create topic "x": INVALID_CONFIG: Configuration is invalid. (broker says: retention.ms must be a number) (hint: check the config name and value; 'samsa configs describe --all' lists valid names)`},
		{errors.New("multi\nline\terror"), "error: multi line error"},
		{newUsageError("samsa topics create", "missing TOPIC argument"),
			"error: missing TOPIC argument (hint: see 'samsa topics create --help')"},
	} {
		if got := opts.formatError(tc.err); got != tc.want {
			t.Errorf("formatError(%v)\n got %s\nwant %s", tc.err, got, tc.want)
		}
	}
}

func TestParseHelpers(t *testing.T) {
	t.Parallel()
	if k, v, err := parseKeyValue("--config", "a=b=c"); err != nil || k != "a" || v != "b=c" {
		t.Errorf("parseKeyValue(a=b=c) = %q, %q, %v", k, v, err)
	}
	if k, v, err := parseKeyValue("--header", "empty="); err != nil || k != "empty" || v != "" {
		t.Errorf("parseKeyValue(empty=) = %q, %q, %v", k, v, err)
	}
	for _, bad := range []string{"novalue", "=value", ""} {
		if _, _, err := parseKeyValue("--config", bad); err == nil {
			t.Errorf("parseKeyValue(%q) accepted", bad)
		}
	}
	selection, err := parseTopicSelection([]string{"a", "b:0,2"})
	if err != nil || len(selection) != 2 || selection["a"] != nil || joinInt32s(selection["b"]) != "0,2" {
		t.Errorf("parseTopicSelection = %v, %v", selection, err)
	}
	for _, bad := range [][]string{{":0"}, {"a:"}, {"a:-1"}, {"a", "a:1"}} {
		if _, err := parseTopicSelection(bad); err == nil || !strings.Contains(err.Error(), "--topic") {
			t.Errorf("parseTopicSelection(%q) = %v, want an error", bad, err)
		}
	}
}
