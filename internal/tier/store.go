package tier

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/samsa-streaming/samsa/internal/blob"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// Partition names a topic partition by its topic id.
type Partition struct {
	TopicID   [16]byte
	Partition int32
}

// LocalSegment is a closed local segment offered for upload: its offsets
// and the paths of its files (a kind with no path is skipped).
type LocalSegment struct {
	BaseOffset     int64
	EndOffset      int64 // last offset in the segment, inclusive
	SizeBytes      int64
	MaxTimestampMs int64
	Files          map[FileKind]string
}

// CopyRequest asks for one segment to be uploaded by the leader BrokerID at
// LeaderEpoch; LeaderEpochs are the leader's epoch entries up to the
// segment's end, stored as the segment's leader-epoch checkpoint.
type CopyRequest struct {
	Partition    Partition
	Segment      LocalSegment
	BrokerID     int32
	LeaderEpoch  int32
	LeaderEpochs []EpochEntry
}

// Store reads and writes the tiered data of partitions in one bucket.
type Store struct {
	bucket blob.Bucket
	fs     vfs.FS
	prefix string
	now    func() time.Time

	mu struct {
		sync.Mutex
		// finished caches the decoded copy-finished.meta of each upload
		// directory: the object is immutable, so a task reads it once.
		// Invariant: it holds only directories seen in the latest listing
		// of their partition, so it is bounded by the live uploads.
		finished map[string]SegmentMetadata
	}
}

// StoreConfig configures a Store.
type StoreConfig struct {
	Bucket blob.Bucket
	// FS reads the local segment files.
	FS vfs.FS
	// Prefix is rsm.config.bucket.prefix.
	Prefix string
	// Now is the clock of event timestamps; nil is time.Now.
	Now func() time.Time
}

// NewStore returns a Store.
func NewStore(cfg StoreConfig) *Store {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	s := &Store{bucket: cfg.Bucket, fs: cfg.FS, prefix: cfg.Prefix, now: cfg.Now}
	s.mu.finished = make(map[string]SegmentMetadata)
	return s
}

// Object names of the state records (see the package doc).
const (
	copyStartedObject   = "copy-started.meta"
	copyFinishedObject  = "copy-finished.meta"
	deleteStartedObject = "delete-started.meta"
)

// PartitionPrefix is the key prefix of every object of p.
func (s *Store) PartitionPrefix(p Partition) string {
	return fmt.Sprintf("%stier/v1/%s/%d/", s.prefix, hex.EncodeToString(p.TopicID[:]), p.Partition)
}

// TopicPrefix is the key prefix of every object of a topic.
func (s *Store) TopicPrefix(topicID [16]byte) string {
	return fmt.Sprintf("%stier/v1/%s/", s.prefix, hex.EncodeToString(topicID[:]))
}

// SegmentDir is the key prefix of one upload of one segment.
func (s *Store) SegmentDir(m *SegmentMetadata) string {
	return fmt.Sprintf("%s%020d-%s/", s.PartitionPrefix(Partition{m.TopicID, m.Partition}), m.BaseOffset, m.SegmentIDString())
}

