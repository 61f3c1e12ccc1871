package tier

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
)

// PartitionManifest summarises one partition's remote tier, written by its
// leader after each task that changed it: what a cluster restored from the
// bucket needs to start the partition's log where the bucket ends (the
// package doc draws the envelope and the keys).
//
// Invariant: Segments ascend by BaseOffset and do not overlap.
type PartitionManifest struct {
	TopicID   [16]byte
	Partition int32
	// LeaderEpoch and BrokerID are the writing leader's.
	LeaderEpoch int32
	BrokerID    int32
	// LogStartOffset is the partition's log start offset (DeleteRecords
	// and total retention move it).
	LogStartOffset int64
	WrittenMs      int64
	Segments       []ManifestSegment
}

// ManifestSegment is one readable remote segment of a manifest.
type ManifestSegment struct {
	SegmentID      [16]byte
	BaseOffset     int64
	EndOffset      int64
	MaxTimestampMs int64
	LeaderEpoch    int32
	SizeBytes      int64
	LeaderEpochs   []EpochEntry
}

// MaxLeaderEpoch is the highest leader epoch the manifest names: its
// writer's, or any of its segments'.
func (m *PartitionManifest) MaxLeaderEpoch() int32 {
	top := m.LeaderEpoch
	for _, s := range m.Segments {
		top = max(top, s.LeaderEpoch)
		for _, e := range s.LeaderEpochs {
			top = max(top, e.Epoch)
		}
	}
	return top
}

// TopicManifest is one topic's definition, written by the leader of its
// partition 0: what the controller of a cluster restored from the bucket
// needs to create the topic again under the same topic id, so the bucket's
// keys still name it.
type TopicManifest struct {
	Name              string
	TopicID           [16]byte
	Partitions        int32
	ReplicationFactor int16
	// Configs are the topic's config overrides (the values set on the
	// topic, not the broker defaults).
	Configs map[string]string
	// LeaderEpoch and BrokerID are those of the writing leader of
	// partition 0.
	LeaderEpoch int32
	BrokerID    int32
	WrittenMs   int64
}

// Bounds of a decoded manifest: a body larger than this, or with more
// entries, is corrupt.
const (
	manifestMaxBodyBytes    = 64 << 20
	manifestMaxSegments     = 1 << 20
	manifestMaxConfigs      = 1024
	manifestMaxPartitions   = 1 << 20
	manifestMaxNameBytes    = 249
	manifestMaxConfigBytes  = 1 << 20
	manifestEnvelopeBytes   = 4 + 2 + 4 + 4
	manifestVersion         = 1
	partitionManifestMagic  = "SPMF"
	topicManifestMagic      = "STMF"
	manifestObjectExtension = ".manifest"
)

// ErrCorruptManifest marks a manifest object that does not decode.
var ErrCorruptManifest = errors.New("tier: corrupt manifest")

// The JSON bodies. Ids are lower-case hex, as in object keys.
type partitionManifestJSON struct {
	TopicID        string                `json:"topicId"`
	Partition      int32                 `json:"partition"`
	LeaderEpoch    int32                 `json:"leaderEpoch"`
	BrokerID       int32                 `json:"brokerId"`
	LogStartOffset int64                 `json:"logStartOffset"`
	WrittenMs      int64                 `json:"writtenMs"`
	Segments       []manifestSegmentJSON `json:"segments"`
}

type manifestSegmentJSON struct {
	SegmentID      string     `json:"segmentId"`
	BaseOffset     int64      `json:"baseOffset"`
	EndOffset      int64      `json:"endOffset"`
	MaxTimestampMs int64      `json:"maxTimestampMs"`
	LeaderEpoch    int32      `json:"leaderEpoch"`
	SizeBytes      int64      `json:"sizeBytes"`
	LeaderEpochs   [][2]int64 `json:"leaderEpochs"`
}

type topicManifestJSON struct {
	Name              string            `json:"name"`
	TopicID           string            `json:"topicId"`
	Partitions        int32             `json:"partitions"`
	ReplicationFactor int16             `json:"replicationFactor"`
	Configs           map[string]string `json:"configs"`
	LeaderEpoch       int32             `json:"leaderEpoch"`
	BrokerID          int32             `json:"brokerId"`
	WrittenMs         int64             `json:"writtenMs"`
}

