package log

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/record"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// producerOpts are the build options of a batch of producer pid.
func producerOpts(pid int64, epoch int16, seq int32, transactional bool) record.BuildOptions {
	opts := record.DefaultBuildOptions()
	opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence, opts.Transactional = pid, epoch, seq, transactional
	return opts
}

// appendMarker appends an end-transaction marker and returns its offset.
func appendMarker(t *testing.T, l *Log, pid int64, epoch int16, typ record.ControlType, ts int64) int64 {
	t.Helper()
	b, err := record.BuildControlBatch(record.ControlBatchOptions{TimestampMs: ts, ProducerID: pid, ProducerEpoch: epoch, Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	r := mustAppend(t, l, b, 0)
	l.UpdateHighWatermark(l.LogEndOffset())
	return r.BaseOffset
}

// appendMarkerTo commits producer pid's transaction and rolls, so the
// marker's segment can be cleaned.
func appendMarkerTo(t *testing.T, l *Log, pid int64) {
	t.Helper()
	appendMarker(t, l, pid, 0, record.ControlCommit, 1_700_000_000_000)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
}

// batchAt returns the header of the batch holding offset, if any.
func batchAt(headers []record.Header, offset int64) (record.Header, bool) {
	for _, h := range headers {
		if h.BaseOffset <= offset && offset <= h.LastOffset() {
			return h, true
		}
	}
	return record.Header{}, false
}

// TestCleanProducerState: the last batch of an active producer stays, as a
// header with no records, with its offsets, producer id, epoch and base
// sequence; the batches of an expired producer go.
func TestCleanProducerState(t *testing.T) {
	clock := newTestClock()
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), compactConfig(), OpenOptions{Clock: clock.Now})
	defer l.Close()
	m := newModel()
	now := clock.Now().UnixMilli()
	appendProducer := func(pid int64, seq int32, ts int64, kvs ...kv) AppendResult {
		r := mustAppend(t, l, keyedBatchOpts(t, producerOpts(pid, 3, seq, false), ts, kvs...), 0)
		for i, e := range kvs {
			m.records[r.BaseOffset+int64(i)] = loggedRecord{offset: r.BaseOffset + int64(i), key: e.key, value: e.value, timestamp: ts + int64(i)}
		}
		l.UpdateHighWatermark(l.LogEndOffset())
		return r
	}
	roll := func() {
		m.appendKV(t, l, now, kv{fmt.Sprint("pad-", l.LogEndOffset()), val("pad")})
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	expired := appendProducer(2000, 0, now-2*86_400_000, kv{"a", val("old")}, kv{"b", val("old")})
	roll()
	var last AppendResult
	for i := int32(0); i < 5; i++ {
		last = appendProducer(1000, i*2, now, kv{"a", val(fmt.Sprint(i))}, kv{"b", val(fmt.Sprint(i))})
	}
	roll()
	m.appendKV(t, l, now, kv{"a", val("final")}, kv{"b", val("final")})
	roll()
	cleanOnce(t, testCleaner(clock), l, clock, 0)
	got, headers := readRecords(t, l)
	for _, r := range got {
		if (r.key == "a" || r.key == "b") && string(r.value) != "final" {
			t.Fatalf("superseded record %q=%q at %d kept", r.key, r.value, r.offset)
		}
	}
	h, ok := batchAt(headers, last.LastOffset)
	if !ok || h.RecordCount != 0 || h.BaseOffset != last.BaseOffset || h.LastOffset() != last.LastOffset ||
		h.ProducerID != 1000 || h.ProducerEpoch != 3 || h.BaseSequence != 8 {
		t.Fatalf("last batch of the active producer: %+v (found %v), want empty at %d..%d seq 8", h, ok, last.BaseOffset, last.LastOffset)
	}
	for _, h := range headers {
		if h.ProducerID == 1000 && h.LastOffset() != last.LastOffset {
			t.Fatalf("earlier batch %d..%d of producer 1000 kept", h.BaseOffset, h.LastOffset())
		}
	}
	if _, ok := batchAt(headers, expired.BaseOffset); ok {
		t.Fatal("batch of an expired producer kept")
	}
}

// TestCleanTransactions: aborted data goes at the first pass; its marker and
// .txnindex entry stay while any batch of the transaction is left, then the
// marker gets a delete horizon and goes after it, as does a commit marker
// whose data is gone. An open transaction bounds the pass.
func TestCleanTransactions(t *testing.T) {
	clock := newTestClock()
	cfg := compactConfig()
	cfg.Compaction.DeleteRetentionMs = 60_000
	l := openLog(t, vfs.Default, filepath.Join(t.TempDir(), "t-0"), cfg, OpenOptions{Clock: clock.Now})
	defer l.Close()
	m := newModel()
	ts := func() int64 { return clock.Now().UnixMilli() }
	pad := func() {
		for i := 0; i < 30; i++ {
			m.appendKV(t, l, ts(), kv{fmt.Sprintf("pad%d", i%3), val(fmt.Sprint(ts(), i))})
		}
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	m.appendKV(t, l, ts(), kv{"x", val("committed-before")})
	aborted := mustAppend(t, l, keyedBatchOpts(t, producerOpts(3000, 0, 0, true), ts(), kv{"x", val("aborted")}), 0)
	abortAt := appendMarker(t, l, 3000, 0, record.ControlAbort, ts())
	if err := l.AppendAbortedTxn(AbortedTxn{ProducerID: 3000, FirstOffset: aborted.BaseOffset, LastOffset: abortAt, LastStableOffset: abortAt + 1}); err != nil {
		t.Fatal(err)
	}
	committed := mustAppend(t, l, keyedBatchOpts(t, producerOpts(3001, 0, 0, true), ts(), kv{"y", val("committed")}), 0)
	m.records[committed.BaseOffset] = loggedRecord{offset: committed.BaseOffset, key: "y", value: val("committed"), timestamp: ts()}
	commitAt := appendMarker(t, l, 3001, 0, record.ControlCommit, ts())
	pad()

	c := testCleaner(clock)
	c.producerExpirationMs = 3_600_000
	first := cleanOnce(t, c, l, clock, 0)
	got, headers := readRecords(t, l)
	for _, r := range got {
		if string(r.value) == "aborted" {
			t.Fatal("aborted record kept")
		}
	}
	checkCompacted(t, l, m, first.endOffset, false)
	for _, at := range []int64{abortAt, commitAt} {
		if h, ok := batchAt(headers, at); !ok || h.HasDeleteHorizon() {
			t.Fatalf("marker at %d after the first pass: %+v found %v", at, h, ok)
		}
	}
	if txns, err := l.CollectAbortedTxns(0, l.LogEndOffset()); err != nil || len(txns) != 1 || txns[0].LastOffset != abortAt {
		t.Fatalf("aborted transactions after cleaning: %+v %v", txns, err)
	}

	// The producers expire; a new value of y empties the committed
	// transaction.
	clock.Advance(2 * time.Hour)
	m.appendKV(t, l, ts(), kv{"y", val("later")})
	pad()
	cleanOnce(t, c, l, clock, 0) // drops the aborted batch's header and the data of y
	cleanOnce(t, c, l, clock, 0) // finds both transactions empty: horizons set
	_, headers = readRecords(t, l)
	for _, at := range []int64{abortAt, commitAt} {
		if h, ok := batchAt(headers, at); !ok || !h.HasDeleteHorizon() {
			t.Fatalf("marker at %d of an empty transaction: %+v found %v, want a delete horizon", at, h, ok)
		}
	}
	if txns, _ := l.CollectAbortedTxns(0, l.LogEndOffset()); len(txns) != 0 {
		t.Fatalf("index entry of an emptied aborted transaction kept: %+v", txns)
	}
	clock.Advance(2 * time.Minute)
	pad()
	cleanOnce(t, c, l, clock, 0)
	_, headers = readRecords(t, l)
	for _, at := range []int64{abortAt, commitAt} {
		if _, ok := batchAt(headers, at); ok {
			t.Fatalf("marker at %d kept past its delete horizon", at)
		}
	}

	// An open transaction: nothing from its segment on is cleaned.
	open := mustAppend(t, l, keyedBatchOpts(t, producerOpts(4000, 0, 0, true), ts(), kv{"z", val("open")}), 0)
	m.records[open.BaseOffset] = loggedRecord{offset: open.BaseOffset, key: "z", value: val("open"), timestamp: ts()}
	pad()
	pad()
	stats := cleanOnce(t, c, l, clock, 0)
	segs := l.segmentsSnapshot()
	if holder := segs[segmentFor(segs, open.BaseOffset)].baseOffset; stats.endOffset > holder {
		t.Fatalf("cleaned to %d, past the open transaction's segment at %d", stats.endOffset, holder)
	}
	checkCompacted(t, l, m, stats.endOffset, true)
}
