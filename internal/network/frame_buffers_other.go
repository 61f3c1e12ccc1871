//go:build !linux

package network

import "errors"

// Outside Linux frame buffers stay on the Go heap.
func mapFrameBuffer(int) ([]byte, error) {
	return nil, errors.New("network: frame buffers are mapped on Linux only")
}

func releaseFrameBufferPages([]byte) {}

func unmapFrameBuffer([]byte) {}

// mapsFrameBuffers reports whether large frame buffers are mappings.
const mapsFrameBuffers = false