// Encode returns the manifest object's bytes.
func (m *PartitionManifest) Encode() []byte {
	body := partitionManifestJSON{TopicID: hex.EncodeToString(m.TopicID[:]), Partition: m.Partition,
		LeaderEpoch: m.LeaderEpoch, BrokerID: m.BrokerID, LogStartOffset: m.LogStartOffset, WrittenMs: m.WrittenMs,
		Segments: make([]manifestSegmentJSON, len(m.Segments))}
	for i, s := range m.Segments {
		js := manifestSegmentJSON{SegmentID: hex.EncodeToString(s.SegmentID[:]), BaseOffset: s.BaseOffset, EndOffset: s.EndOffset,
			MaxTimestampMs: s.MaxTimestampMs, LeaderEpoch: s.LeaderEpoch, SizeBytes: s.SizeBytes,
			LeaderEpochs: make([][2]int64, len(s.LeaderEpochs))}
		for j, e := range s.LeaderEpochs {
			js.LeaderEpochs[j] = [2]int64{int64(e.Epoch), e.StartOffset}
		}
		body.Segments[i] = js
	}
	return encodeManifest(partitionManifestMagic, body)
}

// Encode returns the manifest object's bytes.
func (m *TopicManifest) Encode() []byte {
	configs := m.Configs
	if configs == nil {
		configs = map[string]string{}
	}
	return encodeManifest(topicManifestMagic, topicManifestJSON{Name: m.Name, TopicID: hex.EncodeToString(m.TopicID[:]),
		Partitions: m.Partitions, ReplicationFactor: m.ReplicationFactor, Configs: configs,
		LeaderEpoch: m.LeaderEpoch, BrokerID: m.BrokerID, WrittenMs: m.WrittenMs})
}

func encodeManifest(magic string, body any) []byte {
	raw, err := json.Marshal(body)
	if err != nil {
		// The bodies are plain structs of strings and integers.
		panic(fmt.Sprintf("tier: encode manifest: %v", err))
	}
	out := make([]byte, 0, manifestEnvelopeBytes+len(raw))
	out = append(out, magic...)
	out = binary.BigEndian.AppendUint16(out, manifestVersion)
	out = binary.BigEndian.AppendUint32(out, uint32(len(raw)))
	out = append(out, raw...)
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

// decodeEnvelope checks a manifest's magic, version, length and checksum
// and returns its JSON body.
func decodeEnvelope(b []byte, magic string) ([]byte, error) {
	if len(b) < manifestEnvelopeBytes {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorruptManifest, len(b))
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorruptManifest)
	}
	if string(body[:4]) != magic {
		return nil, fmt.Errorf("%w: bad magic", ErrCorruptManifest)
	}
	if v := binary.BigEndian.Uint16(body[4:]); v != manifestVersion {
		return nil, fmt.Errorf("%w: unknown version %d", ErrCorruptManifest, v)
	}
	length := binary.BigEndian.Uint32(body[6:])
	if length > manifestMaxBodyBytes || int64(length) != int64(len(body)-10) {
		return nil, fmt.Errorf("%w: body length %d in %d bytes", ErrCorruptManifest, length, len(body)-10)
	}
	return body[10:], nil
}

func decodeID(s string) ([16]byte, error) {
	var id [16]byte
	raw, err := hex.DecodeString(s)
	if err != nil || len(raw) != len(id) {
		return id, fmt.Errorf("%w: id %q", ErrCorruptManifest, s)
	}
	copy(id[:], raw)
	return id, nil
}

