package metadata

import (
	"encoding/binary"
	"fmt"
)

// # Snapshot encoding
//
// A metadata snapshot is the image at one offset, as the records that
// rebuild it (Image.Records), each length-prefixed:
//
//	uvarint  record count
//	repeated:
//	  uvarint  length of the encoded record
//	  bytes    the record, encoded as in the metadata log (Encode)

// maxSnapshotRecords bounds the record count a snapshot may claim, so a
// corrupt count cannot make the decoder allocate without limit.
const maxSnapshotRecords = 1 << 26

// EncodeSnapshot encodes img for a metadata snapshot.
func EncodeSnapshot(img *Image) ([]byte, error) {
	recs := img.Records()
	out := binary.AppendUvarint(nil, uint64(len(recs)))
	var buf []byte
	for _, r := range recs {
		var err error
		buf, err = Encode(buf[:0], r)
		if err != nil {
			return nil, err
		}
		out = binary.AppendUvarint(out, uint64(len(buf)))
		out = append(out, buf...)
	}
	return out, nil
}

// DecodeSnapshot rebuilds the image a snapshot taken at offset holds.
func DecodeSnapshot(b []byte, offset int64) (*Image, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 || count > maxSnapshotRecords {
		return nil, fmt.Errorf("%w: snapshot record count", ErrCorrupt)
	}
	b = b[n:]
	recs := make([]Record, 0, min(count, uint64(len(b))))
	for i := uint64(0); i < count; i++ {
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return nil, fmt.Errorf("%w: snapshot record %d length", ErrCorrupt, i)
		}
		r, err := Decode(b[n : n+int(size)])
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
		b = b[n+int(size):]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the snapshot's records", ErrCorrupt, len(b))
	}
	return EmptyImage().Apply(offset, recs), nil
}
