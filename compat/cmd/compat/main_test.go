package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The checked-in support.json parses, and its skips and dependencies land
// where the matrix needs them.
func TestSupportFile(t *testing.T) {
	b, err := os.ReadFile("../../support.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseSupport(b)
	if err != nil {
		t.Fatalf("support.json: %v", err)
	}
	// Enabling a scenario is deleting its line, whichever it is.
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, "issue #") {
			continue
		}
		if _, err := parseSupport([]byte(strings.Replace(string(b), line+"\n", "", 1))); err != nil {
			t.Errorf("support.json without %q: %v", strings.TrimSpace(line), err)
		}
	}
	known := map[string]bool{}
	for _, sc := range scenarios {
		known[sc] = true
	}
	for sc, reason := range s.NotYetSupported {
		if !known[sc] || reason == "" {
			t.Errorf("not_yet_supported %q: unknown scenario or no reason", sc)
		}
	}
	for key, deps := range s.Needs {
		cl, sc, ok := strings.Cut(key, "/")
		if !ok || !known[sc] || !contains(clientNames(), cl) {
			t.Errorf("needs %q: not client/scenario", key)
		}
		for _, d := range deps {
			if !known[d] {
				t.Errorf("needs %q: unknown scenario %q", key, d)
			}
		}
	}
}

func TestSkipReason(t *testing.T) {
	s := support{
		NotYetSupported: map[string]string{"groups": "consumer groups issue #6"},
		Needs:           map[string][]string{"kafkajs/consume": {"groups"}},
		NeedsWhy:        map[string]string{"kafkajs/consume": "kafkajs consumes only through a consumer group"},
	}
	for _, tc := range []struct{ cl, sc, reason, note string }{
		{"sarama", "groups", "consumer groups issue #6", ""},
		{"sarama", "consume", "", ""},
		{"kafkajs", "consume", "consumer groups issue #6", "kafkajs consumes only through a consumer group"},
		{"kafkajs", "produce", "", ""},
	} {
		r, n := s.skipReason(tc.cl, tc.sc)
		if r != tc.reason || n != tc.note {
			t.Errorf("%s/%s: got (%q, %q), want (%q, %q)", tc.cl, tc.sc, r, n, tc.reason, tc.note)
		}
	}
	// Enabling groups (deleting its line) enables the dependent cell too.
	delete(s.NotYetSupported, "groups")
	if r, _ := s.skipReason("kafkajs", "consume"); r != "" {
		t.Errorf("kafkajs/consume still skipped: %q", r)
	}
}

func TestRender(t *testing.T) {
	m := map[string]map[string]cell{
		"kcat": {
			"metadata": {status: statusPass},
			"admin":    {status: statusNA, detail: "kcat has no admin API"},
			"groups":   {status: statusNYS, detail: "consumer groups issue #6"},
			"errors":   {status: statusFail, detail: "a | b"},
		},
	}
	cls := map[string]bool{"kcat": true}
	scs := map[string]bool{"metadata": true, "admin": true, "groups": true, "errors": true}
	text := renderText(m, cls, scs)
	for _, want := range []string{"client", "kcat", "pass", "n/a", "not-yet-supported (consumer groups issue #6)", "FAIL"} {
		if !strings.Contains(text, want) {
			t.Errorf("text matrix lacks %q:\n%s", want, text)
		}
	}
	md := renderMarkdown(m, cls, scs, map[string]string{"kcat": "1.7.1"}, "a broker", "", 0, "compat: 1 passed, 1 failed")
	for _, want := range []string{"| kcat 1.7.1 | pass |", "**FAIL**", "a \\| b", "kcat/admin** — n/a: kcat has no admin API"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if !strings.HasSuffix(md, "compat: 1 passed, 1 failed\n") {
		t.Errorf("markdown does not end with the summary:\n%s", md)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// A broker that never started fails every cell with one reason: one line.
func TestDetailsShareReasons(t *testing.T) {
	m := map[string]map[string]cell{}
	cls, scs := map[string]bool{}, map[string]bool{}
	for _, cl := range clients {
		cls[cl.name] = true
		m[cl.name] = map[string]cell{}
		for _, sc := range scenarios {
			scs[sc] = true
			m[cl.name][sc] = cell{status: statusFail, detail: "building samsa failed"}
		}
	}
	d := renderDetails(m, cls, scs, false)
	want := fmt.Sprintf("%d cells", len(clients)*len(scenarios))
	if n := strings.Count(d, "\n"); n != 1 || !strings.Contains(d, want) {
		t.Errorf("details:\n%s", d)
	}
}
