package log

// # .txnindex: aborted transactions, 34-byte entries
//
// One file per segment, <base offset>.txnindex, listing the transactions
// whose ABORT marker lies in that segment, in the order the markers were
// written. Kafka's TransactionIndex format:
//
//	offset  size  field
//	     0     2  version           int16, big-endian: 0
//	     2     8  producerId        int64
//	    10     8  firstOffset       int64: the transaction's first offset in this partition
//	    18     8  lastOffset        int64: the offset of the ABORT marker
//	    26     8  lastStableOffset  int64: the partition's LSO once the marker was written
//
// The file has no header and no padding; its length is a multiple of 34. A
// torn last entry (a crash mid-write) is dropped when the file is read. The
// file is appended to only while its segment is active, and made durable
// when the segment rolls.
//
// A read_committed fetch of [fetchOffset, upperBound) returns every entry
// with lastOffset >= fetchOffset and firstOffset < upperBound, searching the
// segments from the one holding fetchOffset and stopping after the first
// entry whose lastStableOffset >= upperBound: no transaction aborted later
// can have started below upperBound.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
)

// AbortedTxnBytes is the size of one .txnindex entry.
const AbortedTxnBytes = 34

// abortedTxnVersion is the only entry version Kafka defines.
const abortedTxnVersion = 0

// AbortedTxn is one entry of a segment's .txnindex.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// AppendAbortedTxnEntry appends the 34-byte encoding of e to dst.
func AppendAbortedTxnEntry(dst []byte, e AbortedTxn) []byte {
	dst = binary.BigEndian.AppendUint16(dst, abortedTxnVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(e.LastStableOffset))
}

