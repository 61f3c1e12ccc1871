package quorum

import (
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strconv"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Endpoint is one listener of a voter, as KIP-853's VotersRecord and
// AddRaftVoter name them.
type Endpoint struct {
	Name string // listener name, e.g. CONTROLLER
	Host string
	Port uint16
}

// Addr is host:port.
func (e Endpoint) Addr() string { return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))) }

// Member is one node of the voter set: a voter, or a learner that receives
// the log and is being caught up before it is promoted to a voter (KIP-853's
// observer that AddRaftVoter waits for).
type Member struct {
	ID int32
	// DirectoryID is the voter's metadata log directory id (KIP-858); zero
	// when unknown, as for the voters of controller.quorum.voters.
	DirectoryID [16]byte
	// Endpoints are the voter's controller listeners; the first is the one
	// the quorum dials.
	Endpoints []Endpoint
	Learner   bool
}

// Addr is the address of the member's first endpoint, or "".
func (m Member) Addr() string {
	if len(m.Endpoints) == 0 {
		return ""
	}
	return m.Endpoints[0].Addr()
}

// VoterSet is the quorum's membership at one point of the metadata log:
// what Kafka keeps in its KRaftVersionRecord and VotersRecord control
// records. Each configuration change entry carries the whole set it
// produces, so the latest one in a log (or the snapshot below it) gives the
// voters and their endpoints without anything else.
type VoterSet struct {
	// KRaftVersion is the finalized kraft.version: 0 static voters, 1
	// voters changed with AddRaftVoter and RemoveRaftVoter.
	KRaftVersion int16
	// Members are sorted by ID, each ID once.
	Members []Member
}

// Voter-set record limits.
const (
	// maxKRaftVersion is the highest kraft.version this build runs.
	maxKRaftVersion       = 1
	votersRecordVersion   = 0
	maxMemberEndpoints    = 16
	maxEndpointFieldBytes = 1 << 10
	learnerFlag           = 1
)

// Voters returns the ids of the voters (not learners), ascending.
func (s VoterSet) Voters() []uint64 {
	var ids []uint64
	for _, m := range s.Members {
		if !m.Learner {
			ids = append(ids, uint64(m.ID))
		}
	}
	return ids
}

// Learners returns the ids of the learners, ascending.
func (s VoterSet) Learners() []uint64 {
	var ids []uint64
	for _, m := range s.Members {
		if m.Learner {
			ids = append(ids, uint64(m.ID))
		}
	}
	return ids
}

// Member returns the member with id.
func (s VoterSet) Member(id int32) (Member, bool) {
	i, found := slices.BinarySearchFunc(s.Members, id, func(m Member, id int32) int { return int(m.ID) - int(id) })
	if !found {
		return Member{}, false
	}
	return s.Members[i], true
}

// IsVoter reports whether id votes.
func (s VoterSet) IsVoter(id int32) bool {
	m, ok := s.Member(id)
	return ok && !m.Learner
}

// with returns a copy of s with m added or replacing the member of its id.
func (s VoterSet) with(m Member) VoterSet {
	out := s.clone()
	i, found := slices.BinarySearchFunc(out.Members, m.ID, func(x Member, id int32) int { return int(x.ID) - int(id) })
	if found {
		out.Members[i] = m
	} else {
		out.Members = slices.Insert(out.Members, i, m)
	}
	return out
}

// without returns a copy of s without the member id.
func (s VoterSet) without(id int32) VoterSet {
	out := s.clone()
	out.Members = slices.DeleteFunc(out.Members, func(m Member) bool { return m.ID == id })
	return out
}

func (s VoterSet) clone() VoterSet {
	out := VoterSet{KRaftVersion: s.KRaftVersion, Members: make([]Member, len(s.Members))}
	for i, m := range s.Members {
		m.Endpoints = slices.Clone(m.Endpoints)
		out.Members[i] = m
	}
	return out
}

// confState is the raft configuration of s.
func (s VoterSet) confState() *raftpb.ConfState {
	return raftpb.EnsureConfState(&raftpb.ConfState{Voters: s.Voters(), Learners: s.Learners()})
}

// staticVoterSet is the kraft.version 0 set of controller.quorum.voters.
func staticVoterSet(voters []Voter, listenerName string) VoterSet {
	var s VoterSet
	for _, v := range voters {
		m := Member{ID: v.ID}
		if host, portText, err := net.SplitHostPort(v.Addr); err == nil {
			port, _ := strconv.ParseUint(portText, 10, 16)
			m.Endpoints = []Endpoint{{Name: listenerName, Host: host, Port: uint16(port)}}
		}
		s = s.with(m)
	}
	return s
}

