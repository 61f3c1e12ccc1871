package main

import (
	"strings"
	"testing"
)

func TestParseMemFree(t *testing.T) {
	const meminfo = "MemTotal:       24684132 kB\nMemFree:        19783940 kB\nMemAvailable:   23039804 kB\n"
	got, err := parseMemFree(strings.NewReader(meminfo))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(19783940) << 10; got != want {
		t.Fatalf("MemFree = %d bytes, want %d", got, want)
	}
	for _, bad := range []string{"", "MemTotal: 1 kB\n", "MemFree: x kB\n", "MemFree: 12 pages\n"} {
		if n, err := parseMemFree(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: got %d, want an error", bad, n)
		}
	}
}
