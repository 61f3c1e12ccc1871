package log

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

func TestAbortedTxnEntryLayout(t *testing.T) {
	b := AppendAbortedTxnEntry(nil, AbortedTxn{ProducerID: 7, FirstOffset: 10, LastOffset: 20, LastStableOffset: 21})
	want := []byte{
		0, 0, // version
		0, 0, 0, 0, 0, 0, 0, 7, // producer id
		0, 0, 0, 0, 0, 0, 0, 10, // first offset
		0, 0, 0, 0, 0, 0, 0, 20, // last offset
		0, 0, 0, 0, 0, 0, 0, 21, // last stable offset
	}
	if !reflect.DeepEqual(b, want) || len(b) != AbortedTxnBytes {
		t.Fatalf("entry = %v, want %v", b, want)
	}
}

func TestTxnIndexAppendCollectAcrossRollAndReopen(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig()
	l := openLog(t, vfs.Default, dir, cfg, OpenOptions{HadCleanShutdown: true})
	var rolled []int64
	l.OnRoll(func(base int64) { rolled = append(rolled, base) })

	// Offsets 0..9 in the first segment; abort of pid 1 covering 2..9.
	for range 10 {
		mustAppend(t, l, makeBatch(1, 10, 1000), 0)
	}
	if err := l.AppendAbortedTxn(AbortedTxn{ProducerID: 1, FirstOffset: 2, LastOffset: 9, LastStableOffset: 10}); err != nil {
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rolled, []int64{10}) {
		t.Fatalf("roll hook saw %v, want [10]", rolled)
	}
	for range 10 {
		mustAppend(t, l, makeBatch(1, 10, 1000), 0)
	}
	// pid 2 aborted 12..19 while pid 3 was open from 15: LSO 15.
	if err := l.AppendAbortedTxn(AbortedTxn{ProducerID: 2, FirstOffset: 12, LastOffset: 19, LastStableOffset: 15}); err != nil {
		t.Fatal(err)
	}
	check := func(l *Log) {
		t.Helper()
		got, err := l.CollectAbortedTxns(0, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ProducerID != 1 {
			t.Fatalf("collect [0,5) = %+v, want pid 1 only", got)
		}
		got, _ = l.CollectAbortedTxns(10, 20)
		if len(got) != 1 || got[0].ProducerID != 2 {
			t.Fatalf("collect [10,20) = %+v, want pid 2 only", got)
		}
		got, _ = l.CollectAbortedTxns(0, 20)
		if len(got) != 2 {
			t.Fatalf("collect [0,20) = %+v, want both", got)
		}
		if ok, _ := l.HasAbortedTxn(2, 19); !ok {
			t.Fatal("HasAbortedTxn(2, 19) = false")
		}
	}
	check(l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, vfs.Default, dir, cfg, OpenOptions{HadCleanShutdown: true})
	defer l.Close()
	check(l)

	// Recovery cut the log below the second marker: its entry goes.
	if err := l.TruncateAbortedTxns(19); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.CollectAbortedTxns(0, 20); len(got) != 1 {
		t.Fatalf("after truncate: %+v", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "00000000000000000010.txnindex")); err != nil || len(b) != 0 {
		t.Fatalf("second segment txnindex = %d bytes, %v", len(b), err)
	}
}

func TestTxnIndexTornTailIsDropped(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, vfs.Default, dir, smallConfig(), OpenOptions{HadCleanShutdown: true})
	mustAppend(t, l, makeBatch(3, 10, 1000), 0)
	if err := l.AppendAbortedTxn(AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	path := filepath.Join(dir, "00000000000000000000.txnindex")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0, 0, 1, 2, 3})
	f.Close()
	l = openLog(t, vfs.Default, dir, smallConfig(), OpenOptions{HadCleanShutdown: true})
	defer l.Close()
	got, err := l.CollectAbortedTxns(0, 3)
	if err != nil || len(got) != 1 {
		t.Fatalf("collect = %+v, %v; want the one whole entry", got, err)
	}
}

func TestProducerSnapshotFiles(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, vfs.Default, dir, smallConfig(), OpenOptions{HadCleanShutdown: true})
	defer l.Close()
	for _, off := range []int64{30, 10, 20} {
		if err := l.WriteProducerSnapshot(off, []byte{byte(off)}); err != nil {
			t.Fatal(err)
		}
	}
	offs, err := l.ProducerSnapshotOffsets()
	if err != nil || !reflect.DeepEqual(offs, []int64{10, 20, 30}) {
		t.Fatalf("offsets = %v, %v", offs, err)
	}
	if b, err := l.ReadProducerSnapshot(20); err != nil || len(b) != 1 || b[0] != 20 {
		t.Fatalf("read = %v, %v", b, err)
	}
	if err := l.DeleteProducerSnapshot(20); err != nil {
		t.Fatal(err)
	}
	if offs, _ := l.ProducerSnapshotOffsets(); !reflect.DeepEqual(offs, []int64{10, 30}) {
		t.Fatalf("after delete: %v", offs)
	}
}

func FuzzDecodeAbortedTxns(f *testing.F) {
	var seed []byte
	seed = AppendAbortedTxnEntry(seed, AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 5, LastStableOffset: 6})
	seed = AppendAbortedTxnEntry(seed, AbortedTxn{ProducerID: 2, FirstOffset: 3, LastOffset: 9, LastStableOffset: 10})
	f.Add(seed)
	f.Add(seed[:40])
	f.Add([]byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := DecodeAbortedTxns(b)
		if len(entries) > len(b)/AbortedTxnBytes {
			t.Fatalf("%d entries from %d bytes", len(entries), len(b))
		}
		if err == nil && len(entries)*AbortedTxnBytes != len(b) {
			t.Fatalf("no error but %d entries from %d bytes", len(entries), len(b))
		}
		var again []byte
		for _, e := range entries {
			again = AppendAbortedTxnEntry(again, e)
		}
		if string(again) != string(b[:len(again)]) {
			t.Fatal("decoded entries do not re-encode to their bytes")
		}
	})
}
