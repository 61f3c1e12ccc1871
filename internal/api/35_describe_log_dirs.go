package api

// DescribeLogDirs (key 35), versions 1-5.
//
// Behavior:
//   - Lists every log dir with the size of each replica in it, led or
//     followed (as Kafka lists every log of the broker); a null topic list
//     means every topic. v4+ adds the dir's total and usable
//     bytes (statfs).
//   - A replica moving to another dir (AlterReplicaLogDirs) is listed
//     twice: in its current dir, and in the destination dir with is_future
//     set, the bytes copied so far and offset_lag, how far the copy's log
//     end is behind the current log's. The current replica's offset_lag is
//     0, as Kafka's max(high watermark - log end, 0) always is for it.
//   - A dir that is missing or had a storage error answers
//     KAFKA_STORAGE_ERROR for that dir, with no topics, as Kafka lists an
//     offline dir.
//   - v5 (KIP-1066) adds is_cordoned: always false, as Samsa has no
//     cordoning of log dirs (log.dirs.cordoned is not a key here).

import (
	"path/filepath"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(35, 1, 5, handleDescribeLogDirs) }

func handleDescribeLogDirs(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeLogDirsRequest)
	if !b.authorizeCluster(c, opDescribe) {
		c.reply(clusterDeniedResponse(req, c.version))
		return
	}
	wanted := map[string]map[int32]bool{}
	for _, t := range req.Topics {
		ps := map[int32]bool{}
		for _, p := range t.Partitions {
			ps[p] = true
		}
		wanted[t.Topic] = ps
	}
	byDir := map[string]map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
	for _, p := range b.Partitions.LogDirReplicas() {
		if req.Topics != nil {
			ps, ok := wanted[p.Topic]
			if !ok || !ps[p.Partition] {
				continue
			}
		}
		if byDir[p.Dir] == nil {
			byDir[p.Dir] = map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
		}
		dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		dp.Partition = p.Partition
		dp.Size = p.Size
		byDir[p.Dir][p.Topic] = append(byDir[p.Dir][p.Topic], dp)
	}
	for _, mv := range b.Partitions.LogDirMoves() {
		if req.Topics != nil {
			ps, ok := wanted[mv.Topic]
			if !ok || !ps[mv.Partition] {
				continue
			}
		}
		if byDir[mv.FutureDir] == nil {
			byDir[mv.FutureDir] = map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
		}
		dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		dp.Partition = mv.Partition
		dp.Size = mv.FutureSize
		dp.OffsetLag = mv.OffsetLag
		dp.IsFuture = true
		byDir[mv.FutureDir][mv.Topic] = append(byDir[mv.FutureDir][mv.Topic], dp)
	}
	resp := kmsg.NewPtrDescribeLogDirsResponse()
	for _, dir := range b.Config().LogDirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			abs = dir
		}
		d := kmsg.NewDescribeLogDirsResponseDir()
		d.Dir = abs
		d.TotalBytes, d.UsableBytes = -1, -1
		if !b.Partitions.LogDirOnline(abs) {
			d.ErrorCode = kerr.KafkaStorageError.Code
			resp.Dirs = append(resp.Dirs, d)
			continue
		}
		var st syscall.Statfs_t
		if syscall.Statfs(dir, &st) == nil {
			d.TotalBytes = int64(st.Blocks) * st.Bsize
			d.UsableBytes = int64(st.Bavail) * st.Bsize
		}
		topics := byDir[dir]
		if topics == nil {
			topics = byDir[abs]
		}
		for name, parts := range topics {
			dt := kmsg.NewDescribeLogDirsResponseDirTopic()
			dt.Topic = name
			dt.Partitions = parts
			d.Topics = append(d.Topics, dt)
		}
		resp.Dirs = append(resp.Dirs, d)
	}
	c.reply(resp)
}