// DecodePartitionManifest parses a partition manifest object, checking its
// envelope, bounds and invariants.
func DecodePartitionManifest(b []byte) (PartitionManifest, error) {
	var m PartitionManifest
	raw, err := decodeEnvelope(b, partitionManifestMagic)
	if err != nil {
		return m, err
	}
	var body partitionManifestJSON
	if err := json.Unmarshal(raw, &body); err != nil {
		return m, fmt.Errorf("%w: %v", ErrCorruptManifest, err)
	}
	if m.TopicID, err = decodeID(body.TopicID); err != nil {
		return m, err
	}
	if body.Partition < 0 || body.LogStartOffset < 0 || body.LeaderEpoch < 0 {
		return m, fmt.Errorf("%w: partition %d, log start %d, leader epoch %d", ErrCorruptManifest, body.Partition, body.LogStartOffset, body.LeaderEpoch)
	}
	if len(body.Segments) > manifestMaxSegments {
		return m, fmt.Errorf("%w: %d segments", ErrCorruptManifest, len(body.Segments))
	}
	m.Partition, m.LeaderEpoch, m.BrokerID = body.Partition, body.LeaderEpoch, body.BrokerID
	m.LogStartOffset, m.WrittenMs = body.LogStartOffset, body.WrittenMs
	m.Segments = make([]ManifestSegment, len(body.Segments))
	for i, js := range body.Segments {
		s := ManifestSegment{BaseOffset: js.BaseOffset, EndOffset: js.EndOffset, MaxTimestampMs: js.MaxTimestampMs,
			LeaderEpoch: js.LeaderEpoch, SizeBytes: js.SizeBytes}
		if s.SegmentID, err = decodeID(js.SegmentID); err != nil {
			return m, err
		}
		if s.BaseOffset < 0 || s.EndOffset < s.BaseOffset || s.SizeBytes < 0 || s.LeaderEpoch < 0 {
			return m, fmt.Errorf("%w: segment %d: offsets [%d, %d], size %d, epoch %d", ErrCorruptManifest, i, s.BaseOffset, s.EndOffset, s.SizeBytes, s.LeaderEpoch)
		}
		if i > 0 && s.BaseOffset <= m.Segments[i-1].EndOffset {
			return m, fmt.Errorf("%w: segment %d overlaps the one before", ErrCorruptManifest, i)
		}
		if len(js.LeaderEpochs) > maxEpochEntries {
			return m, fmt.Errorf("%w: segment %d: %d leader-epoch entries", ErrCorruptManifest, i, len(js.LeaderEpochs))
		}
		for j, pair := range js.LeaderEpochs {
			e := EpochEntry{Epoch: int32(pair[0]), StartOffset: pair[1]}
			if pair[0] < 0 || pair[0] > 1<<31-1 || e.StartOffset < 0 {
				return m, fmt.Errorf("%w: segment %d: leader-epoch entry %d", ErrCorruptManifest, i, j)
			}
			if j > 0 && (e.Epoch <= s.LeaderEpochs[j-1].Epoch || e.StartOffset < s.LeaderEpochs[j-1].StartOffset) {
				return m, fmt.Errorf("%w: segment %d: leader-epoch entries out of order", ErrCorruptManifest, i)
			}
			s.LeaderEpochs = append(s.LeaderEpochs, e)
		}
		m.Segments[i] = s
	}
	return m, nil
}

// DecodeTopicManifest parses a topic manifest object, checking its
// envelope, bounds and invariants.
func DecodeTopicManifest(b []byte) (TopicManifest, error) {
	var m TopicManifest
	raw, err := decodeEnvelope(b, topicManifestMagic)
	if err != nil {
		return m, err
	}
	var body topicManifestJSON
	if err := json.Unmarshal(raw, &body); err != nil {
		return m, fmt.Errorf("%w: %v", ErrCorruptManifest, err)
	}
	if m.TopicID, err = decodeID(body.TopicID); err != nil {
		return m, err
	}
	if body.Name == "" || len(body.Name) > manifestMaxNameBytes {
		return m, fmt.Errorf("%w: topic name of %d bytes", ErrCorruptManifest, len(body.Name))
	}
	if body.Partitions < 1 || body.Partitions > manifestMaxPartitions || body.ReplicationFactor < 1 || body.LeaderEpoch < 0 {
		return m, fmt.Errorf("%w: %d partitions, replication factor %d, leader epoch %d", ErrCorruptManifest, body.Partitions, body.ReplicationFactor, body.LeaderEpoch)
	}
	if len(body.Configs) > manifestMaxConfigs {
		return m, fmt.Errorf("%w: %d configs", ErrCorruptManifest, len(body.Configs))
	}
	for k, v := range body.Configs {
		if k == "" || len(k)+len(v) > manifestMaxConfigBytes {
			return m, fmt.Errorf("%w: config %q", ErrCorruptManifest, k)
		}
	}
	m.Name, m.Partitions, m.ReplicationFactor = body.Name, body.Partitions, body.ReplicationFactor
	m.Configs, m.LeaderEpoch, m.BrokerID, m.WrittenMs = body.Configs, body.LeaderEpoch, body.BrokerID, body.WrittenMs
	if m.Configs == nil {
		m.Configs = map[string]string{}
	}
	return m, nil
}

// manifestOf summarises a view as its partition manifest.
func manifestOf(p Partition, view *RemoteView, leaderEpoch, brokerID int32, logStartOffset int64) PartitionManifest {
	m := PartitionManifest{TopicID: p.TopicID, Partition: p.Partition, LeaderEpoch: leaderEpoch, BrokerID: brokerID,
		LogStartOffset: logStartOffset, Segments: make([]ManifestSegment, len(view.Segments))}
	for i, s := range view.Segments {
		m.Segments[i] = ManifestSegment{SegmentID: s.SegmentID, BaseOffset: s.BaseOffset, EndOffset: s.EndOffset,
			MaxTimestampMs: s.MaxTimestampMs, LeaderEpoch: s.LeaderEpoch, SizeBytes: s.SegmentSizeBytes, LeaderEpochs: s.LeaderEpochs}
	}
	return m
}
