package tier

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// logAdapter presents an internal/log Log as a PartitionLog, as the
// server's adapter does.
type logAdapter struct{ l *log.Log }

func (a logAdapter) ClosedSegments() []LocalSegment {
	var out []LocalSegment
	for _, s := range a.l.ClosedSegments() {
		out = append(out, LocalSegment{BaseOffset: s.BaseOffset, EndOffset: s.EndOffset, SizeBytes: s.SizeBytes,
			MaxTimestampMs: s.MaxTimestampMs, Files: map[FileKind]string{
				FileSegment: s.LogPath, FileOffsetIndex: s.IndexPath, FileTimeIndex: s.TimeIndexPath, FileTransactionIndex: s.TxnIndexPath}})
	}
	return out
}
func (a logAdapter) LastStableOffset() int64 { return a.l.LogEndOffset() }
func (a logAdapter) LogStartOffset() int64   { return a.l.LogStartOffset() }
func (a logAdapter) LocalSizeBytes() int64   { return a.l.Size() }
func (a logAdapter) LeaderEpochs() []EpochEntry {
	var out []EpochEntry
	for _, e := range a.l.EpochCache().Entries() {
		out = append(out, EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset})
	}
	return out
}
func (a logAdapter) ProducerSnapshotPath(int64) string { return "" }

