package blobtest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// S3Server is a real S3-compatible server on loopback, started by a test
// and stopped at its end.
type S3Server interface {
	// Name names the implementation, for subtests: "moto", "gofakes3".
	Name() string
	// CreateBucket creates a bucket and returns its s3:// URL.
	CreateBucket(name string) string
	// BucketURL is the s3:// URL of a bucket.
	BucketURL(name string) string
	// Pause makes the server hang every request (SIGSTOP), as an
	// unreachable endpoint does; Resume lets it go on with its data.
	Pause()
	Resume()
	// Stop ends the server.
	Stop()
}

// StartS3Servers starts every S3 implementation the tiered tests run
// against: gofakes3 always (it is built from the module), and moto when it
// is installed or SAMSA_REQUIRE_MOTO is set (StartMoto then fails the test
// without it).
func StartS3Servers(t testing.TB) []S3Server {
	t.Helper()
	servers := []S3Server{StartFakeS3(t)}
	if MotoInstalled() || motoRequired() {
		servers = append(servers, StartMoto(t))
	}
	return servers
}

// setDummyCredentials keeps the AWS SDK from searching for real credentials:
// neither server checks signatures.
func setDummyCredentials(t testing.TB) {
	t.Setenv("AWS_ACCESS_KEY_ID", "testing")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "testing")
	t.Setenv("AWS_REGION", "us-east-1")
}

// createBucket creates a bucket with an unsigned path-style PUT, which both
// servers accept.
func createBucket(t testing.TB, endpoint, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, endpoint+"/"+name, strings.NewReader(""))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("create bucket %s: HTTP %d", name, resp.StatusCode)
	}
}

func bucketURL(endpoint, name string) string {
	return fmt.Sprintf("s3://%s?endpoint=%s&use_path_style=true&region=us-east-1", name, endpoint)
}