// DecodeAbortedTxns decodes a .txnindex file. It returns the whole entries
// before the first problem and an error wrapping ErrCorrupt when there is
// one: a partial trailing entry, an unknown version, or offsets that make no
// sense (negative, or a first offset after the last).
func DecodeAbortedTxns(b []byte) ([]AbortedTxn, error) {
	out := make([]AbortedTxn, 0, len(b)/AbortedTxnBytes)
	for pos := 0; pos < len(b); pos += AbortedTxnBytes {
		if len(b)-pos < AbortedTxnBytes {
			return out, corruptError(fmt.Sprintf("transaction index: %d trailing bytes", len(b)-pos), nil)
		}
		entry := b[pos : pos+AbortedTxnBytes]
		if v := int16(binary.BigEndian.Uint16(entry)); v != abortedTxnVersion {
			return out, corruptError(fmt.Sprintf("transaction index: entry %d has version %d", pos/AbortedTxnBytes, v), nil)
		}
		e := AbortedTxn{
			ProducerID:       int64(binary.BigEndian.Uint64(entry[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(entry[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(entry[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(entry[26:])),
		}
		if e.FirstOffset < 0 || e.LastOffset < e.FirstOffset || e.LastStableOffset < 0 {
			return out, corruptError(fmt.Sprintf("transaction index: entry %d has offsets %d..%d, lso %d",
				pos/AbortedTxnBytes, e.FirstOffset, e.LastOffset, e.LastStableOffset), nil)
		}
		out = append(out, e)
	}
	return out, nil
}

// txnIndexPath is the segment's .txnindex (with .deleted once deleted).
func (s *segment) txnIndexPath() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path(txnIndexFileSuffix)
}

// readTxnIndex reads and decodes the segment's .txnindex; a missing file is
// an empty index, a corrupt tail is dropped.
func (l *Log) readTxnIndex(s *segment) ([]AbortedTxn, error) {
	f, err := l.fs.Open(s.txnIndexPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, storageError("open transaction index", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, storageError("stat transaction index", err)
	}
	buf := make([]byte, st.Size())
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, storageError("read transaction index", err)
	}
	entries, err := DecodeAbortedTxns(buf)
	if err != nil {
		l.logger.Warn("dropping corrupt tail of transaction index", "file", f.Name(), "kept", len(entries), "err", err)
	}
	return entries, nil
}

// txnEntriesLocked returns the cached entries of s, reading them on first
// use. Called with ext.mu held.
func (l *Log) txnEntriesLocked(s *segment) ([]AbortedTxn, error) {
	if l.ext.mu.txnIndexes == nil {
		l.ext.mu.txnIndexes = map[*segment][]AbortedTxn{}
	}
	if entries, ok := l.ext.mu.txnIndexes[s]; ok {
		return entries, nil
	}
	entries, err := l.readTxnIndex(s)
	if err != nil {
		return nil, err
	}
	l.ext.mu.txnIndexes[s] = entries
	return entries, nil
}

// pruneTxnCacheLocked forgets the cached entries of segments no longer in
// the log. Called with ext.mu held.
func (l *Log) pruneTxnCacheLocked(segs []*segment) {
	if len(l.ext.mu.txnIndexes) <= len(segs) {
		return
	}
	live := make(map[*segment]bool, len(segs))
	for _, s := range segs {
		live[s] = true
	}
	for s := range l.ext.mu.txnIndexes {
		if !live[s] {
			delete(l.ext.mu.txnIndexes, s)
		}
	}
}

// segmentFor returns the segment holding offset (the last with base offset
// <= offset), or the first one.
func segmentFor(segs []*segment, offset int64) int {
	i := sort.Search(len(segs), func(i int) bool { return segs[i].baseOffset > offset }) - 1
	return max(i, 0)
}

// AppendAbortedTxn records an aborted transaction in the .txnindex of the
// segment holding its marker (e.LastOffset), which the caller has just
// appended. The entry reaches the page cache now and the disk when the
// segment rolls (or, after a crash, is rebuilt from the marker).
func (l *Log) AppendAbortedTxn(e AbortedTxn) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	if err := l.checkWritableLocked(); err != nil {
		return err
	}
	segs := l.segmentsSnapshot()
	s := segs[segmentFor(segs, e.LastOffset)]
	l.ext.mu.Lock()
	defer l.ext.mu.Unlock()
	entries, err := l.txnEntriesLocked(s)
	if err != nil {
		return l.fail(err)
	}
	f, err := l.fs.OpenFile(s.txnIndexPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return l.fail(storageError("open transaction index", err))
	}
	_, werr := f.Write(AppendAbortedTxnEntry(nil, e))
	cerr := f.Close()
	if werr != nil {
		return l.fail(storageError("append to transaction index", werr))
	}
	if cerr != nil {
		return l.fail(storageError("close transaction index", cerr))
	}
	l.ext.mu.txnIndexes[s] = append(entries, e)
	l.pruneTxnCacheLocked(segs)
	return nil
}

// HasAbortedTxn reports whether the .txnindex of the segment holding
// lastOffset has an entry for the marker at lastOffset.
func (l *Log) HasAbortedTxn(producerID, lastOffset int64) (bool, error) {
	segs := l.segmentsSnapshot()
	s := segs[segmentFor(segs, lastOffset)]
	l.ext.mu.Lock()
	defer l.ext.mu.Unlock()
	entries, err := l.txnEntriesLocked(s)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if e.ProducerID == producerID && e.LastOffset == lastOffset {
			return true, nil
		}
	}
	return false, nil
}

// CollectAbortedTxns returns the aborted transactions a read of
// [fetchOffset, upperBound) must report (see the format above), oldest
// marker first.
func (l *Log) CollectAbortedTxns(fetchOffset, upperBound int64) ([]AbortedTxn, error) {
	segs := l.segmentsSnapshot()
	var out []AbortedTxn
	l.ext.mu.Lock()
	defer l.ext.mu.Unlock()
	for i := segmentFor(segs, fetchOffset); i < len(segs); i++ {
		// A later segment may still hold the marker of a transaction
		// that began below upperBound, so the scan stops only on an
		// entry proving there is none.
		entries, err := l.txnEntriesLocked(segs[i])
		if err != nil {
			return out, err
		}
		for _, e := range entries {
			if e.LastOffset >= fetchOffset && e.FirstOffset < upperBound {
				out = append(out, e)
			}
			if e.LastStableOffset >= upperBound {
				return out, nil
			}
		}
	}
	return out, nil
}

// TruncateAbortedTxns removes the entries whose marker is at or after
// offset (markers cut from the log by recovery), rewriting each affected
// file atomically.
func (l *Log) TruncateAbortedTxns(offset int64) error {
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	segs := l.segmentsSnapshot()
	l.ext.mu.Lock()
	defer l.ext.mu.Unlock()
	for _, s := range segs[segmentFor(segs, offset):] {
		entries, err := l.txnEntriesLocked(s)
		if err != nil {
			return err
		}
		keep := entries[:0:0]
		for _, e := range entries {
			if e.LastOffset < offset {
				keep = append(keep, e)
			}
		}
		if len(keep) == len(entries) {
			continue
		}
		var data []byte
		for _, e := range keep {
			data = AppendAbortedTxnEntry(data, e)
		}
		if err := writeFileAtomic(l.fs, s.txnIndexPath(), data); err != nil {
			return l.fail(err)
		}
		l.ext.mu.txnIndexes[s] = keep
	}
	return nil
}

// syncTxnIndex fsyncs a segment's .txnindex if it has one.
func syncTxnIndex(s *segment) error {
	f, err := s.fs.OpenFile(s.txnIndexPath(), os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return storageError("open transaction index", err)
	}
	serr := f.Sync()
	cerr := f.Close()
	if serr != nil {
		return storageError("sync transaction index", serr)
	}
	return storageError("close transaction index", cerr)
}

// NextOffset returns the offset after the last batch r holds (r.FirstOffset
// when it holds none), reading the batch headers of its last region: the
// upper bound of the aborted transactions a read_committed fetch reports.
func (r ReadResult) NextOffset() (int64, error) {
	if len(r.Regions) == 0 {
		return r.FirstOffset, nil
	}
	last := r.Regions[len(r.Regions)-1]
	sc := newHeaderScanner(last.File, last.Offset+last.Length)
	next := r.FirstOffset
	for pos := last.Offset; ; {
		h, err := sc.headerAt(pos)
		if err == io.EOF {
			return next, nil
		}
		if err != nil {
			return next, err
		}
		next = h.LastOffset() + 1
		pos += int64(h.Size())
	}
}
