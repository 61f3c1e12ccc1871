package api

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every API a node forwards to the active controller must be served on the
// controller listener, where the forwarding client sends it: a lint over
// this package's API files.
func TestForwardedAPIsServedOnTheControllerListener(t *testing.T) {
	files, err := filepath.Glob("[0-9][0-9]_*.go")
	if err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`^(\d\d)_`)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "b.forwarded(c, ") && !strings.Contains(string(src), "b.forward(c, ") {
			continue
		}
		n, _ := strconv.Atoi(key.FindStringSubmatch(f)[1])
		checked++
		if controllerAPIs[int16(n)] == nil {
			t.Errorf("%s forwards API %d to the active controller, but the controller listener does not serve it", f, n)
		}
	}
	if checked < 8 {
		t.Fatalf("found %d forwarding API files; the lint does not see them", checked)
	}
}