// fillEndpoints gives members that have no endpoint the one from known, the
// addresses of controller.quorum.voters (a set read from an older format
// records ids only).
func (s VoterSet) fillEndpoints(known VoterSet) VoterSet {
	out := s.clone()
	for i, m := range out.Members {
		if len(m.Endpoints) == 0 {
			if k, ok := known.Member(m.ID); ok {
				out.Members[i].Endpoints = slices.Clone(k.Endpoints)
			}
		}
	}
	return out
}

// appendVoterSet appends the voters record of s (see the package doc).
func appendVoterSet(dst []byte, s VoterSet) []byte {
	dst = append(dst, votersRecordVersion)
	dst = binary.BigEndian.AppendUint16(dst, uint16(s.KRaftVersion))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s.Members)))
	for _, m := range s.Members {
		dst = binary.BigEndian.AppendUint32(dst, uint32(m.ID))
		dst = append(dst, m.DirectoryID[:]...)
		flags := byte(0)
		if m.Learner {
			flags |= learnerFlag
		}
		dst = append(dst, flags, byte(len(m.Endpoints)))
		for _, e := range m.Endpoints {
			dst = binary.BigEndian.AppendUint16(dst, uint16(len(e.Name)))
			dst = append(dst, e.Name...)
			dst = binary.BigEndian.AppendUint16(dst, uint16(len(e.Host)))
			dst = append(dst, e.Host...)
			dst = binary.BigEndian.AppendUint16(dst, e.Port)
		}
	}
	return dst
}

// decodeVoterSet parses a voters record that fills b exactly.
func decodeVoterSet(b []byte) (VoterSet, error) {
	var s VoterSet
	r := fieldReader{b: b}
	version := r.u8()
	kraftVersion := int16(r.u16())
	count := r.u32()
	if r.err != nil {
		return s, fmt.Errorf("%w: voters record of %d bytes is shorter than its header", ErrCorrupt, len(b))
	}
	if version != votersRecordVersion {
		return s, fmt.Errorf("%w: voters record version %d, want %d", ErrCorrupt, version, votersRecordVersion)
	}
	if kraftVersion < 0 || kraftVersion > maxKRaftVersion {
		return s, fmt.Errorf("%w: voters record kraft.version %d", ErrCorrupt, kraftVersion)
	}
	// Each member takes at least 22 bytes: never trust count beyond them.
	if count > maxSnapshotVoters || uint64(count)*22 > uint64(len(b)) {
		return s, fmt.Errorf("%w: voters record claims %d members in %d bytes", ErrCorrupt, count, len(b))
	}
	s.KRaftVersion = kraftVersion
	s.Members = make([]Member, 0, count)
	for i := uint32(0); i < count; i++ {
		var m Member
		m.ID = int32(r.u32())
		copy(m.DirectoryID[:], r.bytes(16))
		flags := r.u8()
		endpoints := r.u8()
		if r.err != nil {
			break
		}
		if m.ID <= 0 || flags&^learnerFlag != 0 || endpoints > maxMemberEndpoints {
			return s, fmt.Errorf("%w: voters record member %d: id %d, flags %#x, %d endpoints", ErrCorrupt, i, m.ID, flags, endpoints)
		}
		if n := len(s.Members); n > 0 && s.Members[n-1].ID >= m.ID {
			return s, fmt.Errorf("%w: voters record member ids out of order at %d", ErrCorrupt, m.ID)
		}
		m.Learner = flags&learnerFlag != 0
		for range endpoints {
			var e Endpoint
			e.Name = string(r.bytes(int(r.u16())))
			e.Host = string(r.bytes(int(r.u16())))
			e.Port = r.u16()
			if r.err != nil {
				break
			}
			if e.Name == "" || e.Host == "" || len(e.Name) > maxEndpointFieldBytes || len(e.Host) > maxEndpointFieldBytes {
				return s, fmt.Errorf("%w: voters record member %d has an endpoint %q %q", ErrCorrupt, m.ID, e.Name, e.Host)
			}
			m.Endpoints = append(m.Endpoints, e)
		}
		s.Members = append(s.Members, m)
	}
	if r.err != nil {
		return VoterSet{}, fmt.Errorf("%w: voters record truncated", ErrCorrupt)
	}
	if len(r.b) != 0 {
		return VoterSet{}, fmt.Errorf("%w: %d bytes after the voters record", ErrCorrupt, len(r.b))
	}
	if len(s.Voters()) == 0 && len(s.Members) > 0 {
		return VoterSet{}, fmt.Errorf("%w: voters record has learners but no voter", ErrCorrupt)
	}
	return s, nil
}