// CopySegment uploads one segment: copy-started.meta, the files, then
// copy-finished.meta. On an error the upload is left as an orphan for
// CollectOrphans, never half visible: readers take only finished uploads.
func (s *Store) CopySegment(ctx context.Context, req CopyRequest) (SegmentMetadata, error) {
	seg := req.Segment
	m := SegmentMetadata{
		State: CopySegmentStarted, TopicID: req.Partition.TopicID, Partition: req.Partition.Partition,
		BaseOffset: seg.BaseOffset, EndOffset: seg.EndOffset, MaxTimestampMs: seg.MaxTimestampMs,
		BrokerID: req.BrokerID, LeaderEpoch: req.LeaderEpoch, EventTimestampMs: s.now().UnixMilli(),
		LeaderEpochs: segmentEpochs(req.LeaderEpochs, seg.BaseOffset, seg.EndOffset),
	}
	if _, err := rand.Read(m.SegmentID[:]); err != nil {
		return m, fmt.Errorf("tier: segment id: %w", err)
	}
	if err := m.validate(); err != nil {
		return m, err
	}
	dir := s.SegmentDir(&m)
	if err := s.bucket.Put(ctx, dir+copyStartedObject, m.Encode()); err != nil {
		return m, fmt.Errorf("tier: record %s of %s: %w", m.State, dir, err)
	}
	for kind := FileSegment; kind <= FileProducerSnapshot; kind++ {
		path, ok := seg.Files[kind]
		if !ok || path == "" {
			if kind == FileSegment {
				return m, fmt.Errorf("tier: segment %d has no log file", seg.BaseOffset)
			}
			continue
		}
		size, err := s.putFile(ctx, dir+kind.ObjectName(), path)
		if errors.Is(err, fs.ErrNotExist) && kind != FileSegment {
			// The log creates a transaction index only for a segment
			// with aborted transactions.
			continue
		}
		if err != nil {
			return m, err
		}
		if size == 0 && kind != FileSegment {
			continue
		}
		m.Files = append(m.Files, FileSize{Kind: kind, Size: size})
		if kind == FileSegment {
			m.SegmentSizeBytes = size
		}
	}
	// The checkpoint holds the whole lineage up to the segment's end, so a
	// follower rebuilding its state from this segment alone has it all.
	checkpoint := EncodeEpochCheckpoint(epochsThrough(req.LeaderEpochs, seg.EndOffset))
	if err := s.bucket.Put(ctx, dir+FileLeaderEpochCheckpoint.ObjectName(), checkpoint); err != nil {
		return m, fmt.Errorf("tier: upload %s: %w", dir, err)
	}
	m.Files = append(m.Files, FileSize{Kind: FileLeaderEpochCheckpoint, Size: int64(len(checkpoint))})
	m.State = CopySegmentFinished
	m.EventTimestampMs = s.now().UnixMilli()
	if err := s.bucket.Put(ctx, dir+copyFinishedObject, m.Encode()); err != nil {
		return m, fmt.Errorf("tier: record %s of %s: %w", m.State, dir, err)
	}
	return m, nil
}

