package share

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestSnapshotRecordBytes(t *testing.T) {
	k, v := EncodeSnapshot(Key{Group: "g"}, PersistedState{SnapshotEpoch: 1, LeaderEpoch: 3, StartOffset: 10,
		Batches: []StateBatch{{FirstOffset: 10, LastOffset: 11, State: Acknowledged, DeliveryCount: 1}}}, false)
	wantKey := "0000" + "000167" + strings.Repeat("00", 16) + "00000000"
	wantValue := "0000" + "0001" + "00000000" + "00000003" + "000000000000000a" +
		"02" + "000000000000000a" + "000000000000000b" + "02" + "0001" + "00" + "00"
	if hex.EncodeToString(k) != wantKey || hex.EncodeToString(v) != wantValue {
		t.Fatalf("key %x value %x", k, v)
	}
	r, err := DecodeStateRecord(k, v)
	if err != nil || r.Key.Group != "g" || r.State.StartOffset != 10 || len(r.State.Batches) != 1 || r.State.Batches[0].State != Acknowledged {
		t.Fatalf("decoded %+v, %v", r, err)
	}
	if r, err := DecodeStateRecord(k, nil); err != nil || !r.Tombstone {
		t.Fatalf("tombstone: %+v %v", r, err)
	}
}

// FuzzStateRecord: any bytes decode to a record or an error, and a decoded
// snapshot encodes to bytes that decode to the same state.
func FuzzStateRecord(f *testing.F) {
	k, v := EncodeSnapshot(Key{Group: "group", TopicID: [16]byte{1}, Partition: 3}, PersistedState{SnapshotEpoch: 2, StateEpoch: 1, StartOffset: 5,
		Batches: []StateBatch{{FirstOffset: 5, LastOffset: 9, State: Archived, DeliveryCount: 5}}}, false)
	f.Add(k, v)
	f.Add(k, []byte(nil))
	f.Add([]byte{0, 1, 0, 0}, []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r, err := DecodeStateRecord(key, value)
		if err != nil || r.Update || r.Tombstone {
			return
		}
		k2, v2 := EncodeSnapshot(r.Key, r.State, false)
		again, err := DecodeStateRecord(k2, v2)
		if err != nil || !reflect.DeepEqual(again.State, r.State) || again.Key != r.Key {
			t.Fatalf("round trip: %+v -> %+v, %v", r, again, err)
		}
	})
}

func TestMergeBatches(t *testing.T) {
	b := func(first, last int64, s RecordState, dc int16) StateBatch {
		return StateBatch{FirstOffset: first, LastOffset: last, State: s, DeliveryCount: dc}
	}
	got := MergeBatches(
		[]StateBatch{b(0, 9, Available, 1), b(10, 19, Acknowledged, 1)},
		[]StateBatch{b(3, 4, Archived, 2), b(9, 12, Acknowledged, 2), b(25, 25, Available, 1)},
		2)
	want := []StateBatch{b(2, 2, Available, 1), b(3, 4, Archived, 2), b(5, 8, Available, 1), b(9, 12, Acknowledged, 2), b(13, 19, Acknowledged, 1), b(25, 25, Available, 1)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// memStateStorage is StateStorage in memory.
type memStateStorage struct {
	mu   sync.Mutex
	logs map[int32][]StateKV
	fail error
}

func (m *memStateStorage) Append(p int32, records []StateKV) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if m.logs == nil {
		m.logs = map[int32][]StateKV{}
	}
	m.logs[p] = append(m.logs[p], records...)
	return nil
}

func (m *memStateStorage) Load(p int32, fn func(key, value []byte) error) error {
	m.mu.Lock()
	logs := append([]StateKV(nil), m.logs[p]...)
	m.mu.Unlock()
	for _, kv := range logs {
		if err := fn(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	return nil
}

func waitActive(t *testing.T, c *StateCoordinator, p int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if code := c.run(p, func(*statePartition) int16 { return 0 }); code == 0 {
			return
		} else if code != kerr.CoordinatorLoadInProgress.Code {
			t.Fatalf("partition %d: %v", p, kerr.ErrorForCode(code))
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("partition never loaded")
}

// TestStateCoordinator: initialize, write, read back, fencing, a reload
// from the log (a new leader), deletion, and a failed append.
func TestStateCoordinator(t *testing.T) {
	storage := &memStateStorage{}
	c := NewStateCoordinator(storage, nil)
	key := Key{Group: "g", TopicID: [16]byte{7}, Partition: 1}
	if code := c.Initialize(0, key, 0, 5); code != kerr.NotCoordinator.Code {
		t.Fatalf("unled partition: %v", kerr.ErrorForCode(code))
	}
	c.OnElected(0)
	waitActive(t, c, 0)
	if _, found, code := c.Read(0, key, -1); found || code != 0 {
		t.Fatalf("uninitialized read: %v %v", found, code)
	}
	if code := c.Initialize(0, key, 1, 5); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	if code := c.Write(0, key, 1, 2, 7, []StateBatch{{FirstOffset: 7, LastOffset: 9, State: Acknowledged, DeliveryCount: 1}}); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	if code := c.Write(0, key, 0, 2, 7, nil); code != kerr.FencedStateEpoch.Code {
		t.Fatalf("old state epoch: %v", kerr.ErrorForCode(code))
	}
	if code := c.Write(0, key, 1, 1, 7, nil); code != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("old leader epoch: %v", kerr.ErrorForCode(code))
	}
	c.OnResigned(0)
	again := NewStateCoordinator(storage, nil)
	again.OnElected(0)
	waitActive(t, again, 0)
	s, found, code := again.Read(0, key, 2)
	if !found || code != 0 || s.StartOffset != 7 || s.StateEpoch != 1 || fmt.Sprint(s.Batches) != fmt.Sprint([]StateBatch{{7, 9, Acknowledged, 1}}) {
		t.Fatalf("after reload: %+v %v %v", s, found, code)
	}
	storage.fail = kerr.NotEnoughReplicas
	if code := again.Delete(0, key); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("failed append: %v", kerr.ErrorForCode(code))
	}
	storage.fail = nil
	if code := again.Delete(0, key); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	if _, found, _ := again.Read(0, key, -1); found {
		t.Fatal("deleted state still read")
	}
	if last := storage.logs[0][len(storage.logs[0])-1]; last.Value != nil || !bytes.HasPrefix(last.Key, []byte{0, 0}) {
		t.Fatal("delete did not write a tombstone")
	}
	again.Close()
}
