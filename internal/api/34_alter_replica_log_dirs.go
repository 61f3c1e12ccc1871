package api

// AlterReplicaLogDirs (key 34), versions 1-2.
//
// Behavior:
//   - Authorized as ALTER on the CLUSTER; denied, every partition answers
//     CLUSTER_AUTHORIZATION_FAILED.
//   - Moves each named replica hosted on this broker to the named log dir
//     (an absolute path among log.dirs) while it keeps serving: a future
//     log is filled there and swapped in once caught up
//     (partition/logdir_move.go). The answer comes at once; DescribeLogDirs
//     shows the future replica (is_future, offset_lag) until the swap.
//   - A dir not in log.dirs answers LOG_DIR_NOT_FOUND; a configured dir
//     that is missing or had a storage error answers KAFKA_STORAGE_ERROR; a
//     partition with no replica here answers REPLICA_NOT_AVAILABLE (its
//     next log here is created in that dir, as Kafka does); a topic name too
//     long for the future dir's name answers INVALID_TOPIC_EXCEPTION.
//   - Naming the dir the replica is already in cancels a move in progress.
//   - v2 is the flexible version of v1; v0 was removed in Kafka 4.0.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/partition"
)

func init() { register(34, 1, 2, handleAlterReplicaLogDirs) }

// maxFileNameBytes is the longest file name Kafka lets a future dir have.
const maxFileNameBytes = 255

func handleAlterReplicaLogDirs(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.AlterReplicaLogDirsRequest)
	resp := kmsg.NewPtrAlterReplicaLogDirsResponse()
	allowed := b.authorizeCluster(c, opAlter)
	byTopic := map[string]int{}
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			i, ok := byTopic[t.Topic]
			if !ok {
				i = len(resp.Topics)
				byTopic[t.Topic] = i
				rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
				rt.Topic = t.Topic
				resp.Topics = append(resp.Topics, rt)
			}
			for _, index := range t.Partitions {
				rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				rp.Partition = index
				if allowed {
					rp.ErrorCode = alterLogDirCode(b, t.Topic, index, d.Dir)
				} else {
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				}
				resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
			}
		}
	}
	if allowed {
		b.wakeLogDirMover()
	}
	c.reply(resp)
}

// alterLogDirCode starts one move and returns its error code.
func alterLogDirCode(b *Broker, topic string, index int32, dir string) int16 {
	if log.FutureDirNameLength(log.TopicPartition{Topic: topic, Partition: index}) > maxFileNameBytes {
		return kerr.InvalidTopicException.Code
	}
	err := b.Partitions.AlterLogDir(topic, index, dir)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, log.ErrLogDirNotFound):
		return kerr.LogDirNotFound.Code
	case errors.Is(err, partition.ErrReplicaNotAvailable):
		return kerr.ReplicaNotAvailable.Code
	default:
		// Offline dirs and I/O errors creating the future log.
		b.Logger.Warn("alter replica log dir", "topic", topic, "partition", index, "dir", dir, "err", err)
		return kerr.KafkaStorageError.Code
	}
}

// wakeLogDirMover tells the driver of log dir moves a move may be waiting.
func (b *Broker) wakeLogDirMover() {
	if b.LogDirMoverWake != nil {
		b.LogDirMoverWake()
	}
}
