package log

// # <offset>.snapshot: producer-state snapshots
//
// A snapshot file holds the partition's producer state (package partition
// encodes and decodes it, in Kafka's format) as it was after every batch
// below <offset>, the 20-digit file name. The partition writes one when a
// segment rolls (named by the new segment's base offset) and at clean
// shutdown (named by the log end offset); at startup it loads the newest
// snapshot and replays only the batches after it. Files are replaced
// atomically (write <name>.tmp, fsync, rename, fsync the directory), so a
// snapshot is either whole or absent; leftover .tmp files are removed when
// the log opens.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
)

const producerSnapshotSuffix = ".snapshot"

// maxProducerSnapshotBytes bounds the snapshot a log will read back: far
// above the 46 bytes per producer of any real partition.
const maxProducerSnapshotBytes = 256 << 20

// WriteProducerSnapshot atomically writes data as <offset>.snapshot.
func (l *Log) WriteProducerSnapshot(offset int64, data []byte) error {
	l.noSnapshots.Store(false)
	return writeFileAtomic(l.fs, segmentFileName(l.dir, offset, producerSnapshotSuffix), data)
}

// ProducerSnapshotOffsets lists the offsets of the snapshot files, ascending.
func (l *Log) ProducerSnapshotOffsets() ([]int64, error) {
	if l.noSnapshots.Load() {
		return nil, nil
	}
	entries, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return nil, storageError("list log dir", err)
	}
	var out []int64
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if off, suffix, ok := parseSegmentFileName(e.Name()); ok && suffix == producerSnapshotSuffix {
			out = append(out, off)
		}
	}
	slices.Sort(out)
	return out, nil
}

// ReadProducerSnapshot returns the bytes of <offset>.snapshot.
func (l *Log) ReadProducerSnapshot(offset int64) ([]byte, error) {
	f, err := l.fs.Open(segmentFileName(l.dir, offset, producerSnapshotSuffix))
	if err != nil {
		return nil, storageError("open producer snapshot", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, storageError("stat producer snapshot", err)
	}
	if st.Size() > maxProducerSnapshotBytes {
		return nil, corruptError(fmt.Sprintf("producer snapshot %s has %d bytes", f.Name(), st.Size()), nil)
	}
	buf := make([]byte, st.Size())
	if n, err := f.ReadAt(buf, 0); err != nil && !(errors.Is(err, io.EOF) && n == len(buf)) {
		return nil, storageError("read producer snapshot", err)
	}
	return buf, nil
}

// DeleteProducerSnapshot removes <offset>.snapshot if it exists.
func (l *Log) DeleteProducerSnapshot(offset int64) error {
	err := l.fs.Remove(segmentFileName(l.dir, offset, producerSnapshotSuffix))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return storageError("remove producer snapshot", err)
	}
	return nil
}