func newTestLog(t *testing.T) *log.Log {
	t.Helper()
	m, err := log.NewManager(vfs.Default, []string{t.TempDir()}, log.ManagerOptions{ClusterID: "tier-test", NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	l, err := m.Create(log.TopicPartition{Topic: "tiered", Partition: 3}, testPartition.TopicID, log.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// appendSegment appends n records at timestamp ts and rolls.
func appendSegment(t *testing.T, l *log.Log, n int, ts int64, roll bool) {
	appendSegmentAtEpoch(t, l, n, ts, roll, 0)
}

func appendSegmentAtEpoch(t *testing.T, l *log.Log, n int, ts int64, roll bool, epoch int32) {
	t.Helper()
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = ts
	records := make([]record.Record, n)
	for i := range records {
		records[i] = record.Record{Key: []byte{byte(i)}, Value: bytes.Repeat([]byte{byte(i)}, 200)}
	}
	batch, err := record.Build(opts, records)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(batch, epoch); err != nil {
		t.Fatal(err)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	if roll {
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestManagerOffloadsRealSegments drives the remote log manager over a real
// partition log on each bucket kind: the closed segments below the LSO go
// up, their objects equal the Kafka-format files byte for byte, a second
// run copies nothing, a task of a deposed leader copies nothing, and total
// retention and DeleteRecords expire remote segments.
func TestManagerOffloadsRealSegments(t *testing.T) {
	ctx := context.Background()
	for name, bucket := range testBuckets(t) {
		t.Run(name, func(t *testing.T) {
			l := newTestLog(t)
			nowMs := int64(10_000_000)
			for i := range 3 {
				appendSegment(t, l, 20, nowMs-int64(3-i)*1000, true)
			}
			appendSegment(t, l, 5, nowMs, false) // the active segment stays local
			store := NewStore(StoreConfig{Bucket: bucket})
			manager := NewManager(ManagerConfig{Store: store, BrokerID: 1, CopierThreads: 2, OrphanGraceMs: 60_000,
				Now: func() time.Time { return time.UnixMilli(nowMs) }})
			task := Task{Partition: testPartition, Log: logAdapter{l}, LeaderEpoch: 0,
				Settings: TopicSettings{RetentionMs: -1, RetentionBytes: -1}}

			result, err := manager.Run(ctx, task)
			if err != nil {
				t.Fatal(err)
			}
			if len(result.Copied) != 3 || result.CopiedOffset != 59 {
				t.Fatalf("copied %d segments to offset %d", len(result.Copied), result.CopiedOffset)
			}
			for i, closed := range l.ClosedSegments() {
				m := result.Copied[i]
				for kind, path := range map[FileKind]string{FileSegment: closed.LogPath, FileOffsetIndex: closed.IndexPath, FileTimeIndex: closed.TimeIndexPath} {
					local, _ := os.ReadFile(path)
					remote, err := store.ReadFile(ctx, &m, kind)
					if len(local) == 0 {
						continue
					}
					if err != nil || !bytes.Equal(local, remote) {
						t.Fatalf("segment %d %s: local %d bytes, remote %d, %v", closed.BaseOffset, kind.ObjectName(), len(local), len(remote), err)
					}
				}
			}
			again, err := manager.Run(ctx, task)
			if err != nil || len(again.Copied) != 0 || len(again.View.Segments) != 3 {
				t.Fatalf("second run: copied %d, view %d, %v", len(again.Copied), len(again.View.Segments), err)
			}

			// The log moved to epoch 2 (a new leader wrote): a task of
			// epoch 0, a deposed leader's, copies nothing.
			appendSegmentAtEpoch(t, l, 20, nowMs, true, 2)
			if _, err := manager.Run(ctx, task); !errors.Is(err, ErrNotLeaderEpoch) {
				t.Fatalf("stale leader: %v", err)
			}
			task.LeaderEpoch = 2
			// remote.log.copy.disable stops copying and keeps what is there.
			disabled := task
			disabled.Settings.CopyDisable = true
			if r, err := manager.Run(ctx, disabled); err != nil || len(r.Copied) != 0 || len(r.View.Segments) != 3 {
				t.Fatalf("copy disabled: %+v %v", r.Copied, err)
			}

			// Total retention by time expires the two oldest remote segments.
			byTime := task
			byTime.Settings.RetentionMs = 1500
			r, err := manager.Run(ctx, byTime)
			if err != nil || len(r.Copied) != 1 || len(r.Expired) != 2 || r.View.StartOffset() != 40 {
				t.Fatalf("retention.ms: copied %d expired %d start %d %v", len(r.Copied), len(r.Expired), r.View.StartOffset(), err)
			}
			// DeleteRecords below 60 expires the segment ending at 59.
			if err := l.DeleteRecordsBefore(60); err != nil {
				t.Fatal(err)
			}
			r, err = manager.Run(ctx, task)
			if err != nil || len(r.Expired) != 1 || r.View.StartOffset() != 60 {
				t.Fatalf("below log start: expired %d start %d %v", len(r.Expired), r.View.StartOffset(), err)
			}
			if err := store.DeleteTopic(ctx, testPartition.TopicID); err != nil {
				t.Fatal(err)
			}
			if n := countObjects(t, bucket, ""); n != 0 {
				t.Fatalf("%d objects after topic deletion", n)
			}
		})
	}
}

// TestLocalRetentionWaitsForCopies guards a real log's retention with the
// copied offset: nothing is deleted before it is in the remote tier, then
// exactly the copied segments go; DeleteRecords still deletes below the
// log start.
func TestLocalRetentionWaitsForCopies(t *testing.T) {
	l := newTestLog(t)
	for range 4 {
		appendSegment(t, l, 10, 1000, true)
	}
	cfg := l.Config()
	cfg.RetentionMs = 1
	l.UpdateConfig(cfg)
	future := time.UnixMilli(1_000_000)
	l.SetRemoteCopiedOffset(-1)
	if n, err := l.EnforceRetention(future); err != nil || n != 0 {
		t.Fatalf("deleted %d uncopied segments, %v", n, err)
	}
	l.SetRemoteCopiedOffset(19) // the first two segments are copied
	if n, err := l.EnforceRetention(future); err != nil || n != 2 || l.LogStartOffset() != 20 {
		t.Fatalf("deleted %d, log start %d, %v", n, l.LogStartOffset(), err)
	}
	if err := l.DeleteRecordsBefore(30); err != nil {
		t.Fatal(err)
	}
	if _, err := l.EnforceRetention(future); err != nil || len(l.ClosedSegments()) != 1 {
		t.Fatalf("below the log start: %d closed segments left, %v", len(l.ClosedSegments()), err)
	}
	l.ClearRemoteGuard()
	if n, err := l.EnforceRetention(future); err != nil || n != 1 {
		t.Fatalf("unguarded: deleted %d, %v", n, err)
	}
}

// TestManagerCopyQuota: with remote.log.manager.copy.max.bytes.per.second
// below one segment per second, a task copies one segment and stops; the
// next ones in the same window copy nothing; once the window's rate is
// under the limit copying goes on, and every segment is copied in the end.
func TestManagerCopyQuota(t *testing.T) {
	ctx := context.Background()
	bucket := testBuckets(t)["mem"]
	l := newTestLog(t)
	nowMs := int64(10_000_000)
	for range 4 {
		appendSegment(t, l, 20, nowMs, true)
	}
	appendSegment(t, l, 1, nowMs, false)
	segmentBytes := l.ClosedSegments()[0].SizeBytes
	manager := NewManager(ManagerConfig{Store: NewStore(StoreConfig{Bucket: bucket}), BrokerID: 1, OrphanGraceMs: 60_000,
		CopyMaxBytesPerSecond: segmentBytes / 40, Now: func() time.Time { return time.UnixMilli(nowMs) }})
	task := Task{Partition: testPartition, Log: logAdapter{l}, Settings: TopicSettings{RetentionMs: -1, RetentionBytes: -1}}
	result, err := manager.Run(ctx, task)
	if err != nil || len(result.Copied) != 1 || !result.CopyThrottled {
		t.Fatalf("first task: copied %d, throttled %v, %v", len(result.Copied), result.CopyThrottled, err)
	}
	nowMs += 1000
	if result, err = manager.Run(ctx, task); err != nil || len(result.Copied) != 0 || !result.CopyThrottled {
		t.Fatalf("a task one second later: copied %d, throttled %v, %v", len(result.Copied), result.CopyThrottled, err)
	}
	copied := 1
	for range 100 {
		nowMs += 5000
		result, err := manager.Run(ctx, task)
		if err != nil {
			t.Fatal(err)
		}
		if len(result.Copied) > 1 {
			t.Fatalf("a task under the quota copied %d segments", len(result.Copied))
		}
		copied += len(result.Copied)
		if !result.CopyThrottled && result.CopiedOffset == l.ClosedSegments()[3].EndOffset {
			break
		}
	}
	if copied != 4 {
		t.Fatalf("%d segments copied in the end, want 4", copied)
	}
	manager.SetCopyMaxBytesPerSecond(0) // unbounded
	if result, err = manager.Run(ctx, task); err != nil || result.CopyThrottled {
		t.Fatalf("unbounded: throttled %v, %v", result.CopyThrottled, err)
	}
}

// TestNewLeaderSegmentsRolledElsewhereKeepOldUploads: the old leader
// (epoch 0) copied its segment [0, 29]; the new leader (epoch 1 from
// offset 60) rolled at 20, so its closed segments are [0, 19] and
// [20, 79]. It copies [20, 79], which starts inside the old upload, and
// the old upload must go on serving [0, 19] on every later run: nothing
// is collected, and the remote tier has every offset from 0.
func TestNewLeaderSegmentsRolledElsewhereKeepOldUploads(t *testing.T) {
	ctx := context.Background()
	for name, bucket := range testBuckets(t) {
		t.Run(name, func(t *testing.T) {
			store := NewStore(StoreConfig{Bucket: bucket})
			settings := TopicSettings{RetentionMs: -1, RetentionBytes: -1}

			old := newTestLog(t)
			appendSegment(t, old, 30, 1000, true)
			appendSegment(t, old, 5, 1000, false)
			oldManager := NewManager(ManagerConfig{Store: store, BrokerID: 1, OrphanGraceMs: 60_000})
			r, err := oldManager.Run(ctx, Task{Partition: testPartition, Log: logAdapter{old}, LeaderEpoch: 0, Settings: settings})
			if err != nil || r.CopiedOffset != 29 {
				t.Fatalf("old leader copied to %d, %v", r.CopiedOffset, err)
			}

			successor := newTestLog(t)
			appendSegment(t, successor, 20, 1000, true)
			appendSegmentAtEpoch(t, successor, 40, 1000, false, 0)
			appendSegmentAtEpoch(t, successor, 20, 1000, true, 1)
			appendSegmentAtEpoch(t, successor, 5, 1000, false, 1)
			manager := NewManager(ManagerConfig{Store: store, BrokerID: 2, OrphanGraceMs: 60_000})
			task := Task{Partition: testPartition, Log: logAdapter{successor}, LeaderEpoch: 1, Settings: settings}
			for run := range 3 {
				r, err := manager.Run(ctx, task)
				if err != nil {
					t.Fatal(err)
				}
				if r.Collected != 0 || r.View.StartOffset() != 0 || r.View.EndOffset() != 79 || len(r.View.Segments) != 2 ||
					r.View.Segments[0].EndOffset != 19 || r.View.Segments[1].BaseOffset != 20 {
					t.Fatalf("run %d: collected %d, view %+v", run, r.Collected, r.View.Segments)
				}
				if run == 0 && len(r.Copied) != 1 {
					t.Fatalf("first run copied %d segments", len(r.Copied))
				}
			}
		})
	}
}
