package network

import "golang.org/x/sys/unix"

// mapFrameBuffer maps size bytes of private anonymous memory, zeroed, whose
// pages become resident as they are first written.
func mapFrameBuffer(size int) ([]byte, error) {
	return unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
}

// releaseFrameBufferPages gives a mapping's pages back to the OS at once
// (MADV_DONTNEED): the mapping stays valid and reads as zeros until written.
func releaseFrameBufferPages(mapping []byte) {
	_ = unix.Madvise(mapping, unix.MADV_DONTNEED)
}

// unmapFrameBuffer removes a mapping of mapFrameBuffer.
func unmapFrameBuffer(mapping []byte) {
	_ = unix.Munmap(mapping)
}

// mapsFrameBuffers reports whether large frame buffers are mappings.
const mapsFrameBuffers = true
