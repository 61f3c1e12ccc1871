package cli

import (
	"encoding/binary"
	"fmt"
	"io"
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
	var printData bool
	cmd := &cobra.Command{
		Use:   "dump-log FILE...",
		Short: "Decode segment, index, time index, producer snapshot and transaction index files",
		Long: `Decode the files of a partition directory offline, as kafka-dump-log does:
.log segments batch by batch (and record by record with --print-data),
.index and .timeindex entry by entry, producer-state .snapshot files producer
by producer, and .txnindex aborted transactions. Corrupt or truncated data is reported
where it starts; the files are only read.`,
		Example: `  samsa dump-log samsa-data/orders-0/00000000000000000000.log --print-data
  samsa dump-log samsa-data/orders-0/00000000000000000000.index
  samsa dump-log -o json samsa-data/orders-0/00000000000000000000.log`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
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
					dump = dumpSegment(data, printData)
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
				printDump(out, dump)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&printData, "print-data", false, "print each record's key, value and headers")
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
	Offset    int64             `json:"offset"`
	Timestamp int64             `json:"timestamp"`
	Key       *string           `json:"key"`
	Value     *string           `json:"payload"`
	Headers   map[string]string `json:"headers,omitempty"`
}

type dumpedSegment struct {
	Batches []dumpedBatch `json:"batches"`
	// Error reports where the segment stops being valid, if it does.
	Error string `json:"error,omitempty"`
}

var codecNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

func dumpSegment(data []byte, printData bool) dumpedSegment {
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
			BaseSequence: h.BaseSequence, Transactional: h.IsTransactional(), Control: h.IsControl(),
			TimestampType: "CreateTime", MaxTimestamp: h.MaxTimestamp, CRC: h.CRC, Compression: "unknown",
		}
		if c := int(h.Compression()); c < len(codecNames) {
			b.Compression = codecNames[c]
		}
		if h.IsLogAppendTime() {
			b.TimestampType = "LogAppendTime"
		}
		if printData {
			err := record.Records(data[:h.Size()], dumpLogMaxDecompressedBytes, func(r record.Record) error {
				dr := dumpedRecord{Offset: h.BaseOffset + int64(r.OffsetDelta), Timestamp: h.RecordTimestamp(r.TimestampDelta), Key: bytesOrNil(r.Key), Value: bytesOrNil(r.Value)}
				for _, hd := range r.Headers {
					if dr.Headers == nil {
						dr.Headers = map[string]string{}
					}
					dr.Headers[hd.Key] = string(hd.Value)
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

func printDump(w io.Writer, dump any) {
	switch d := dump.(type) {
	case dumpedSegment:
		for _, b := range d.Batches {
			fmt.Fprintf(w, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %v isControl: %v position: %d %s: %d size: %d compresscodec: %s crc: %d\n",
				b.BaseOffset, b.LastOffset, b.Count, b.BaseSequence, b.ProducerID, b.ProducerEpoch, b.PartitionLeaderEpoch,
				b.Transactional, b.Control, b.Position, b.TimestampType, b.MaxTimestamp, b.Size, b.Compression, b.CRC)
			for _, r := range b.Records {
				fmt.Fprintf(w, "| offset: %d %s: %d key: %s payload: %s", r.Offset, b.TimestampType, r.Timestamp, orNull(r.Key), orNull(r.Value))
				for k, v := range r.Headers {
					fmt.Fprintf(w, " header: %s=%s", k, v)
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
			fmt.Fprintf(w, "producerId: %d producerEpoch: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d coordinatorEpoch: %d currentTxnFirstOffset: %d\n",
				e.ProducerID, e.ProducerEpoch, e.LastSequence, e.LastOffset, e.OffsetDelta, e.Timestamp, e.CoordinatorEpoch, e.CurrentTxnFirstOffset)
		}
	case []log.AbortedTxn:
		for _, e := range d {
			fmt.Fprintf(w, "producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n", e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset)
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

func orNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
