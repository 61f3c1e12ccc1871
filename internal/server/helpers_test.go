package server

import (
	"bufio"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func errorIs(err, target error) bool { return errors.Is(err, target) }

// scrape reads the node's /metrics into series -> value.
func scrape(t *testing.T, tn *testNode) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + tn.node.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}
