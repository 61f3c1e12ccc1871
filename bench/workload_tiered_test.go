package main

import (
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	got, err := parseMetrics(strings.NewReader(`# HELP samsa_remote_fetch_bytes_total Bytes read from the remote tier.
# TYPE samsa_remote_fetch_bytes_total counter
samsa_remote_fetch_bytes_total 2.0196e+09
samsa_remote_copy_bytes_total{topic="tiered"} 5
samsa_remote_fetch_served_bytes_total 12345
broken line
`))
	if err != nil {
		t.Fatal(err)
	}
	if got["samsa_remote_fetch_bytes_total"] != 2.0196e9 || got["samsa_remote_fetch_served_bytes_total"] != 12345 || len(got) != 2 {
		t.Fatalf("parseMetrics = %v", got)
	}
}

// FuzzParseMetrics feeds arbitrary text to the /metrics parser: it never
// panics, and every sample it returns has a name without spaces, braces or
// a leading '#'.
func FuzzParseMetrics(f *testing.F) {
	f.Add("samsa_remote_fetch_bytes_total 1\n# HELP x y\nx{a=\"b\"} 2\n")
	f.Add("a 1e309\nb NaN\nc -Inf\n \n\x00 1\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, err := parseMetrics(strings.NewReader(text))
		if err != nil {
			return
		}
		for name := range got {
			if strings.ContainsAny(name, " {") || strings.HasPrefix(name, "#") {
				t.Fatalf("sample name %q", name)
			}
		}
	})
}
