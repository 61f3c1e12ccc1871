package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/samsa-streaming/samsa/internal/bench"
)

// The machine's limits, measured on the spot in every round so they drift
// with the load on the machine just as the brokers' figures do.

// limitChunkBytes is the write size of the throughput probes.
const limitChunkBytes = 1 << 20

// limitFileBytesMax bounds the files the short write probes create.
const limitFileBytesMax = 4 << 30

// sustainedFileBytesMax bounds the file of the sustained write probe: more
// than a produce run of 10 s writes at the limits seen on 2 cores.
const sustainedFileBytesMax = 32 << 30

// machineLimits are one round's measurements, in MB/s (10^6 bytes) and
// loopback round-trip latency.
type machineLimits struct {
	loopbackMBps  float64
	sendfileMBps  float64
	pageCacheMBps float64
	// sustainedMBps is pageCacheMBps over as long as a produce run: once
	// the dirty pages pass the kernel's writeback thresholds, writers are
	// held to the disk's pace, so this is what a broker storing a whole run
	// can reach.
	sustainedMBps float64
	fdatasyncMBps float64
	// storeMBps and storeCPUPerGB are the store probe's: what the least a
	// broker does with a produced byte, reading it from a loopback
	// connection and appending it to a file, costs in CPU seconds per GB
	// (10^9 bytes). Every broker's CPU per GB in includes that much.
	storeMBps     float64
	storeCPUPerGB float64
	roundTrip     bench.LatencySummary
}

// measureLimits probes for d each, and the sustained write for sustained
// (the length of a produce run).
func measureLimits(workDir string, d, sustained time.Duration) (machineLimits, error) {
	var l machineLimits
	var err error
	if l.loopbackMBps, err = loopbackThroughput(d); err != nil {
		return l, fmt.Errorf("loopback: %w", err)
	}
	if l.pageCacheMBps, err = fileWriteThroughput(workDir, d, false, limitFileBytesMax); err != nil {
		return l, fmt.Errorf("file write: %w", err)
	}
	if l.sustainedMBps, err = fileWriteThroughput(workDir, sustained, false, sustainedFileBytesMax); err != nil {
		return l, fmt.Errorf("sustained file write: %w", err)
	}
	if l.fdatasyncMBps, err = fileWriteThroughput(workDir, d, true, limitFileBytesMax); err != nil {
		return l, fmt.Errorf("file write with fdatasync: %w", err)
	}
	if l.storeMBps, l.storeCPUPerGB, err = storeThroughput(workDir, d); err != nil {
		return l, fmt.Errorf("loopback to file: %w", err)
	}
	if l.sendfileMBps, err = sendfileThroughput(workDir, d); err != nil {
		return l, fmt.Errorf("sendfile: %w", err)
	}
	if l.roundTrip, err = loopbackRoundTrip(d, bench.DefaultRecordBytes); err != nil {
		return l, fmt.Errorf("loopback round trip: %w", err)
	}
	return l, nil
}

// loopbackPair returns both ends of a TCP connection on 127.0.0.1.
func loopbackPair() (client, server net.Conn, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, nil, err
	}
	server = <-accepted
	if server == nil {
		client.Close()
		return nil, nil, errors.New("accept failed")
	}
	return client, server, nil
}

// loopbackThroughput streams 1 MiB writes over one loopback connection for
// d and returns the rate the reader saw.
func loopbackThroughput(d time.Duration) (float64, error) {
	client, server, err := loopbackPair()
	if err != nil {
		return 0, err
	}
	defer server.Close()
	go sendFor(client, d)
	mbps, _, err := readAll(server, nil)
	return mbps, err
}

// sendFor writes 1 MiB chunks to conn for d, then closes it.
func sendFor(conn net.Conn, d time.Duration) {
	defer conn.Close()
	buf := make([]byte, limitChunkBytes)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := conn.Write(buf); err != nil {
			return
		}
	}
}

