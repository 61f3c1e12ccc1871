package cli

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
)

// tieredOffsets is where a tiered partition's data lives (KIP-405), from
// ListOffsets: the log start offset (-2, in the remote tier), the first
// local offset (-4) and the highest offset copied to the remote tier (-5,
// KIP-1005; -1 when none is). Records in [LogStart, LocalStart) are read
// from the bucket only. Their size in bytes is not in Kafka's protocol;
// the broker exports it as samsa_remote_log_size_bytes.
type tieredOffsets struct {
	LogStart    int64  `json:"log_start_offset"`
	LocalStart  int64  `json:"local_log_start_offset"`
	RemoteEnd   int64  `json:"remote_end_offset"`
	RemoteOnly  int64  `json:"remote_only_offsets"`
	ErrorString string `json:"error,omitempty"`
}

// tieredColumns are the partition table's columns of tiered topics.
var tieredColumns = []string{"REMOTE", "LOCAL-START", "REMOTE-ONLY"}

func (o *tieredOffsets) cells() []any {
	if o == nil {
		return []any{"-", "-", "-"}
	}
	if o.ErrorString != "" {
		return []any{"error: " + o.ErrorString, "-", "-"}
	}
	remote := "none copied"
	if o.RemoteEnd >= 0 {
		remote = fmt.Sprintf("%d-%d", o.LogStart, o.RemoteEnd)
	}
	return []any{remote, o.LocalStart, o.RemoteOnly}
}

func anyTiered(described []describedTopic) bool {
	for _, d := range described {
		if d.Configs["remote.storage.enable"] == "true" {
			return true
		}
	}
	return false
}

// addTieredOffsets fills the tiered offsets of the partitions of topics
// with remote.storage.enable=true.
func addTieredOffsets(ctx context.Context, admin *kadm.Client, described []describedTopic) error {
	var topics []string
	for _, d := range described {
		if d.Configs["remote.storage.enable"] == "true" {
			topics = append(topics, d.Topic)
		}
	}
	if len(topics) == 0 {
		return nil
	}
	starts, err := admin.ListStartOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list log start offsets: %w", err)
	}
	locals, err := admin.ListLocalLogStartOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list local log start offsets: %w", err)
	}
	remotes, err := admin.ListLatestRemoteOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list latest tiered offsets: %w", err)
	}
	for i := range described {
		d := &described[i]
		if d.Configs["remote.storage.enable"] != "true" {
			continue
		}
		for j := range d.Partitions {
			p := &d.Partitions[j]
			start, _ := starts.Lookup(d.Topic, p.Partition)
			local, _ := locals.Lookup(d.Topic, p.Partition)
			remote, _ := remotes.Lookup(d.Topic, p.Partition)
			o := &tieredOffsets{LogStart: start.Offset, LocalStart: local.Offset, RemoteEnd: remote.Offset}
			for _, err := range []error{start.Err, local.Err, remote.Err} {
				if err != nil && o.ErrorString == "" {
					o.ErrorString = err.Error()
				}
			}
			o.RemoteOnly = max(0, o.LocalStart-o.LogStart)
			p.Tiered = o
		}
	}
	return nil
}
