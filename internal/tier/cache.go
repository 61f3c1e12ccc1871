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
	}
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
// without being cached. Two concurrent misses of one key both load; the
// second insert replaces the first.
func (c *Cache) Get(ctx context.Context, key string, load func(context.Context) ([]byte, error)) ([]byte, bool, error) {
	if b, ok := c.read(key); ok {
		return b, true, nil
	}
	b, err := load(ctx)
	if err != nil {
		return nil, false, err
	}
	c.put(key, b)
	return b, false, nil
}

// Stats returns the cache's size and its hit and miss counts.
func (c *Cache) Stats() (sizeBytes, entries, hits, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.totalBytes, int64(len(c.mu.entries)), c.mu.hits, c.mu.misses
}

func (c *Cache) read(key string) ([]byte, bool) {
	c.mu.Lock()
	el, ok := c.mu.entries[key]
	if !ok {
		c.mu.misses++
		c.mu.Unlock()
		return nil, false
	}
	c.mu.lru.MoveToFront(el)
	entry := el.Value.(*cacheEntry)
	c.mu.Unlock()
	f, err := c.fs.Open(entry.path)
	if err != nil {
		c.drop(key, entry)
		return nil, false
	}
	defer f.Close()
	b := make([]byte, entry.size)
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		c.drop(key, entry)
		return nil, false
	}
	c.mu.Lock()
	c.mu.hits++
	c.mu.Unlock()
	return b, true
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
