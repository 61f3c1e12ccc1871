package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// objectStore is an S3-compatible server on loopback that a tiered
// workload's Samsa node uses as its bucket, started fresh for each run and
// killed after it, so every run starts from an empty bucket: moto_server
// (Python moto[server], as in the tiered-storage tests), or gofakes3 (the
// tests' second implementation, a Go server over a directory, built from
// the module with the go tool).
type objectStore struct {
	endpoint string
	bucket   string
	cmd      *exec.Cmd
	// root is gofakes3's directory, removed with the server.
	root string
}

// Object stores -object-store names.
const (
	storeMoto     = "moto"
	storeGofakes3 = "gofakes3"
	// fakeS3Package is the tests' gofakes3 server.
	fakeS3Package = "github.com/samsa-streaming/samsa/internal/blob/blobtest/fakes3"
)

const (
	// objectStoreStartTimeout bounds the wait for moto_server to answer.
	objectStoreStartTimeout = 30 * time.Second
	objectStoreBucket       = "bench"
)

// startObjectStore starts moto_server on a free loopback port and creates
// the bucket. The AWS SDK in the broker child finds dummy credentials in
// the environment (moto checks no signatures), so none are searched for.
func startObjectStore(ctx context.Context, kind, workDir string) (*objectStore, error) {
	for key, value := range map[string]string{"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1"} {
		if err := os.Setenv(key, value); err != nil {
			return nil, err
		}
	}
	if kind == storeGofakes3 {
		return startGofakes3(ctx, workDir)
	}
	path, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, errors.New("moto_server is not installed (pip install 'moto[server]'); the tiered workloads need it, or -object-store gofakes3")
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	s := &objectStore{endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), bucket: objectStoreBucket}
	s.cmd = exec.Command(path, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	deadline := time.Now().Add(objectStoreStartTimeout)
	for {
		err := s.request(ctx, http.MethodGet, "/moto-api/")
		if err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.stop()
			return nil, fmt.Errorf("moto_server did not answer on %s: %w", s.endpoint, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.request(ctx, http.MethodPut, "/"+s.bucket); err != nil {
		s.stop()
		return nil, fmt.Errorf("create bucket: %w", err)
	}
	return s, nil
}

// startGofakes3 builds the gofakes3 server into workDir, starts it over a
// fresh directory there and creates the bucket.
func startGofakes3(ctx context.Context, workDir string) (*objectStore, error) {
	root, err := os.MkdirTemp(workDir, "samsa-bench-gofakes3-")
	if err != nil {
		return nil, err
	}
	binary := filepath.Join(root, "fakes3")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", binary, fakeS3Package).CombinedOutput(); err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("build gofakes3 (go build %s, from within the repository): %w\n%s", fakeS3Package, err, out)
	}
	s := &objectStore{bucket: objectStoreBucket, root: root}
	s.cmd = exec.Command(binary, "-root", filepath.Join(root, "data"), "-addr", "127.0.0.1:0")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("start gofakes3: %w", err)
	}
	lines := listeningAddrs(stdout)
	select {
	case addr, ok := <-lines:
		if !ok {
			s.stop()
			return nil, errors.New("gofakes3 exited before listening")
		}
		s.endpoint = "http://" + addr
	case <-time.After(objectStoreStartTimeout):
		s.stop()
		return nil, fmt.Errorf("gofakes3 did not listen within %s", objectStoreStartTimeout)
	}
	if err := s.request(ctx, http.MethodPut, "/"+s.bucket); err != nil {
		s.stop()
		return nil, fmt.Errorf("create bucket: %w", err)
	}
	return s, nil
}

// request sends one unsigned request, which moto accepts.
func (s *objectStore) request(ctx context.Context, method, path string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.endpoint+path, strings.NewReader(""))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	return nil
}

// bucketURL is the bucket's s3:// URL for rsm.config.bucket.url.
func (s *objectStore) bucketURL() string {
	return fmt.Sprintf("s3://%s?endpoint=%s&use_path_style=true&region=us-east-1", s.bucket, s.endpoint)
}

// stop kills the server and its process group; the objects go with it.
func (s *objectStore) stop() {
	if s.root != "" {
		defer os.RemoveAll(s.root)
	}
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}
