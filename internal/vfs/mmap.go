package vfs

import (
	"fmt"
	"io"
	"sync"

	"golang.org/x/sys/unix"
)

// Mapping is a file's bytes in memory. Writes to Bytes reach the file no later
// than Flush or Close.
type Mapping interface {
	// Bytes is the mapped memory. It is invalid after Close.
	Bytes() []byte
	// Flush writes modified bytes to the file and waits until they are stable.
	Flush() error
	// Close releases the mapping, writing back modified bytes first where the
	// mapping is a copy.
	Close() error
}

// Mapper is implemented by Files that can map their bytes into memory.
type Mapper interface {
	Map(length int, writable bool) (Mapping, error)
}

// Map maps the first length bytes of f. The file must be at least length
// bytes long. When f cannot be memory-mapped, Map reads the bytes into the
// heap instead and Flush writes them back with WriteAt.
func Map(f File, length int, writable bool) (Mapping, error) {
	if m, ok := f.(Mapper); ok {
		return m.Map(length, writable)
	}
	return copyMap(f, length, writable)
}

// mmapMapping is a shared mapping made with mmap(2).
type mmapMapping struct {
	data []byte
	once sync.Once
}

func mmapFile(f File, length int, writable bool) (Mapping, error) {
	if length == 0 {
		return &mmapMapping{}, nil
	}
	prot := unix.PROT_READ
	if writable {
		prot |= unix.PROT_WRITE
	}
	data, err := unix.Mmap(int(f.Fd()), 0, length, prot, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("vfs: mmap %s (%d bytes): %w", f.Name(), length, err)
	}
	// Index lookups touch a few pages by binary search, never a sequential
	// run: without this hint the kernel reads ahead around every page
	// fault (megabytes per index file on disks with large read-ahead),
	// which made creating many partitions cost seconds of CPU each.
	_ = unix.Madvise(data, unix.MADV_RANDOM)
	return &mmapMapping{data: data}, nil
}

func (m *mmapMapping) Bytes() []byte { return m.data }

func (m *mmapMapping) Flush() error {
	if len(m.data) == 0 {
		return nil
	}
	return unix.Msync(m.data, unix.MS_SYNC)
}

func (m *mmapMapping) Close() error {
	var err error
	m.once.Do(func() {
		if len(m.data) > 0 {
			err = unix.Munmap(m.data)
		}
		m.data = nil
	})
	return err
}

// heapMapping is the fallback for Files that cannot be memory-mapped.
type heapMapping struct {
	file     File
	data     []byte
	writable bool
}

func copyMap(f File, length int, writable bool) (Mapping, error) {
	data := make([]byte, length)
	if length > 0 {
		n, err := f.ReadAt(data, 0)
		if err != nil && err != io.EOF {
			return nil, err
		}
		// Bytes past the end of the file read as zeros, as they would in a
		// mapping of a file that was just extended.
		clear(data[n:])
	}
	return &heapMapping{file: f, data: data, writable: writable}, nil
}

func (m *heapMapping) Bytes() []byte { return m.data }

func (m *heapMapping) Flush() error {
	if !m.writable || len(m.data) == 0 {
		return nil
	}
	if _, err := m.file.WriteAt(m.data, 0); err != nil {
		return err
	}
	return m.file.Sync()
}

func (m *heapMapping) Close() error {
	if m.data == nil {
		return nil
	}
	var err error
	if m.writable && len(m.data) > 0 {
		_, err = m.file.WriteAt(m.data, 0)
	}
	m.data = nil
	return err
}
