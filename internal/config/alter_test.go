package config

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestApplyIncrementalFor: a resource type with keys of its own (a
// client-metrics subscription's LIST keys metrics and match) gets the same
// rules, with its own LIST keys and their defaults.
func TestApplyIncrementalFor(t *testing.T) {
	v := func(s string) *string { return &s }
	lists := func(name string) (string, bool) { return "", name == "metrics" || name == "match" }
	got, err := ApplyIncrementalFor(map[string]string{"metrics": "a,b"}, []AlterOp{
		{Name: "metrics", Op: kmsg.IncrementalAlterConfigOpAppend, Value: v("c,a")},
		{Name: "interval.ms", Op: kmsg.IncrementalAlterConfigOpSet, Value: v("500")},
	}, lists)
	if err != nil || got["metrics"] != "a,b,c" || got["interval.ms"] != "500" {
		t.Fatalf("append and set: %v %v", got, err)
	}
	got, err = ApplyIncrementalFor(got, []AlterOp{{Name: "metrics", Op: kmsg.IncrementalAlterConfigOpSubtract, Value: v("b")},
		{Name: "interval.ms", Op: kmsg.IncrementalAlterConfigOpDelete}}, lists)
	if err != nil || got["metrics"] != "a,c" || len(got) != 1 {
		t.Fatalf("subtract and delete: %v %v", got, err)
	}
	if _, err := ApplyIncrementalFor(nil, []AlterOp{{Name: "interval.ms", Op: kmsg.IncrementalAlterConfigOpAppend, Value: v("1")}}, lists); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("append to an INT: %v", err)
	}
	if _, err := ApplyIncrementalFor(nil, []AlterOp{{Name: "metrics", Op: kmsg.IncrementalAlterConfigOpSet}}, lists); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("null SET: %v", err)
	}
}
