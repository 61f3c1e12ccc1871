package api

import (
	"encoding/binary"

	"github.com/samsa-streaming/samsa/internal/network"
)

// writeFetchResponse encodes a Fetch response body for versions 4-16 as a
// list of chunks: encoded fields as bytes, record data as file regions. The
// layout follows FetchResponse.json:
//
//	ThrottleTimeMs int32 | ErrorCode int16 (v7+) | SessionId int32 (v7+)
//	Responses [ Topic string (<13) | TopicId uuid (13+)
//	  Partitions [ PartitionIndex int32 | ErrorCode int16 | HighWatermark int64
//	    LastStableOffset int64 | LogStartOffset int64 (v5+)
//	    AbortedTransactions [ProducerId int64 | FirstOffset int64] (nullable)
//	    PreferredReadReplica int32 (v11+) | Records (nullable bytes) ] ]
//
// Flexible versions (12+) use compact arrays and strings and end each
// struct with a tagged-field section, empty except for a partition's
// DivergingEpoch (tag 0: Epoch int32 | EndOffset int64 | empty tags).
func writeFetchResponse(version int16, errorCode int16, sessionID int32, results []fetchPartitionResult) network.Response {
	flexible := version >= 12
	w := &chunkWriter{}
	w.int32(0) // throttle time
	if version >= 7 {
		w.int16(errorCode)
		w.int32(sessionID)
	}
	// Group consecutive results by topic, keeping request order.
	type topicGroup struct{ start, end int }
	var groups []topicGroup
	for i := range results {
		if i == 0 || results[i].topic != results[i-1].topic || results[i].topicID != results[i-1].topicID {
			groups = append(groups, topicGroup{i, i + 1})
		} else {
			groups[len(groups)-1].end = i + 1
		}
	}
	w.arrayLen(len(groups), flexible)
	for _, g := range groups {
		first := &results[g.start]
		if version >= 13 {
			w.bytes(first.topicID[:])
		} else {
			w.string(first.topic, flexible)
		}
		w.arrayLen(g.end-g.start, flexible)
		for i := g.start; i < g.end; i++ {
			r := &results[i]
			w.int32(r.partition)
			w.int16(r.errorCode)
			w.int64(r.highWatermark)
			w.int64(r.lastStable)
			if version >= 5 {
				w.int64(r.logStartOffset)
			}
			// Aborted transactions: null for read_uncommitted and errors.
			nullAborted := !r.readCommitted || r.errorCode != 0
			switch {
			case nullAborted && flexible:
				w.uvarint(0)
			case nullAborted:
				w.int32(-1)
			default:
				w.arrayLen(len(r.aborted), flexible)
				for _, a := range r.aborted {
					w.int64(a.ProducerID)
					w.int64(a.FirstOffset)
					if flexible {
						w.uvarint(0) // aborted transaction tagged fields
					}
				}
			}
			if version >= 11 {
				preferred := int32(-1)
				if r.hasPreferredReadReplica {
					preferred = r.preferredReadReplica
				}
				w.int32(preferred)
			}
			if flexible {
				w.uvarint(uint64(r.bytes) + 1)
			} else {
				w.int32(int32(r.bytes))
			}
			for _, reg := range r.regions {
				w.region(reg.File, reg.Offset, reg.Length)
			}
			w.bytes(r.remote)
			if flexible {
				writeFetchPartitionTags(w, r)
			}
		}
		if flexible {
			w.uvarint(0) // topic tagged fields
		}
	}
	if flexible {
		w.uvarint(0) // response tagged fields
	}
	return w.response()
}

// writeFetchPartitionTags writes a partition's tagged fields (v12+): tag 0,
// DivergingEpoch, when a follower's log diverged.
func writeFetchPartitionTags(w *chunkWriter, r *fetchPartitionResult) {
	if r.divergingEpoch == nil {
		w.uvarint(0)
		return
	}
	w.uvarint(1)  // one tagged field
	w.uvarint(0)  // tag 0: DivergingEpoch
	w.uvarint(13) // its size: int32, int64 and an empty tag section
	w.int32(r.divergingEpoch.Epoch)
	w.int64(r.divergingEpoch.EndOffset)
	w.uvarint(0)
}

// fetchErrorResponse is a response with a top-level error and no topics.
func fetchErrorResponse(version int16, code int16) network.Response {
	return writeFetchResponse(version, code, 0, nil)
}

// chunkWriter accumulates encoded bytes and file regions.
type chunkWriter struct {
	chunks []network.Chunk
	buf    []byte
}

func (w *chunkWriter) int16(v int16)    { w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(v)) }
func (w *chunkWriter) int32(v int32)    { w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(v)) }
func (w *chunkWriter) int64(v int64)    { w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(v)) }
func (w *chunkWriter) uvarint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }
func (w *chunkWriter) bytes(b []byte)   { w.buf = append(w.buf, b...) }

func (w *chunkWriter) arrayLen(n int, flexible bool) {
	if flexible {
		w.uvarint(uint64(n) + 1)
	} else {
		w.int32(int32(n))
	}
}

func (w *chunkWriter) string(s string, flexible bool) {
	if flexible {
		w.uvarint(uint64(len(s)) + 1)
	} else {
		w.int16(int16(len(s)))
	}
	w.buf = append(w.buf, s...)
}

func (w *chunkWriter) region(f network.RegionFile, offset, length int64) {
	if length == 0 {
		return
	}
	if len(w.buf) > 0 {
		w.chunks = append(w.chunks, network.Chunk{Bytes: w.buf})
		w.buf = nil
	}
	w.chunks = append(w.chunks, network.Chunk{File: f, Offset: offset, Length: length})
}

func (w *chunkWriter) response() network.Response {
	if len(w.buf) > 0 {
		w.chunks = append(w.chunks, network.Chunk{Bytes: w.buf})
	}
	return network.Response{Chunks: w.chunks}
}
