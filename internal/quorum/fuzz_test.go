package quorum

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// The example in the package doc.
func TestProposalFormatMatchesDoc(t *testing.T) {
	got := hex.EncodeToString(encodeProposal(7, [][]byte{[]byte("ab")}))
	if want := "00" + "0000000000000007" + "00000001" + "00000002" + "6162"; got != want {
		t.Fatalf("proposal %s, want %s", got, want)
	}
}

func FuzzDecodeProposal(f *testing.F) {
	f.Add(encodeProposal(7, [][]byte{[]byte("ab")}))
	f.Add(encodeProposal(1, [][]byte{{}, []byte("x"), bytes.Repeat([]byte("y"), 300)}))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		id, values, err := decodeProposal(data)
		if err != nil {
			return
		}
		if again := encodeProposal(id, values); !bytes.Equal(again, data) {
			t.Fatalf("decoded %d %q re-encodes to %x, not %x", id, values, again, data)
		}
	})
}

func FuzzDecodeEntryBatch(f *testing.F) {
	for _, e := range []*raftpb.Entry{
		{Index: new(uint64(1)), Term: new(uint64(1)), Type: new(raftpb.EntryNormal)},
		{Index: new(uint64(42)), Term: new(uint64(3)), Type: new(raftpb.EntryNormal), Data: encodeProposal(9, [][]byte{[]byte("v")})},
		{Index: new(uint64(7)), Term: new(uint64(2)), Type: new(raftpb.EntryConfChange), Data: []byte{1, 2, 3}},
	} {
		b, err := appendEntryBatch(nil, e, 1700000000000)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, batch []byte) {
		e, err := decodeEntryBatch(batch)
		if err != nil {
			return
		}
		b, err := appendEntryBatch(nil, e, 0)
		if err != nil {
			t.Fatalf("decoded entry %v does not encode: %v", e, err)
		}
		again, err := decodeEntryBatch(b)
		if err != nil || !proto.Equal(again, e) {
			t.Fatalf("entry %v round-trips to %v, %v", e, again, err)
		}
	})
}

func FuzzDecodeQuorumState(f *testing.F) {
	for _, s := range []quorumState{
		newQuorumState(1, []uint64{1, 2, 3}, 5, 2, 41),
		newQuorumState(3, []uint64{3}, 0, 0, 0),
	} {
		b, _ := json.Marshal(s)
		f.Add(b)
	}
	f.Add([]byte(`{"data_version":0,"nodeId":1,"leaderEpoch":18446744073709551615,"votedId":-1,"currentVoters":[{"voterId":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeQuorumState(data)
		if err != nil {
			return
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeQuorumState(b)
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("state %+v round-trips to %+v, %v", s, again, err)
		}
	})
}

func FuzzDecodeSnapshot(f *testing.F) {
	three := staticVoterSet([]Voter{{1, "a:1"}, {2, "b:2"}, {3, "c:3"}}, "CONTROLLER")
	f.Add(encodeSnapshot(&raftpb.Snapshot{Data: encodeSnapshotPayload(three, []byte("state")), Metadata: &raftpb.SnapshotMetadata{
		Index: new(uint64(100)), Term: new(uint64(4))}}))
	f.Add(encodeSnapshot(&raftpb.Snapshot{Data: encodeSnapshotPayload(staticVoterSet([]Voter{{1, "a:1"}}, "C"), nil), Metadata: &raftpb.SnapshotMetadata{
		Index: new(uint64(1)), Term: new(uint64(1))}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, err := decodeSnapshot(data)
		if err != nil {
			return
		}
		again := encodeSnapshot(snap)
		if binary.BigEndian.Uint16(data[4:]) == snapshotVersion0 {
			// A version 0 file is rewritten as version 1 with the same content.
			back, err := decodeSnapshot(again)
			if err != nil || !bytes.Equal(back.GetData(), snap.GetData()) || back.GetMetadata().GetIndex() != snap.GetMetadata().GetIndex() {
				t.Fatalf("version 0 snapshot does not survive version 1: %v", err)
			}
			return
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("snapshot re-encodes to %x, not %x", again, data)
		}
	})
}

func FuzzReadStream(f *testing.F) {
	frame := func(m *raftpb.Message) []byte {
		b, _ := proto.Marshal(m)
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
	}
	good := appendPreamble(nil, 1, 2)
	f.Add(good)
	f.Add(append(append(good, frame(heartbeat(1, 2))...), frame(&raftpb.Message{
		Type: new(raftpb.MsgApp), From: new(uint64(1)), To: new(uint64(2)), Term: new(uint64(3)),
		Entries: []*raftpb.Entry{{Index: new(uint64(4)), Term: new(uint64(3)), Data: []byte("x")}},
	})...))
	f.Add(append(appendPreamble(nil, 3, 2), frame(&raftpb.Message{Type: new(raftpb.MsgSnap), From: new(uint64(3)), To: new(uint64(2)),
		Snapshot: &raftpb.Snapshot{Data: []byte("s"), Metadata: &raftpb.SnapshotMetadata{Index: new(uint64(9))}}})...))
	f.Add(append(good, 0xff, 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := readAll(data)
		if err == nil {
			t.Fatalf("readStream returned nil after %d messages at the end of its input", n)
		}
	})
}

func FuzzDecodeVoterSet(f *testing.F) {
	set := staticVoterSet([]Voter{{1, "a:1"}, {2, "[::1]:9093"}}, "CONTROLLER")
	set = set.with(Member{ID: 4, DirectoryID: [16]byte{1, 2, 3}, Learner: true, Endpoints: []Endpoint{{"CONTROLLER", "d", 4}, {"OTHER", "d", 5}}})
	set.KRaftVersion = 1
	f.Add(appendVoterSet(nil, set))
	f.Add(appendVoterSet(nil, VoterSet{}))
	f.Add([]byte{0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeVoterSet(data)
		if err != nil {
			return
		}
		if again := appendVoterSet(nil, s); !bytes.Equal(again, data) {
			t.Fatalf("voter set re-encodes to %x, not %x", again, data)
		}
	})
}

func FuzzDecodeConfChangeEntry(f *testing.F) {
	set := staticVoterSet([]Voter{{1, "a:1"}, {2, "b:2"}, {3, "c:3"}}, "CONTROLLER")
	set.KRaftVersion = 1
	for _, typ := range []raftpb.ConfChangeType{raftpb.ConfChangeAddLearnerNode, raftpb.ConfChangeAddNode, raftpb.ConfChangeRemoveNode, raftpb.ConfChangeUpdateNode} {
		data, _, err := encodeConfChange(7, typ, 3, set)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cc, id, s, err := decodeConfChangeEntry(data)
		if err != nil {
			return
		}
		again, _, err := encodeConfChange(id, cc.GetChanges()[0].GetType(), int32(cc.GetChanges()[0].GetNodeId()), s)
		if err != nil {
			t.Fatal(err)
		}
		if _, id2, s2, err := decodeConfChangeEntry(again); err != nil || id2 != id || !reflect.DeepEqual(s2, s) {
			t.Fatalf("change %x re-decodes to %v %+v %v", again, id2, s2, err)
		}
	})
}
