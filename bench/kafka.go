package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/samsa-streaming/samsa/internal/kafkaref"
)

// Apache Kafka is the reference peer: a single combined-role KRaft node
// (internal/kafkaref) with Kafka's defaults and the single-node settings
// of Kafka's own config/server.properties, a 1 GiB heap as
// kafka-server-start.sh sets, and its log dir under -workdir, on the same
// disk as Samsa's. Its CPU time and peak RSS are the JVM process's, read
// from /proc like a child's.

// kafkaJars resolves Kafka's classpath once per process; resolving may
// run Maven.
var kafkaJars = sync.OnceValues(func() (string, error) {
	return kafkaref.Classpath(context.Background())
})

// needsKafka reports whether the selected targets or workloads run Kafka's
// jars.
func (o *options) needsKafka() bool {
	for _, t := range o.targets {
		if t == roleKafka {
			return true
		}
	}
	for _, w := range o.selectedWorkloads() {
		if w.needsKafkaTools {
			return true
		}
	}
	return false
}

// startKafka starts a fresh Kafka node under workDir. Overrides are extra
// server.properties lines.
func startKafka(workDir string, overrides []string) (*brokerProcess, error) {
	classpath, err := kafkaJars()
	if err != nil {
		return nil, fmt.Errorf("%w (run with -targets samsa,kfake to leave Kafka out)", err)
	}
	dir, err := os.MkdirTemp(workDir, "samsa-bench-kafka-")
	if err != nil {
		return nil, err
	}
	node, err := kafkaref.Start(context.Background(), kafkaref.Config{
		Classpath: classpath, Dir: dir, Overrides: overrides,
		StartTimeout: brokerStartTimeout * 3, StopTimeout: brokerStopTimeout,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &brokerProcess{role: roleKafka, addr: node.Addr, dir: dir, kafka: node}, nil
}
