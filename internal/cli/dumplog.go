package cli

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/record"
)

// dumpLogMaxDecompressedBytes bounds one decompressed batch while dumping.
const dumpLogMaxDecompressedBytes = 64 << 20

// newDumpLogCommand is samsa dump-log: kafka-dump-log for the files a node
// (or Kafka) writes, read offline.
func newDumpLogCommand(opts *globalOptions) *cobra.Command {
	var printData, deepIteration bool
	var files []string
	cmd := &cobra.Command{
		Use:   "dump-log FILE...",
		Short: "Decode segment, index, time index, producer snapshot and transaction index files",
		Long: `Decode the files of a partition directory offline, as kafka-dump-log does:
.log segments batch by batch (and record by record with --print-data),
.index and .timeindex entry by entry, producer-state .snapshot files producer
by producer, and .txnindex aborted transactions. Corrupt or truncated data is reported
where it starts; the files are only read.

The text output is kafka-dump-log's, line for line, and Kafka's flags work:
--files a,b (or the files as arguments), --print-data-log (or --print-data)
for keys and payloads, --deep-iteration for record lines without them.`,
		Example: `  samsa dump-log samsa-data/orders-0/00000000000000000000.log --print-data
  samsa dump-log samsa-data/orders-0/00000000000000000000.index
  samsa dump-log --files samsa-data/orders-0/00000000000000000000.log --deep-iteration
  samsa dump-log -o json samsa-data/orders-0/00000000000000000000.log`,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			args = append(append([]string(nil), files...), args...)
			if len(args) == 0 {
				return fmt.Errorf("no files to dump: name them as arguments or with --files")
			}
			deep := printData || deepIteration
			for _, path := range args {
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				base, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), 10, 64)
				if err != nil {
					return fmt.Errorf("%s: the file name is not a 20-digit base offset", path)
				}
				var dump any
				switch filepath.Ext(path) {
				case ".log":
					dump = dumpSegment(data, deep, printData)
				case ".index":
					dump = dumpOffsetIndex(data, base)
				case ".timeindex":
					dump = dumpTimeIndex(data, base)
				case ".snapshot":
					dump, err = partition.DecodeSnapshotFile(data)
				case ".txnindex":
					dump, err = log.DecodeAbortedTxns(data)
				default:
					return fmt.Errorf("%s: unknown file type (want .log, .index, .timeindex, .snapshot or .txnindex)", path)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				if opts.jsonOutput() {
					if err := writeJSON(out, map[string]any{"file": path, "contents": dump}); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintf(out, "Dumping %s\n", path)
				if _, ok := dump.(dumpedSegment); ok {
					fmt.Fprintf(out, "Log starting offset: %d\n", base)
				}
				if filepath.Ext(path) == ".index" && len(data) < 8 {
					fmt.Fprintf(out, "%s is empty.\n", path)
					continue
				}
				printDump(out, dump)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&printData, "print-data-log", false, "print each record with its key and payload")
	cmd.Flags().BoolVar(&printData, "print-data", false, "the same as --print-data-log")
	cmd.Flags().BoolVar(&deepIteration, "deep-iteration", false, "print each record (without key and payload unless --print-data-log)")
	cmd.Flags().StringSliceVar(&files, "files", nil, "comma-separated files to dump, as kafka-dump-log takes them")
	return cmd
}

type dumpedBatch struct {
	BaseOffset           int64          `json:"baseOffset"`
	LastOffset           int64          `json:"lastOffset"`
	Count                int32          `json:"count"`
	Position             int64          `json:"position"`
	Size                 int            `json:"size"`
	PartitionLeaderEpoch int32          `json:"partitionLeaderEpoch"`
	ProducerID           int64          `json:"producerId"`
	ProducerEpoch        int16          `json:"producerEpoch"`
	BaseSequence         int32          `json:"baseSequence"`
	LastSequence         int32          `json:"lastSequence"`
	Magic                int8           `json:"magic"`
	DeleteHorizonMs      *int64         `json:"deleteHorizonMs,omitempty"`
	Transactional        bool           `json:"isTransactional"`
	Control              bool           `json:"isControl"`
	Compression          string         `json:"compressCodec"`
	TimestampType        string         `json:"timestampType"`
	MaxTimestamp         int64          `json:"maxTimestamp"`
	CRC                  uint32         `json:"crc"`
	Records              []dumpedRecord `json:"records,omitempty"`
	Error                string         `json:"error,omitempty"`
}

type dumpedRecord struct {
	Offset     int64             `json:"offset"`
	Timestamp  int64             `json:"timestamp"`
	KeySize    int               `json:"keySize"`
	ValueSize  int               `json:"valueSize"`
	Sequence   int32             `json:"sequence"`
	HeaderKeys []string          `json:"headerKeys"`
	Key        *string           `json:"key,omitempty"`
	Value      *string           `json:"payload,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	// Marker is a control record's meaning: "endTxnMarker: COMMIT
	// coordinatorEpoch: 0", as Kafka prints it.
	Marker string `json:"marker,omitempty"`
}

type dumpedSegment struct {
	Batches []dumpedBatch `json:"batches"`
	// Error reports where the segment stops being valid, if it does.
	Error string `json:"error,omitempty"`
}

var codecNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// dumpSegment decodes a segment batch by batch; deep adds every record's
// metadata, printData its key, payload and headers too.
func dumpSegment(data []byte, deep, printData bool) dumpedSegment {
	var seg dumpedSegment
	pos := int64(0)
	for len(data) > 0 {
		h, err := record.Verify(data)
		if err != nil {
			seg.Error = fmt.Sprintf("at position %d: %v", pos, err)
			return seg
		}
		b := dumpedBatch{
			BaseOffset: h.BaseOffset, LastOffset: h.LastOffset(), Count: h.RecordCount, Position: pos, Size: h.Size(),
			PartitionLeaderEpoch: h.PartitionLeaderEpoch, ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch,
			BaseSequence: h.BaseSequence, LastSequence: sequenceAt(h.BaseSequence, h.LastOffsetDelta), Magic: h.Magic,
			Transactional: h.IsTransactional(), Control: h.IsControl(),
			TimestampType: "CreateTime", MaxTimestamp: h.MaxTimestamp, CRC: h.CRC, Compression: "unknown",
		}
		if c := int(h.Compression()); c < len(codecNames) {
			b.Compression = codecNames[c]
		}
		if h.IsLogAppendTime() {
			b.TimestampType = "LogAppendTime"
		}
		if horizon, ok := h.DeleteHorizonMs(); ok {
			b.DeleteHorizonMs = &horizon
		}
		if deep {
			err := record.Records(data[:h.Size()], dumpLogMaxDecompressedBytes, func(r record.Record) error {
				dr := dumpedRecord{Offset: h.BaseOffset + int64(r.OffsetDelta), Timestamp: h.RecordTimestamp(r.TimestampDelta),
					KeySize: sizeOrNull(r.Key), ValueSize: sizeOrNull(r.Value), Sequence: sequenceAt(h.BaseSequence, r.OffsetDelta),
					HeaderKeys: []string{}}
				for _, hd := range r.Headers {
					dr.HeaderKeys = append(dr.HeaderKeys, hd.Key)
				}
				switch {
				case h.IsControl():
					dr.Marker = controlMarker(r.Key, r.Value)
				case printData:
					dr.Key, dr.Value = bytesOrNil(r.Key), bytesOrNil(r.Value)
					for _, hd := range r.Headers {
						if dr.Headers == nil {
							dr.Headers = map[string]string{}
						}
						dr.Headers[hd.Key] = string(hd.Value)
					}
				}
				b.Records = append(b.Records, dr)
				return nil
			})
			if err != nil {
				b.Error = err.Error()
			}
		}
		seg.Batches = append(seg.Batches, b)
		pos += int64(h.Size())
		data = data[h.Size():]
	}
	return seg
}

// sequenceAt is the sequence number of the record offsetDelta after a batch's
// base sequence, wrapping past the largest int32 to 0 as Kafka's producers
// do; -1 (no sequence) stays -1.
func sequenceAt(baseSequence, offsetDelta int32) int32 {
	if baseSequence < 0 {
		return -1
	}
	if baseSequence > math.MaxInt32-offsetDelta {
		return offsetDelta - (math.MaxInt32 - baseSequence) - 1
	}
	return baseSequence + offsetDelta
}

func sizeOrNull(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// controlMarker reads a control record: its key is a version and a type
// (0 ABORT, 1 COMMIT, others not transaction markers), an end-transaction
// marker's value a version and the coordinator epoch.
func controlMarker(key, value []byte) string {
	if len(key) < 4 {
		return "controlType: UNKNOWN(-1)"
	}
	kind := int16(binary.BigEndian.Uint16(key[2:]))
	var name string
	switch kind {
	case 0:
		name = "ABORT"
	case 1:
		name = "COMMIT"
	default:
		return fmt.Sprintf("controlType: UNKNOWN(%d)", kind)
	}
	if len(value) < 6 {
		return "endTxnMarker: " + name + " coordinatorEpoch: -1"
	}
	return fmt.Sprintf("endTxnMarker: %s coordinatorEpoch: %d", name, int32(binary.BigEndian.Uint32(value[2:])))
}

func bytesOrNil(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

type indexEntry struct {
	Offset    int64 `json:"offset"`
	Position  int64 `json:"position,omitempty"`
	Timestamp int64 `json:"timestamp,omitempty"`
}

// dumpOffsetIndex reads 8-byte entries: relative offset, file position.
// Preallocated zero entries after the first (an index of an active segment)
// end the listing.
func dumpOffsetIndex(data []byte, base int64) []indexEntry {
	var out []indexEntry
	for i := 0; i+8 <= len(data); i += 8 {
		rel := binary.BigEndian.Uint32(data[i:])
		position := binary.BigEndian.Uint32(data[i+4:])
		if i > 0 && rel == 0 && position == 0 {
			break
		}
		out = append(out, indexEntry{Offset: base + int64(rel), Position: int64(position)})
	}
	return out
}

// dumpTimeIndex reads 12-byte entries: timestamp, relative offset.
func dumpTimeIndex(data []byte, base int64) []indexEntry {
	var out []indexEntry
	for i := 0; i+12 <= len(data); i += 12 {
		ts := int64(binary.BigEndian.Uint64(data[i:]))
		rel := binary.BigEndian.Uint32(data[i+8:])
		if ts == 0 && rel == 0 {
			break
		}
		out = append(out, indexEntry{Offset: base + int64(rel), Timestamp: ts})
	}
	return out
}

// printDump prints dump as kafka-dump-log (Kafka's DumpLogSegments) does,
// field for field.
func printDump(w io.Writer, dump any) {
	switch d := dump.(type) {
	case dumpedSegment:
		for _, b := range d.Batches {
			fmt.Fprintf(w, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %v isControl: %v deleteHorizonMs: %s position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: true\n",
				b.BaseOffset, b.LastOffset, b.Count, b.BaseSequence, b.LastSequence, b.ProducerID, b.ProducerEpoch, b.PartitionLeaderEpoch,
				b.Transactional, b.Control, optionalLong(b.DeleteHorizonMs), b.Position, b.TimestampType, b.MaxTimestamp, b.Size, b.Magic, b.Compression, b.CRC)
			for _, r := range b.Records {
				fmt.Fprintf(w, "| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]",
					r.Offset, b.TimestampType, r.Timestamp, r.KeySize, r.ValueSize, r.Sequence, strings.Join(r.HeaderKeys, ","))
				if r.Marker != "" {
					fmt.Fprintf(w, " %s", r.Marker)
				}
				if r.Key != nil {
					fmt.Fprintf(w, " key: %s", javaString([]byte(*r.Key)))
				}
				if r.Value != nil {
					fmt.Fprintf(w, " payload: %s", javaString([]byte(*r.Value)))
				}
				fmt.Fprintln(w)
			}
			if b.Error != "" {
				fmt.Fprintf(w, "| error: %s\n", b.Error)
			}
		}
		if d.Error != "" {
			fmt.Fprintf(w, "Found invalid data %s\n", d.Error)
		}
	case []partition.SnapshotEntry:
		for _, e := range d {
			var txnFirst *int64
			if e.CurrentTxnFirstOffset >= 0 {
				txnFirst = &e.CurrentTxnFirstOffset
			}
			fmt.Fprintf(w, "producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %s lastTimestamp: %d",
				e.ProducerID, e.ProducerEpoch, e.CoordinatorEpoch, optionalLong(txnFirst), e.Timestamp)
			// A producer known only by its epoch (a transaction marker
			// after its last batch was cleaned) has no last batch.
			if e.LastOffset >= 0 {
				fmt.Fprintf(w, " firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d",
					firstSequence(e.LastSequence, e.OffsetDelta), e.LastSequence, e.LastOffset, e.OffsetDelta, e.Timestamp)
			}
			fmt.Fprintln(w)
		}
	case []log.AbortedTxn:
		for _, e := range d {
			fmt.Fprintf(w, "version: 0 producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n", e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset)
		}
	case []indexEntry:
		for _, e := range d {
			if e.Timestamp != 0 {
				fmt.Fprintf(w, "timestamp: %d offset: %d\n", e.Timestamp, e.Offset)
			} else {
				fmt.Fprintf(w, "offset: %d position: %d\n", e.Offset, e.Position)
			}
		}
	}
}

// optionalLong prints an optional number as Java's OptionalLong.toString.
func optionalLong(v *int64) string {
	if v == nil {
		return "OptionalLong.empty"
	}
	return fmt.Sprintf("OptionalLong[%d]", *v)
}

// firstSequence is the first sequence of a producer's last batch, from its
// last sequence and offset delta, wrapping below 0 as sequences wrap.
func firstSequence(lastSequence, offsetDelta int32) int32 {
	if lastSequence < 0 {
		return -1
	}
	if lastSequence-offsetDelta < 0 {
		return math.MaxInt32 - (offsetDelta - lastSequence) + 1
	}
	return lastSequence - offsetDelta
}

func orNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
