// Command fakes3 serves the S3 API of gofakes3 (github.com/johannesboyne/gofakes3)
// over a directory, as the second S3-compatible implementation the tiered
// storage tests run against beside moto_server. blobtest.StartFakeS3 builds
// and starts it; it is a test tool, not part of the samsa binary.
//
//	fakes3 -root DIR [-addr 127.0.0.1:0]
//
// Buckets are directories under DIR/buckets and objects files beneath them
// (gofakes3's s3afero multi-bucket backend), so a ranged GET reads only the
// bytes it returns. The server prints "listening HOST:PORT" on stdout once
// it accepts connections and serves until it is killed.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakes3:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback: this is a test server)")
	root := flag.String("root", "", "directory holding the buckets")
	verbose := flag.Bool("v", false, "log every request to stderr")
	flag.Parse()
	if *root == "" {
		return errors.New("-root is required")
	}
	fs, err := s3afero.FsPath(*root, s3afero.FsPathCreateAll)
	if err != nil {
		return err
	}
	backend, err := s3afero.MultiBucket(fs)
	if err != nil {
		return err
	}
	logger := gofakes3.DiscardLog()
	if *verbose {
		logger = gofakes3.GlobalLog()
	}
	faker := gofakes3.New(backend, gofakes3.WithLogger(logger))
	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening %s\n", listener.Addr())
	server := &http.Server{Handler: faker.Server(), ReadHeaderTimeout: 30 * time.Second}
	return server.Serve(listener)
}
