package log

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// Kafka's OffsetsForLeaderEpoch sentinels.
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// EpochEntry says leader epoch Epoch began at offset StartOffset.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// EpochCache is the leader-epoch cache of one partition: the offset at which
// each leader epoch began, persisted in leader-epoch-checkpoint. It answers
// OffsetForLeaderEpoch and guides follower truncation. Safe for concurrent
// use.
//
// Assign, which appends call on the first batch of a new epoch, changes only
// memory: writing and fsyncing the checkpoint there would put an fsync in the
// produce request (with a thousand new partitions, 18% of broker CPU and
// seconds of latency). As in Kafka since KAFKA-15046, the checkpoint is
// written by Flush, which the log calls before it advances its recovery point
// and when it closes. Truncations still write at once: they remove entries,
// and a stale removed entry must not come back after a restart.
//
// Recovery after a crash relies on this rule (see Log.flushTo):
// Invariant: every entry whose StartOffset is below the log's recovery point
// is in the checkpoint on disk. Entries at or above it are re-derived from
// the batch headers when recovery re-scans the log from the recovery point,
// and entries beyond the recovered log end are truncated by Open.
type EpochCache struct {
	fs   vfs.FS
	path string

	mu struct {
		sync.RWMutex
		// entries is sorted.
		// Invariant: epochs and start offsets both strictly increase.
		entries []EpochEntry
		// dirty means entries changed since the checkpoint was last written.
		dirty bool
	}
}

// openEpochCache reads the checkpoint at path; a missing file is an empty
// cache. A corrupt file returns an error wrapping ErrCorrupt together with an
// empty cache the caller may rebuild.
func openEpochCache(fsys vfs.FS, path string) (*EpochCache, error) {
	c := &EpochCache{fs: fsys, path: path}
	lines, err := readCheckpointLines(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return c, corruptError(fmt.Sprintf("%s: malformed line %q", path, line), nil)
		}
		epoch, err1 := strconv.ParseInt(fields[0], 10, 32)
		offset, err2 := strconv.ParseInt(fields[1], 10, 64)
		if err1 != nil || err2 != nil || epoch < 0 || offset < 0 {
			return c, corruptError(fmt.Sprintf("%s: malformed line %q", path, line), nil)
		}
		c.assignLocked(EpochEntry{int32(epoch), offset})
	}
	return c, nil
}

// writeLocked persists the entries (atomically, with fsync). Called with mu
// held.
func (c *EpochCache) writeLocked() error {
	lines := make([]string, len(c.mu.entries))
	for i, e := range c.mu.entries {
		lines[i] = fmt.Sprintf("%d %d", e.Epoch, e.StartOffset)
	}
	if err := writeFileAtomic(c.fs, c.path, encodeCheckpoint(lines)); err != nil {
		c.mu.dirty = true
		return err
	}
	c.mu.dirty = false
	return nil
}

// Flush writes the checkpoint if an Assign changed the entries since it was
// last written. The log calls it before advancing its recovery point, and on
// Close.
func (c *EpochCache) Flush() error {
	c.mu.RLock()
	dirty := c.mu.dirty
	c.mu.RUnlock()
	if !dirty {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.mu.dirty {
		return nil
	}
	return c.writeLocked()
}

// assignLocked adds e, first removing entries it contradicts (an epoch at or
// above e.Epoch, or a start offset at or above e.StartOffset). It reports
// whether anything changed.
func (c *EpochCache) assignLocked(e EpochEntry) bool {
	entries := c.mu.entries
	if n := len(entries); n > 0 {
		last := entries[n-1]
		if last.Epoch == e.Epoch && last.StartOffset <= e.StartOffset {
			return false
		}
	}
	keep := len(entries)
	for keep > 0 && (entries[keep-1].Epoch >= e.Epoch || entries[keep-1].StartOffset >= e.StartOffset) {
		keep--
	}
	c.mu.entries = append(entries[:keep], e)
	return true
}

// Assign records that epoch began at startOffset, in memory only: the next
// Flush persists it (see the type's doc for why that is safe).
// Reassigning the latest epoch to a later offset is a no-op.
func (c *EpochCache) Assign(epoch int32, startOffset int64) error {
	if epoch < 0 || startOffset < 0 {
		return fmt.Errorf("log: invalid leader epoch entry (%d, %d)", epoch, startOffset)
	}
	c.mu.RLock()
	n := len(c.mu.entries)
	upToDate := n > 0 && c.mu.entries[n-1].Epoch == epoch && c.mu.entries[n-1].StartOffset <= startOffset
	c.mu.RUnlock()
	if upToDate {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.assignLocked(EpochEntry{epoch, startOffset}) {
		c.mu.dirty = true
	}
	return nil
}

// LatestEpoch returns the newest epoch, if any.
func (c *EpochCache) LatestEpoch() (int32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if n := len(c.mu.entries); n > 0 {
		return c.mu.entries[n-1].Epoch, true
	}
	return UndefinedEpoch, false
}

// Entries returns a copy of the entries, oldest first.
func (c *EpochCache) Entries() []EpochEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]EpochEntry(nil), c.mu.entries...)
}

// EndOffsetFor answers OffsetForLeaderEpoch with Kafka's semantics: the
// largest epoch <= requested and the start offset of the first epoch above
// it; the log end offset when the latest epoch is requested; the requested
// epoch with the first known start offset when it predates the cache; and
// (UndefinedEpoch, UndefinedEpochOffset) when it is undefined or newer than
// every known epoch.
func (c *EpochCache) EndOffsetFor(requested int32, logEndOffset int64) (epoch int32, endOffset int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	entries := c.mu.entries
	if requested == UndefinedEpoch {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if n := len(entries); n > 0 && entries[n-1].Epoch == requested {
		return requested, logEndOffset
	}
	// higher: first entry with an epoch above requested.
	higher := 0
	for higher < len(entries) && entries[higher].Epoch <= requested {
		higher++
	}
	if higher == len(entries) {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if higher == 0 {
		return requested, entries[0].StartOffset
	}
	return entries[higher-1].Epoch, entries[higher].StartOffset
}

// EpochForOffset returns the epoch that offset was written in, if known.
func (c *EpochCache) EpochForOffset(offset int64) (int32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	epoch, found := UndefinedEpoch, false
	for _, e := range c.mu.entries {
		if e.StartOffset > offset {
			break
		}
		epoch, found = e.Epoch, true
	}
	return epoch, found
}

// TruncateFromEnd removes entries starting at or after endOffset (follower
// truncation).
func (c *EpochCache) TruncateFromEnd(endOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	entries := c.mu.entries
	keep := len(entries)
	for keep > 0 && entries[keep-1].StartOffset >= endOffset {
		keep--
	}
	if endOffset < 0 || keep == len(entries) {
		return nil
	}
	c.mu.entries = entries[:keep]
	return c.writeLocked()
}

// TruncateFromStart removes entries wholly below startOffset, moving the
// start of the epoch that contains it up to startOffset.
func (c *EpochCache) TruncateFromStart(startOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	entries := c.mu.entries
	removed := 0
	for removed < len(entries) && entries[removed].StartOffset <= startOffset {
		removed++
	}
	if removed == 0 {
		return nil
	}
	first := EpochEntry{entries[removed-1].Epoch, startOffset}
	if removed == 1 && entries[0] == first {
		return nil
	}
	c.mu.entries = append([]EpochEntry{first}, entries[removed:]...)
	return c.writeLocked()
}

// Clear removes every entry and persists the empty cache.
func (c *EpochCache) Clear() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.entries = nil
	return c.writeLocked()
}
