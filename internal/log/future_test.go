package log

import (
	"strings"
	"testing"
)

func TestSuffixedDirNames(t *testing.T) {
	tp := TopicPartition{Topic: "orders.eu-west", Partition: 12}
	name := suffixedDirName(tp, futureDirSuffix)
	if len(name) != FutureDirNameLength(tp) {
		t.Fatalf("%q is %d bytes, FutureDirNameLength says %d", name, len(name), FutureDirNameLength(tp))
	}
	if got, ok := parseSuffixedDirName(name, futureDirSuffix); !ok || got != tp {
		t.Fatalf("parse %q = %v %v, want %v", name, got, ok, tp)
	}
	for _, bad := range []string{"orders-0", "orders-0-future", "orders-0.abc-future", "orders.0123456789abcdef0123456789abcdef-future",
		"orders-0.0123456789abcdef0123456789abcdeg-future", name[:len(name)-1]} {
		if _, ok := parseSuffixedDirName(bad, futureDirSuffix); ok {
			t.Errorf("%q parsed as a future dir", bad)
		}
	}
}

// FuzzParseSuffixedDirName: names found in a log dir never panic the
// parser, and what it accepts names the partition it says.
func FuzzParseSuffixedDirName(f *testing.F) {
	f.Add("orders-0.0123456789abcdef0123456789abcdef-future")
	f.Add("a.b-1.ffffffffffffffffffffffffffffffff-future")
	f.Add("-future")
	f.Add(".-future")
	f.Fuzz(func(t *testing.T, name string) {
		tp, ok := parseSuffixedDirName(name, futureDirSuffix)
		if !ok {
			return
		}
		if !strings.HasPrefix(name, tp.String()+".") || tp.Partition < 0 {
			t.Fatalf("%q parsed as %v", name, tp)
		}
	})
}
