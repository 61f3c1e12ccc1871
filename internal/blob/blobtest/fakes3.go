package blobtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeS3Package is the server StartFakeS3 builds: gofakes3 over a directory.
const fakeS3Package = "github.com/samsa-streaming/samsa/internal/blob/blobtest/fakes3"

// fakeS3StartTimeout bounds the wait for the server's listening line.
const fakeS3StartTimeout = 30 * time.Second

// FakeS3 is a running gofakes3 server (command fakes3), a second S3
// implementation beside moto: written in Go on the AWS SDK's XML types, with
// objects as files, so its ranged GETs and listings behave differently from
// moto's in-memory Python ones.
type FakeS3 struct {
	// Endpoint is http://127.0.0.1:<port>.
	Endpoint string
	root     string
	cmd      *exec.Cmd
	t        testing.TB
}

var fakeS3Build struct {
	once sync.Once
	path string
	err  error
}

// fakeS3Binary builds command fakes3 once per process with the go tool
// that runs the tests, from the module's own requirements (go.mod pins
// gofakes3), into a shared directory: each build goes to a file of its own
// and is renamed into place, so concurrent test processes never see half a
// binary.
func fakeS3Binary() (string, error) {
	fakeS3Build.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		dir := filepath.Join(os.TempDir(), "samsa-blobtest")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fakeS3Build.err = err
			return
		}
		tmp, err := os.CreateTemp(dir, "fakes3-*.tmp")
		if err != nil {
			fakeS3Build.err = err
			return
		}
		tmp.Close()
		build := exec.Command(goTool, "build", "-o", tmp.Name(), fakeS3Package)
		if out, err := build.CombinedOutput(); err != nil {
			os.Remove(tmp.Name())
			fakeS3Build.err = fmt.Errorf("go build %s: %w\n%s", fakeS3Package, err, out)
			return
		}
		path := filepath.Join(dir, "fakes3")
		if err := os.Rename(tmp.Name(), path); err != nil {
			os.Remove(tmp.Name())
			fakeS3Build.err = err
			return
		}
		fakeS3Build.path = path
	})
	return fakeS3Build.path, fakeS3Build.err
}

// StartFakeS3 builds and starts a gofakes3 server on a loopback port over a
// fresh directory; it is stopped at the end of the test.
func StartFakeS3(t testing.TB) *FakeS3 {
	t.Helper()
	path, err := fakeS3Binary()
	if err != nil {
		t.Fatalf("fakes3: %v", err)
	}
	setDummyCredentials(t)
	f := &FakeS3{root: t.TempDir(), t: t}
	f.start(path)
	t.Cleanup(f.Stop)
	return f
}

func (f *FakeS3) start(path string) {
	f.t.Helper()
	f.cmd = exec.Command(path, "-root", f.root, "-addr", "127.0.0.1:0")
	f.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if testing.Verbose() {
		f.cmd.Stderr = os.Stderr
	}
	stdout, err := f.cmd.StdoutPipe()
	if err != nil {
		f.t.Fatalf("fakes3: %v", err)
	}
	if err := f.cmd.Start(); err != nil {
		f.t.Fatalf("start fakes3: %v", err)
	}
	lines := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if addr, ok := strings.CutPrefix(scanner.Text(), "listening "); ok {
				lines <- addr
				break
			}
		}
		close(lines)
		// Keep the pipe drained so the server never blocks on stdout.
		for scanner.Scan() {
		}
	}()
	timer := time.NewTimer(fakeS3StartTimeout)
	defer timer.Stop()
	select {
	case addr, ok := <-lines:
		if !ok {
			f.Stop()
			f.t.Fatal("fakes3 exited before listening")
		}
		f.Endpoint = "http://" + addr
	case <-timer.C:
		f.Stop()
		f.t.Fatalf("fakes3 did not listen within %v", fakeS3StartTimeout)
	}
}

// Name is "gofakes3".
func (f *FakeS3) Name() string { return "gofakes3" }

// Stop ends the server; its directory goes with the test. Calling it twice
// is harmless.
func (f *FakeS3) Stop() {
	if f.cmd == nil || f.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-f.cmd.Process.Pid, syscall.SIGKILL)
	_ = f.cmd.Wait()
	f.cmd = nil
}

// Pause stops the server process (SIGSTOP) so requests hang, as an
// unreachable endpoint does; Resume continues it with its data intact.
func (f *FakeS3) Pause()  { _ = syscall.Kill(-f.cmd.Process.Pid, syscall.SIGSTOP) }
func (f *FakeS3) Resume() { _ = syscall.Kill(-f.cmd.Process.Pid, syscall.SIGCONT) }

// CreateBucket creates a bucket and returns its s3:// URL for blob.Open.
func (f *FakeS3) CreateBucket(name string) string {
	f.t.Helper()
	createBucket(f.t, f.Endpoint, name)
	return f.BucketURL(name)
}

// BucketURL is the s3:// URL of bucket name on this server.
func (f *FakeS3) BucketURL(name string) string { return bucketURL(f.Endpoint, name) }
