package api

// DescribeLogDirs (key 35), versions 1-5.
//
// Behavior:
//   - Lists every log dir with the size of each replica in it, led or
//     followed here, as Kafka does; a null topic list means every topic.
//     v4+ adds the dir's total and usable bytes (statfs).
//   - offset_lag is 0 (no future replicas) and is_future false.
//   - v5 (KIP-1066) adds is_cordoned: always false, as Samsa has no
//     cordoning of log dirs (log.dirs.cordoned is not a key here).

import (
	"path/filepath"
	"syscall"

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
	for _, p := range b.Partitions.Hosted() {
		if req.Topics != nil {
			ps, ok := wanted[p.Topic]
			if !ok || !ps[p.Index] {
				continue
			}
		}
		dir := filepath.Dir(p.Log.Dir())
		if byDir[dir] == nil {
			byDir[dir] = map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
		}
		dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		dp.Partition = p.Index
		dp.Size = p.Log.Size()
		byDir[dir][p.Topic] = append(byDir[dir][p.Topic], dp)
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