// readAll drains conn until EOF, handing every read to sink unless it is
// nil, and returns the rate in MB/s from the first byte to the last and the
// bytes read.
func readAll(conn net.Conn, sink func([]byte) error) (mbps float64, total int64, err error) {
	buf := make([]byte, limitChunkBytes)
	var first time.Time
	for {
		n, err := conn.Read(buf)
		if total == 0 && n > 0 {
			first = time.Now()
		}
		if n > 0 && sink != nil {
			if err := sink(buf[:n]); err != nil {
				return 0, total, err
			}
		}
		total += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, total, err
		}
	}
	elapsed := time.Since(first)
	if total == 0 || elapsed <= 0 {
		return 0, total, errors.New("nothing received")
	}
	return float64(total) / elapsed.Seconds() / 1e6, total, nil
}

// fileWriteThroughput writes 1 MiB chunks sequentially to a new file for d
// or up to maxBytes (page cache), or with an fdatasync after every chunk,
// and returns MB/s. Removing the file drops its dirty pages unwritten, so
// the next probe or broker does not wait for them.
func fileWriteThroughput(dir string, d time.Duration, sync bool, maxBytes int64) (float64, error) {
	f, err := os.CreateTemp(dir, "samsa-bench-write-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, limitChunkBytes)
	for i := range buf {
		buf[i] = byte(i)
	}
	var total int64
	start := time.Now()
	for time.Since(start) < d && total < maxBytes {
		if _, err := f.Write(buf); err != nil {
			return 0, err
		}
		total += limitChunkBytes
		if sync {
			if err := fdatasync(f); err != nil {
				return 0, err
			}
		}
	}
	return float64(total) / time.Since(start).Seconds() / 1e6, nil
}

// storeThroughput streams 1 MiB writes over one loopback connection for d
// and appends what arrives to a new file, its reader locked to one OS
// thread, and returns the rate the reader saw and the reader thread's CPU
// seconds per GB: read(2) from the socket and write(2) into the page cache,
// the copies every broker makes of every produced byte (more, in a virtual
// machine that backs a page only when it is first touched). The file is
// removed, its dirty pages unwritten, so the next probe or broker does not
// wait for them.
func storeThroughput(dir string, d time.Duration) (mbps, cpuPerGB float64, err error) {
	f, err := os.CreateTemp(dir, "samsa-bench-store-")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	client, server, err := loopbackPair()
	if err != nil {
		return 0, 0, err
	}
	defer server.Close()
	go sendFor(client, d)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpuBefore, err := threadCPU()
	if err != nil {
		return 0, 0, err
	}
	mbps, total, err := readAll(server, func(b []byte) error {
		_, err := f.Write(b)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	cpuAfter, err := threadCPU()
	if err != nil {
		return 0, 0, err
	}
	return mbps, (cpuAfter - cpuBefore).Seconds() / (float64(total) / 1e9), nil
}

// sendfileThroughput writes a file into the page cache, then sends it over
// loopback with sendfile (io.Copy from *os.File to *net.TCPConn) for d.
func sendfileThroughput(dir string, d time.Duration) (float64, error) {
	const fileBytes = 256 << 20
	f, err := os.CreateTemp(dir, "samsa-bench-sendfile-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, limitChunkBytes)
	for written := 0; written < fileBytes; written += len(buf) {
		if _, err := f.Write(buf); err != nil {
			return 0, err
		}
	}
	client, server, err := loopbackPair()
	if err != nil {
		return 0, err
	}
	defer server.Close()
	go func() {
		defer client.Close()
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return
			}
			if _, err := io.Copy(client, f); err != nil {
				return
			}
		}
	}()
	mbps, _, err := readAll(server, nil)
	return mbps, err
}

// loopbackRoundTrip bounces a message of size bytes over loopback for d and
// returns the round-trip latency distribution: the floor under any
// request/response latency on this machine.
func loopbackRoundTrip(d time.Duration, size int) (bench.LatencySummary, error) {
	client, server, err := loopbackPair()
	if err != nil {
		return bench.LatencySummary{}, err
	}
	defer client.Close()
	go func() {
		defer server.Close()
		buf := make([]byte, size)
		for {
			if _, err := io.ReadFull(server, buf); err != nil {
				return
			}
			if _, err := server.Write(buf); err != nil {
				return
			}
		}
	}()
	var h bench.Histogram
	buf := make([]byte, size)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		start := time.Now()
		if _, err := client.Write(buf); err != nil {
			return bench.LatencySummary{}, err
		}
		if _, err := io.ReadFull(client, buf); err != nil {
			return bench.LatencySummary{}, err
		}
		h.Record(time.Since(start))
	}
	return h.Summary(), nil
}
