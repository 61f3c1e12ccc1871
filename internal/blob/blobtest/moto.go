// Package blobtest starts real S3-compatible servers on loopback for tests:
// moto_server (Python moto[server]) and gofakes3 (a Go module, built into
// a small server by StartFakeS3).
package blobtest

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/netport"
)

// Moto is a running moto_server.
type Moto struct {
	// Endpoint is http://127.0.0.1:<port>.
	Endpoint string
	port     int
	cmd      *exec.Cmd
	t        testing.TB
}

// MotoInstalled reports whether moto_server is on PATH.
func MotoInstalled() bool {
	_, err := exec.LookPath("moto_server")
	return err == nil
}

// motoRequired reports whether SAMSA_REQUIRE_MOTO makes a missing
// moto_server a failure instead of a skip.
func motoRequired() bool { return os.Getenv("SAMSA_REQUIRE_MOTO") != "" }

// StartMoto starts moto_server on a free loopback port, or skips the test
// with a clear message when moto_server is not installed
// (pip install 'moto[server]'). The server is stopped at the end of the test.
func StartMoto(t testing.TB) *Moto {
	t.Helper()
	path, err := exec.LookPath("moto_server")
	if err != nil {
		if motoRequired() {
			t.Fatal("moto_server not installed (pip install 'moto[server]') and SAMSA_REQUIRE_MOTO is set")
		}
		t.Skip("moto_server not installed (pip install 'moto[server]'); skipping the S3 test")
	}
	setDummyCredentials(t)
	m := &Moto{port: freePort(t), t: t}
	m.Endpoint = fmt.Sprintf("http://127.0.0.1:%d", m.port)
	m.start(path)
	t.Cleanup(m.Stop)
	return m
}

func freePort(t testing.TB) int {
	port, err := netport.Free()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func (m *Moto) start(path string) {
	m.t.Helper()
	m.cmd = exec.Command(path, "-H", "127.0.0.1", "-p", fmt.Sprint(m.port))
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if testing.Verbose() {
		m.cmd.Stderr = os.Stderr
	}
	if err := m.cmd.Start(); err != nil {
		m.t.Fatalf("start moto_server: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(m.Endpoint + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			m.Stop()
			m.t.Fatalf("moto_server did not answer on %s: %v", m.Endpoint, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends the server; its data is lost. Calling it twice is harmless.
func (m *Moto) Stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	_ = m.cmd.Wait()
	m.cmd = nil
}

// Pause stops the server process (SIGSTOP) so requests hang, as an
// unreachable endpoint does; Resume continues it with its data intact.
func (m *Moto) Pause()  { _ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGSTOP) }
func (m *Moto) Resume() { _ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGCONT) }

// Name is "moto".
func (m *Moto) Name() string { return "moto" }

// CreateBucket creates a bucket (moto accepts unsigned requests) and returns
// its s3:// URL for blob.Open.
func (m *Moto) CreateBucket(name string) string {
	m.t.Helper()
	createBucket(m.t, m.Endpoint, name)
	return m.BucketURL(name)
}

// BucketURL is the s3:// URL of bucket name on this server.
func (m *Moto) BucketURL(name string) string { return bucketURL(m.Endpoint, name) }
