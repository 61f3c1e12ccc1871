//go:build tools

// Package tools pins modules that the project's packages, tests and compat
// suite use, so that go.mod lists them before the code that imports them lands.
package tools

import (
	_ "github.com/IBM/sarama"
	_ "github.com/golang/snappy"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/pierrec/lz4/v4"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/segmentio/kafka-go"
	_ "github.com/spf13/cobra"
	_ "github.com/twmb/franz-go/pkg/kadm"
	_ "github.com/twmb/franz-go/pkg/kfake"
	_ "github.com/twmb/franz-go/pkg/kgo"
	_ "github.com/twmb/franz-go/pkg/kmsg"
	_ "go.etcd.io/raft/v3"
	_ "golang.org/x/sys/unix"
)
