package network

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Request frames of the API keys in Config.ReuseBodyAPIKeys are read into
// buffers from size-classed pools instead of fresh allocations: under produce
// load, zeroing a new frame buffer per request was 14% of broker CPU and
// 99.7% of the bytes allocated. A frame gets the smallest power-of-two class
// that holds it; frames above frameBufferPooledBytesMax are allocated and
// left to the garbage collector, so a pool never holds a buffer larger than
// that. sync.Pool empties itself over two garbage collections, which bounds
// what idle pools keep.
const (
	frameBufferClassMinShift = 10 // 1 KiB
	frameBufferClassMaxShift = 23 // 8 MiB
	// frameBufferPooledBytesMax is the largest frame read into a pooled buffer.
	frameBufferPooledBytesMax = 1 << frameBufferClassMaxShift
	frameBufferClasses        = frameBufferClassMaxShift - frameBufferClassMinShift + 1
)

// frameBuffer is a pooled frame buffer; pools hold pointers so that Put does
// not allocate.
type frameBuffer struct {
	bytes []byte
	class int
}

var frameBufferPools [frameBufferClasses]sync.Pool

// frameBuffersReleased counts putFrameBuffer calls under the invariants tag,
// for tests.
var frameBuffersReleased atomic.Uint64

// frameBufferClass is the index of the smallest class holding size bytes;
// size must be at most frameBufferPooledBytesMax.
func frameBufferClass(size int) int {
	if size <= 1<<frameBufferClassMinShift {
		return 0
	}
	return bits.Len(uint(size-1)) - frameBufferClassMinShift
}

// getFrameBuffer returns a buffer of at least size bytes whose contents are
// whatever its last user left (the caller overwrites them), or nil when size
// is above frameBufferPooledBytesMax.
func getFrameBuffer(size int) *frameBuffer {
	if size > frameBufferPooledBytesMax {
		return nil
	}
	class := frameBufferClass(size)
	if pooled, ok := frameBufferPools[class].Get().(*frameBuffer); ok {
		return pooled
	}
	return &frameBuffer{bytes: make([]byte, 1<<(class+frameBufferClassMinShift)), class: class}
}

// putFrameBuffer returns a buffer to its pool. Nothing may read or write it
// afterwards; under the invariants tag it is poisoned so that a reader that
// broke that rule sees garbage (and tests that check contents fail).
func putFrameBuffer(buffer *frameBuffer) {
	if invariantsEnabled {
		// The poisoning writes also let the race detector report a handler
		// that reads a body after its release.
		poisonFrameBuffer(buffer.bytes)
		frameBuffersReleased.Add(1)
	}
	frameBufferPools[buffer.class].Put(buffer)
}

// frameBufferPoison fills released buffers under the invariants tag.
const frameBufferPoison = 0xDB

func poisonFrameBuffer(b []byte) {
	for i := range b {
		b[i] = frameBufferPoison
	}
}
