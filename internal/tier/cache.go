package tier

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// Cache is the disk cache of remote index files and segment chunks, Kafka's
// RemoteIndexCache widened to the chunks of segment data a remote read
// fetched: a directory of files (remote-log-index-cache under the first
// log directory) bounded in total size by
// remote.log.index.file.cache.total.size.bytes, least recently used out
// first. Objects of an upload never change (keys are unique per upload), so
// a cached file is never stale; a file deleted from the bucket simply ages
// out.
//
// The cache forgets its directory at startup: its index lives in memory,
// and the files are only copies.
type Cache struct {
	fs       vfs.FS
	dir      string
	maxBytes int64

	mu struct {
		sync.Mutex
		// entries maps a key to its element in lru, whose value is a
		// *cacheEntry; the front is the most recently used.
		// Invariant: totalBytes is the sum of the sizes of entries, and
		// totalBytes <= maxBytes after every insert.
		entries    map[string]*list.Element
		lru        *list.List
		totalBytes int64
		hits       int64
		misses     int64
		// loading holds the load in progress of each key that missed, so
		// concurrent misses of one key fetch it once.
		// Invariant: an entry exists only while its load runs; at most
		// one per concurrent Get (the reader pool's threads).
		loading map[string]*cacheLoad
	}
}

// cacheLoad is one load of a key, shared by the Gets that missed it while
// it ran; done is closed once b and err are set.
type cacheLoad struct {
	done chan struct{}
	b    []byte
	err  error
}

type cacheEntry struct {
	key  string
	path string
	size int64
}

// NewCache empties dir and returns a cache over it holding at most
// maxBytes.
func NewCache(fsys vfs.FS, dir string, maxBytes int64) (*Cache, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	if err := fsys.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("tier: clear cache %s: %w", dir, err)
	}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tier: cache %s: %w", dir, err)
	}
	c := &Cache{fs: fsys, dir: dir, maxBytes: max(maxBytes, 1)}
	c.mu.entries = make(map[string]*list.Element)
	c.mu.lru = list.New()
	c.mu.loading = make(map[string]*cacheLoad)
	return c, nil
}

// SetMaxBytes changes the bound (a dynamic
// remote.log.index.file.cache.total.size.bytes), evicting at once.
func (c *Cache) SetMaxBytes(maxBytes int64) {
	c.mu.Lock()
	c.maxBytes = max(maxBytes, 1)
	victims := c.evictLocked()
	c.mu.Unlock()
	c.remove(victims)
}

