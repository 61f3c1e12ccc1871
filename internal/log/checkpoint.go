package log

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// Checkpoint file names in each log dir, as Kafka names them.
const (
	RecoveryPointCheckpointFile  = "recovery-point-offset-checkpoint"
	LogStartOffsetCheckpointFile = "log-start-offset-checkpoint"
	ReplicationCheckpointFile    = "replication-offset-checkpoint"
	CleanerCheckpointFile        = "cleaner-offset-checkpoint"
	// LeaderEpochCheckpointFile sits in each partition directory.
	LeaderEpochCheckpointFile = "leader-epoch-checkpoint"
	// checkpointVersion is the only version Kafka writes for these files.
	checkpointVersion = 0
	// maxCheckpointBytes bounds what a checkpoint read will accept
	// (millions of partitions' worth).
	maxCheckpointBytes = 256 << 20
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// writeFileAtomic replaces path with data so that a crash leaves either the
// old or the new contents: write path.tmp, fsync it, rename it over path,
// fsync the directory.
func writeFileAtomic(fsys vfs.FS, path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return storageError("create "+tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return storageError("write "+tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return storageError("sync "+tmp, err)
	}
	if err := f.Close(); err != nil {
		return storageError("close "+tmp, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return storageError("rename "+tmp, err)
	}
	return storageError("sync dir", fsys.SyncDir(filepath.Dir(path)))
}

// encodeCheckpoint renders Kafka's checkpoint text: a version line, a count
// line, then one line per entry.
func encodeCheckpoint(lines []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", checkpointVersion, len(lines))
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// readCheckpointLines parses a checkpoint file into its entry lines. A
// missing file returns an error matching fs.ErrNotExist; an empty file
// (Kafka creates them so) has no entries.
func readCheckpointLines(fsys vfs.FS, path string) ([]string, error) {
	f, err := fsys.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, storageError("open "+path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(&readerAt{f: f}, maxCheckpointBytes))
	if err != nil {
		return nil, storageError("read "+path, err)
	}
	return parseCheckpoint(path, data)
}

func parseCheckpoint(path string, data []byte) ([]string, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	if !sc.Scan() {
		return nil, nil
	}
	version, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil || version != checkpointVersion {
		return nil, corruptError(fmt.Sprintf("checkpoint %s: version line %q", path, sc.Text()), nil)
	}
	if !sc.Scan() {
		return nil, nil
	}
	count, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil || count < 0 {
		return nil, corruptError(fmt.Sprintf("checkpoint %s: count line %q", path, sc.Text()), nil)
	}
	lines := make([]string, 0, min(count, 1<<16))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, corruptError(fmt.Sprintf("checkpoint %s", path), err)
	}
	if len(lines) != count {
		return nil, corruptError(fmt.Sprintf("checkpoint %s: expected %d entries, found %d", path, count, len(lines)), nil)
	}
	return lines, nil
}

// readerAt adapts a vfs.File to io.Reader.
type readerAt struct {
	f   vfs.File
	off int64
}

func (r *readerAt) Read(p []byte) (int, error) {
	n, err := r.f.ReadAt(p, r.off)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// ReadOffsetCheckpoint reads a Kafka offset checkpoint file (recovery point,
// log start offset, replication or cleaner checkpoint). A missing file reads
// as empty.
func ReadOffsetCheckpoint(fsys vfs.FS, path string) (map[TopicPartition]int64, error) {
	lines, err := readCheckpointLines(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[TopicPartition]int64, len(lines))
	for _, line := range lines {
		fields := strings.Fields(line)
		if len(fields) != 3 {
			return nil, corruptError(fmt.Sprintf("checkpoint %s: malformed line %q", path, line), nil)
		}
		partition, err1 := strconv.ParseInt(fields[1], 10, 32)
		offset, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, corruptError(fmt.Sprintf("checkpoint %s: malformed line %q", path, line), nil)
		}
		out[TopicPartition{Topic: fields[0], Partition: int32(partition)}] = offset
	}
	return out, nil
}

// WriteOffsetCheckpoint atomically writes offsets in Kafka's checkpoint
// format, one "topic partition offset" line per entry, sorted.
func WriteOffsetCheckpoint(fsys vfs.FS, path string, offsets map[TopicPartition]int64) error {
	tps := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	lines := make([]string, len(tps))
	for i, tp := range tps {
		lines[i] = fmt.Sprintf("%s %d %d", tp.Topic, tp.Partition, offsets[tp])
	}
	return writeFileAtomic(fsys, path, encodeCheckpoint(lines))
}