// putFile streams a local file to key, returning its size. Index files are
// preallocated on disk; the caller passes them already trimmed (a closed
// segment's indexes are trimmed at roll).
func (s *Store) putFile(ctx context.Context, key, path string) (int64, error) {
	f, err := s.fs.Open(path)
	if err != nil {
		return 0, fmt.Errorf("tier: open %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("tier: stat %s: %w", path, err)
	}
	if info.Size() == 0 {
		return 0, nil
	}
	if err := s.bucket.PutSection(ctx, key, f, info.Size()); err != nil {
		return 0, fmt.Errorf("tier: upload %s: %w", key, err)
	}
	return info.Size(), nil
}

// segmentEpochs returns the entries of epochs that cover [base, end]: the
// entry in force at base (starting at base at the latest) and those after.
func segmentEpochs(epochs []EpochEntry, base, end int64) []EpochEntry {
	var out []EpochEntry
	for i, e := range epochs {
		if e.StartOffset > end {
			break
		}
		if i+1 < len(epochs) && epochs[i+1].StartOffset <= base {
			continue
		}
		out = append(out, e)
	}
	return out
}

// epochsThrough returns the entries of epochs starting at or before end.
func epochsThrough(epochs []EpochEntry, end int64) []EpochEntry {
	var out []EpochEntry
	for _, e := range epochs {
		if e.StartOffset <= end {
			out = append(out, e)
		}
	}
	return out
}

// Upload is one upload of one segment as the bucket shows it.
type Upload struct {
	Dir string
	// Metadata is the finished record, or the started one for an orphan.
	Metadata      SegmentMetadata
	Finished      bool
	DeleteStarted bool
}

// ListUploads returns every upload of p, by base offset then event time.
func (s *Store) ListUploads(ctx context.Context, p Partition) ([]Upload, error) {
	byDir := map[string]*Upload{}
	var order []string
	manifests := s.PartitionManifestPrefix(p)
	err := s.bucket.List(ctx, s.PartitionPrefix(p), func(o blob.ObjectInfo) error {
		dir, name, ok := cutLast(o.Key)
		if !ok || strings.HasPrefix(dir, manifests) {
			return nil
		}
		u := byDir[dir]
		if u == nil {
			u = &Upload{Dir: dir}
			byDir[dir] = u
			order = append(order, dir)
		}
		switch name {
		case copyFinishedObject:
			u.Finished = true
		case deleteStartedObject:
			u.DeleteStarted = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tier: list %s: %w", s.PartitionPrefix(p), err)
	}
	s.forgetUnlisted(s.PartitionPrefix(p), byDir)
	out := make([]Upload, 0, len(order))
	for _, dir := range order {
		u := byDir[dir]
		if m, ok := s.cachedFinished(dir); ok && u.Finished {
			u.Metadata = m
			out = append(out, *u)
			continue
		}
		name := copyStartedObject
		if u.Finished {
			name = copyFinishedObject
		}
		body, err := s.bucket.Get(ctx, dir+name)
		if errors.Is(err, blob.ErrNotFound) {
			// A deletion removed the record between the listing and now,
			// or a leader died before its first Put landed: nothing to
			// serve; the directory is collected by key alone.
			u.Finished = false
			u.Metadata = metadataFromDir(dir, p)
			out = append(out, *u)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tier: read %s%s: %w", dir, name, err)
		}
		m, err := DecodeMetadata(body)
		if err != nil {
			return nil, fmt.Errorf("tier: %s%s: %w", dir, name, err)
		}
		u.Metadata = m
		if u.Finished {
			s.cacheFinished(dir, m)
		}
		out = append(out, *u)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Metadata.BaseOffset != out[j].Metadata.BaseOffset {
			return out[i].Metadata.BaseOffset < out[j].Metadata.BaseOffset
		}
		return out[i].Metadata.EventTimestampMs < out[j].Metadata.EventTimestampMs
	})
	return out, nil
}

func (s *Store) cachedFinished(dir string) (SegmentMetadata, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.mu.finished[dir]
	return m, ok
}

func (s *Store) cacheFinished(dir string, m SegmentMetadata) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.finished[dir] = m
}

// forgetUnlisted drops the cached records under prefix whose directories
// the listing no longer has.
func (s *Store) forgetUnlisted(prefix string, listed map[string]*Upload) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for dir := range s.mu.finished {
		if strings.HasPrefix(dir, prefix) && listed[dir] == nil {
			delete(s.mu.finished, dir)
		}
	}
}

// metadataFromDir recovers what a directory name says of an upload with no
// readable record.
func metadataFromDir(dir string, p Partition) SegmentMetadata {
	m := SegmentMetadata{TopicID: p.TopicID, Partition: p.Partition}
	base := strings.TrimSuffix(dir, "/")
	base = base[strings.LastIndexByte(base, '/')+1:]
	if offset, id, ok := strings.Cut(base, "-"); ok {
		m.BaseOffset, _ = strconv.ParseInt(offset, 10, 64)
		raw, _ := hex.DecodeString(id)
		copy(m.SegmentID[:], raw)
	}
	m.EndOffset = m.BaseOffset
	return m
}

func cutLast(key string) (dir, name string, ok bool) {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return "", "", false
	}
	return key[:i+1], key[i+1:], true
}

// DeleteUpload deletes one upload: delete-started.meta, the data objects,
// the records, delete-started.meta last. It may be called again after a
// failure and finishes the job.
func (s *Store) DeleteUpload(ctx context.Context, u Upload) error {
	if !u.DeleteStarted && u.Finished {
		m := u.Metadata
		m.State = DeleteSegmentStarted
		m.EventTimestampMs = s.now().UnixMilli()
		if err := s.bucket.Put(ctx, u.Dir+deleteStartedObject, m.Encode()); err != nil {
			return fmt.Errorf("tier: record %s of %s: %w", m.State, u.Dir, err)
		}
	}
	var keys []string
	if err := s.bucket.List(ctx, u.Dir, func(o blob.ObjectInfo) error { keys = append(keys, o.Key); return nil }); err != nil {
		return fmt.Errorf("tier: list %s: %w", u.Dir, err)
	}
	rank := func(key string) int {
		switch {
		case strings.HasSuffix(key, "/"+deleteStartedObject):
			return 3
		case strings.HasSuffix(key, "/"+copyStartedObject):
			return 2
		case strings.HasSuffix(key, "/"+copyFinishedObject):
			return 1
		}
		return 0
	}
	sort.SliceStable(keys, func(i, j int) bool { return rank(keys[i]) < rank(keys[j]) })
	for _, key := range keys {
		if err := s.bucket.Delete(ctx, key); err != nil {
			return fmt.Errorf("tier: delete %s: %w", key, err)
		}
	}
	return nil
}