// Get returns the cached bytes of key, or loads them with load, caches them
// and returns them. A value larger than the whole cache is returned
// without being cached. A miss of a key another Get is loading waits for
// that load and shares its bytes (callers must not modify them), so a
// consumer's retry of a read still running, or two partitions' reads of one
// index, cost one GET; if the shared load fails, the waiter loads itself.
func (c *Cache) Get(ctx context.Context, key string, load func(context.Context) ([]byte, error)) ([]byte, bool, error) {
	if b, ok := c.read(key); ok {
		return b, true, nil
	}
	c.mu.Lock()
	call, shared := c.mu.loading[key]
	if !shared {
		call = &cacheLoad{done: make(chan struct{})}
		c.mu.loading[key] = call
	}
	c.mu.Unlock()
	if shared {
		select {
		case <-call.done:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		if call.err == nil {
			return call.b, false, nil
		}
		b, err := load(ctx)
		if err != nil {
			return nil, false, err
		}
		c.put(key, b)
		return b, false, nil
	}
	call.b, call.err = load(ctx)
	if call.err == nil {
		c.put(key, call.b)
	}
	c.mu.Lock()
	delete(c.mu.loading, key)
	c.mu.Unlock()
	close(call.done)
	return call.b, false, call.err
}

// Stats returns the cache's size and its hit and miss counts.
func (c *Cache) Stats() (sizeBytes, entries, hits, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.totalBytes, int64(len(c.mu.entries)), c.mu.hits, c.mu.misses
}

func (c *Cache) read(key string) ([]byte, bool) {
	return c.appendRange(nil, key, 0, -1, true)
}

// AppendRange appends length bytes of the cached value of key from offset
// to dst, reading only them from its file straight into dst, or returns
// false when key is not cached or the range is not within the value. A hit
// counts as one; a miss does not, since the caller goes on to Get, which
// counts it.
func (c *Cache) AppendRange(dst []byte, key string, offset, length int64) ([]byte, bool) {
	if offset < 0 || length < 0 {
		return dst, false
	}
	return c.appendRange(dst, key, offset, length, false)
}

// appendRange reads [offset, offset+length) of key's file, the whole file
// when length < 0, onto dst.
func (c *Cache) appendRange(dst []byte, key string, offset, length int64, countMiss bool) ([]byte, bool) {
	c.mu.Lock()
	el, ok := c.mu.entries[key]
	if !ok {
		if countMiss {
			c.mu.misses++
		}
		c.mu.Unlock()
		return dst, false
	}
	entry := el.Value.(*cacheEntry)
	if length < 0 {
		length = entry.size - offset
	}
	if offset+length > entry.size {
		c.mu.Unlock()
		return dst, false
	}
	c.mu.lru.MoveToFront(el)
	c.mu.Unlock()
	f, err := c.fs.Open(entry.path)
	if err != nil {
		c.drop(key, entry)
		return dst, false
	}
	defer f.Close()
	start := len(dst)
	dst = slices.Grow(dst, int(length))[:start+int(length)]
	if n, err := f.ReadAt(dst[start:], offset); int64(n) != length || (err != nil && err != io.EOF) {
		c.drop(key, entry)
		return dst[:start], false
	}
	c.mu.Lock()
	c.mu.hits++
	c.mu.Unlock()
	return dst, true
}

// drop forgets an entry whose file is unreadable (removed under the cache,
// or a disk error): the next Get loads it again.
func (c *Cache) drop(key string, entry *cacheEntry) {
	c.mu.Lock()
	if el, ok := c.mu.entries[key]; ok && el.Value.(*cacheEntry) == entry {
		c.mu.lru.Remove(el)
		delete(c.mu.entries, key)
		c.mu.totalBytes -= entry.size
		c.mu.misses++
	}
	c.mu.Unlock()
	_ = c.fs.Remove(entry.path)
}

// put writes b to a new file, renamed into place, and indexes it. A
// failure to write leaves the cache without it: the cache is an
// optimization and a full disk must not fail a read.
func (c *Cache) put(key string, b []byte) {
	size := int64(len(b))
	if size > c.limit() {
		return
	}
	sum := sha256.Sum256([]byte(key))
	path := filepath.Join(c.dir, hex.EncodeToString(sum[:16]))
	tmp := path + ".tmp"
	f, err := c.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_EXCL, 0o644)
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil || cerr != nil || c.fs.Rename(tmp, path) != nil {
		_ = c.fs.Remove(tmp)
		return
	}
	entry := &cacheEntry{key: key, path: path, size: size}
	c.mu.Lock()
	if old, ok := c.mu.entries[key]; ok {
		// A concurrent load of the same key won: the file was replaced
		// by identical bytes, so keep one entry.
		c.mu.totalBytes -= old.Value.(*cacheEntry).size
		c.mu.lru.Remove(old)
	}
	c.mu.entries[key] = c.mu.lru.PushFront(entry)
	c.mu.totalBytes += size
	victims := c.evictLocked()
	c.mu.Unlock()
	c.remove(victims)
}

func (c *Cache) limit() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxBytes
}

// evictLocked removes least recently used entries until the cache fits,
// returning their files for removal outside the lock.
func (c *Cache) evictLocked() []*cacheEntry {
	var victims []*cacheEntry
	for c.mu.totalBytes > c.maxBytes {
		el := c.mu.lru.Back()
		if el == nil {
			break
		}
		entry := el.Value.(*cacheEntry)
		c.mu.lru.Remove(el)
		delete(c.mu.entries, entry.key)
		c.mu.totalBytes -= entry.size
		victims = append(victims, entry)
	}
	return victims
}

func (c *Cache) remove(victims []*cacheEntry) {
	for _, v := range victims {
		_ = c.fs.Remove(v.path)
	}
}
