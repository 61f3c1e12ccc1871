// Command compat-go drives the Go Kafka clients (franz-go, sarama,
// segmentio/kafka-go) and the kcat command-line client through one compat
// scenario against a running broker, and prints the result as one JSON line
// on stdout. Progress goes to stderr. compat/run.sh builds and runs it; see
// compat/README.md for the scenarios and the environment it reads.
//
//	compat-go -client franz-go produce
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Scenario names, shared with the runner and the other drivers.
var scenarioNames = append([]string{"metadata", "produce", "consume", "groups", "transactions", "admin", "errors"}, securityScenarioNames...)

// env is what a scenario needs to know about its run.
type env struct {
	client    string
	bootstrap string
	prefix    string // topics, groups and transactional ids start with it
	records   int    // records per produce/consume run (10,000 by default)
	deadline  time.Time
}

func (e *env) topic(name string) string { return e.prefix + "-" + name }

func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s %s] %s\n", e.client, time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// errNA marks a scenario the client has no API for.
type errNA struct{ reason string }

func (e errNA) Error() string { return e.reason }

func notApplicable(format string, args ...any) error { return errNA{fmt.Sprintf(format, args...)} }

// passDetail lets a scenario pass with a note (what it checked, or a caveat).
type passDetail struct{ detail string }

func (p passDetail) Error() string { return p.detail }

func passWith(format string, args ...any) error { return passDetail{fmt.Sprintf(format, args...)} }

type scenarioFunc func(ctx context.Context, e *env) error

type driver map[string]scenarioFunc

var drivers = map[string]driver{
	"franz-go": franzDriver,
	"sarama":   saramaDriver,
	"kafka-go": kafkaGoDriver,
	"kcat":     kcatDriver,
}

type result struct {
	Client   string `json:"client"`
	Scenario string `json:"scenario"`
	Status   string `json:"status"`
	Detail   string `json:"detail"`
	Version  string `json:"version,omitempty"`
	Seconds  string `json:"seconds"`
}

// modules names each Go client's module, for its version.
var modules = map[string]string{
	"franz-go": "github.com/twmb/franz-go",
	"sarama":   "github.com/IBM/sarama",
	"kafka-go": "github.com/segmentio/kafka-go",
}

func clientVersion(client string) string {
	if client == "kcat" {
		return kcatVersion()
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == modules[client] {
				return m.Version
			}
		}
	}
	return ""
}

func main() {
	client := flag.String("client", "", "franz-go, sarama, kafka-go or kcat")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: compat-go -client NAME SCENARIO\nscenarios: %s\n", strings.Join(scenarioNames, ", "))
	}
	flag.Parse()
	d, ok := drivers[*client]
	if !ok || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	scenario := flag.Arg(0)
	fn, ok := d[scenario]
	if !ok {
		flag.Usage()
		os.Exit(2)
	}
	e := &env{
		client:    *client,
		bootstrap: getenv("COMPAT_BOOTSTRAP", "127.0.0.1:9092"),
		prefix:    getenv("COMPAT_PREFIX", "compat-"+*client),
		records:   atoi(getenv("COMPAT_RECORDS", "10000")),
	}
	timeout := time.Duration(atoi(getenv("COMPAT_TIMEOUT", "120"))) * time.Second
	// Leave the runner a margin so a scenario reports its own timeout.
	if timeout > 10*time.Second {
		timeout -= 5 * time.Second
	}
	e.deadline = time.Now().Add(timeout)
	ctx, cancel := context.WithDeadline(context.Background(), e.deadline)
	defer cancel()

	start := time.Now()
	err := run(ctx, fn, e)
	res := result{Client: *client, Scenario: scenario, Seconds: fmt.Sprintf("%.1f", time.Since(start).Seconds()),
		Version: clientVersion(*client)}
	var na errNA
	var pd passDetail
	switch {
	case err == nil:
		res.Status = "pass"
	case errors.As(err, &pd):
		res.Status, res.Detail = "pass", pd.detail
	case errors.As(err, &na):
		res.Status, res.Detail = "n/a", na.reason
	default:
		res.Status, res.Detail = "fail", err.Error()
		if ctx.Err() != nil {
			res.Detail = fmt.Sprintf("timed out after %s: %v", timeout, err)
		}
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
}

func run(ctx context.Context, fn scenarioFunc, e *env) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return fn(ctx, e)
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "not a number: %q\n", s)
		os.Exit(2)
	}
	return n
}