// ReadSegmentRange reads length bytes of an upload's .log object from
// position, a ranged read.
func (s *Store) ReadSegmentRange(ctx context.Context, m *SegmentMetadata, position, length int64) ([]byte, error) {
	return s.bucket.GetRange(ctx, s.SegmentDir(m)+FileSegment.ObjectName(), position, length)
}

// ReadFile reads a whole object of an upload (an index, the snapshot, the
// checkpoint).
func (s *Store) ReadFile(ctx context.Context, m *SegmentMetadata, kind FileKind) ([]byte, error) {
	return s.bucket.Get(ctx, s.SegmentDir(m)+kind.ObjectName())
}

// DeleteTopic removes every object of a topic, its topic manifest first,
// so a restore never brings back a topic whose data is half deleted.
func (s *Store) DeleteTopic(ctx context.Context, topicID [16]byte) error {
	if err := s.DeleteTopicManifest(ctx, topicID); err != nil {
		return err
	}
	return s.deletePrefix(ctx, s.TopicPrefix(topicID))
}

// DeletePartition removes every object of a partition, as disabling
// tiering with remote.log.delete.on.disable=true does (KIP-950).
func (s *Store) DeletePartition(ctx context.Context, p Partition) error {
	return s.deletePrefix(ctx, s.PartitionPrefix(p))
}

func (s *Store) deletePrefix(ctx context.Context, prefix string) error {
	var keys []string
	if err := s.bucket.List(ctx, prefix, func(o blob.ObjectInfo) error { keys = append(keys, o.Key); return nil }); err != nil {
		return err
	}
	for _, key := range keys {
		if err := s.bucket.Delete(ctx, key); err != nil {
			return err
		}
	}
	return nil
}

// EncodeEpochCheckpoint renders entries in Kafka's leader-epoch-checkpoint
// text format: version 0, the count, then "epoch startOffset" lines.
func EncodeEpochCheckpoint(entries []EpochEntry) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return []byte(b.String())
}

// DecodeEpochCheckpoint parses Kafka's leader-epoch-checkpoint text format,
// as downloaded by a follower rebuilding its state (at most 65536 entries).
func DecodeEpochCheckpoint(b []byte) ([]EpochEntry, error) {
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("%w: leader-epoch checkpoint header", ErrCorruptMetadata)
	}
	count, err := strconv.Atoi(lines[1])
	if err != nil || count < 0 || count > maxEpochEntries || count != len(lines)-2 {
		return nil, fmt.Errorf("%w: leader-epoch checkpoint count %q", ErrCorruptMetadata, lines[1])
	}
	out := make([]EpochEntry, 0, count)
	for _, line := range lines[2:] {
		epoch, offset, ok := strings.Cut(line, " ")
		e, err1 := strconv.ParseInt(epoch, 10, 32)
		o, err2 := strconv.ParseInt(offset, 10, 64)
		if !ok || err1 != nil || err2 != nil || e < 0 || o < 0 {
			return nil, fmt.Errorf("%w: leader-epoch checkpoint line %q", ErrCorruptMetadata, line)
		}
		if n := len(out); n > 0 && (int32(e) <= out[n-1].Epoch || o < out[n-1].StartOffset) {
			return nil, fmt.Errorf("%w: leader-epoch checkpoint out of order", ErrCorruptMetadata)
		}
		out = append(out, EpochEntry{Epoch: int32(e), StartOffset: o})
	}
	return out, nil
}
