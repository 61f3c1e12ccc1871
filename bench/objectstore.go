package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// objectStore is an S3-compatible server on loopback that a tiered
// workload's Samsa node uses as its bucket: moto_server (Python
// moto[server], as in the tiered-storage tests), started fresh for each run
// and killed after it, so every run starts from an empty bucket.
type objectStore struct {
	endpoint string
	bucket   string
	cmd      *exec.Cmd
}

const (
	// objectStoreStartTimeout bounds the wait for moto_server to answer.
	objectStoreStartTimeout = 30 * time.Second
	objectStoreBucket       = "bench"
)

// startObjectStore starts moto_server on a free loopback port and creates
// the bucket. The AWS SDK in the broker child finds dummy credentials in
// the environment (moto checks no signatures), so none are searched for.
func startObjectStore(ctx context.Context) (*objectStore, error) {
	path, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, errors.New("moto_server is not installed (pip install 'moto[server]'); the tiered workloads need it")
	}
	for key, value := range map[string]string{"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1"} {
		if err := os.Setenv(key, value); err != nil {
			return nil, err
		}
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
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}