// Configuration change entries: an EntryConfChangeV2 whose raftpb.ConfChangeV2
// holds one change and, as its context, the proposal id and the voter set
// after the change:
//
//	offset  size  field
//	     0     8  proposalId  big-endian
//	     8     .  voters record
func encodeChangeContext(proposalID uint64, s VoterSet) []byte {
	return appendVoterSet(binary.BigEndian.AppendUint64(nil, proposalID), s)
}

// encodeConfChange returns the entry data of a change of one member to s.
func encodeConfChange(proposalID uint64, typ raftpb.ConfChangeType, id int32, s VoterSet) ([]byte, *raftpb.ConfChangeV2, error) {
	cc := &raftpb.ConfChangeV2{
		Changes: []*raftpb.ConfChangeSingle{{Type: typ.Enum(), NodeId: new(uint64(id))}},
		Context: encodeChangeContext(proposalID, s),
	}
	b, err := proto.Marshal(cc)
	return b, cc, err
}

// decodeConfChangeEntry parses the data of an EntryConfChangeV2 written by
// encodeConfChange.
func decodeConfChangeEntry(data []byte) (*raftpb.ConfChangeV2, uint64, VoterSet, error) {
	cc := &raftpb.ConfChangeV2{}
	if err := proto.Unmarshal(data, cc); err != nil {
		return nil, 0, VoterSet{}, fmt.Errorf("%w: configuration change: %v", ErrCorrupt, err)
	}
	if len(cc.GetChanges()) != 1 || cc.GetTransition() != raftpb.ConfChangeTransitionAuto {
		return nil, 0, VoterSet{}, fmt.Errorf("%w: configuration change of %d members", ErrCorrupt, len(cc.GetChanges()))
	}
	id, set, err := decodeChangeContext(cc.GetContext())
	if err != nil {
		return nil, 0, VoterSet{}, err
	}
	return cc, id, set, nil
}

func decodeChangeContext(b []byte) (proposalID uint64, s VoterSet, err error) {
	if len(b) < 8 {
		return 0, s, fmt.Errorf("%w: configuration change context of %d bytes", ErrCorrupt, len(b))
	}
	s, err = decodeVoterSet(b[8:])
	return binary.BigEndian.Uint64(b), s, err
}

// Snapshot payload: the raft snapshot's data, on the wire and in the file,
// is the voter set at the snapshot's index followed by the state machine's
// snapshot:
//
//	offset  size  field
//	     0     4  votersLength  v, big-endian
//	     4     v  voters record
//	   4+v     .  state machine snapshot
func encodeSnapshotPayload(s VoterSet, data []byte) []byte {
	record := appendVoterSet(nil, s)
	b := make([]byte, 0, 4+len(record)+len(data))
	b = binary.BigEndian.AppendUint32(b, uint32(len(record)))
	b = append(b, record...)
	return append(b, data...)
}

func decodeSnapshotPayload(b []byte) (VoterSet, []byte, error) {
	if len(b) < 4 {
		return VoterSet{}, nil, fmt.Errorf("%w: snapshot payload of %d bytes", ErrCorrupt, len(b))
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return VoterSet{}, nil, fmt.Errorf("%w: snapshot voters record of %d bytes in %d", ErrCorrupt, n, len(b)-4)
	}
	s, err := decodeVoterSet(b[4 : 4+n])
	if err != nil {
		return VoterSet{}, nil, err
	}
	if len(s.Voters()) == 0 {
		return VoterSet{}, nil, fmt.Errorf("%w: snapshot has no voters", ErrCorrupt)
	}
	return s, b[4+n:], nil
}

// fieldReader reads big-endian fields, remembering the first short read.
type fieldReader struct {
	b   []byte
	err error
}

func (r *fieldReader) bytes(n int) []byte {
	if r.err != nil || n > len(r.b) {
		r.err = fmt.Errorf("short")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *fieldReader) u8() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *fieldReader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (r *fieldReader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}
