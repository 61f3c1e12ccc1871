// Package record reads, validates and builds Kafka RecordBatch v2 (magic 2)
// bytes, the format Kafka stores on disk and sends on the wire.
//
// The package is a leaf: it imports nothing internal, does no I/O and keeps
// no state beyond pools of codec encoders, decoders and buffers.
//
// # Batch header (61 bytes, big-endian)
//
//	offset  size  field
//	     0     8  baseOffset            first offset of the batch
//	     8     4  batchLength           bytes after this field (total = 12 + batchLength)
//	    12     4  partitionLeaderEpoch
//	    16     1  magic                 always 2
//	    17     4  crc                   CRC-32C (Castagnoli) of bytes 21..end
//	    21     2  attributes            bits 0-2 codec, 3 timestamp type,
//	                                    4 transactional, 5 control, 6 delete horizon
//	    23     4  lastOffsetDelta
//	    27     8  baseTimestamp
//	    35     8  maxTimestamp
//	    43     8  producerId
//	    51     2  producerEpoch
//	    53     4  baseSequence
//	    57     4  recordCount
//	    61     .  records (compressed as a whole when codec != 0)
//
// baseOffset and partitionLeaderEpoch sit before the CRC'd range, so the
// broker rewrites them on append without recomputing the checksum.
//
// baseTimestamp is the create time of the first record. With timestamp type
// CreateTime (bit 3 clear) a record's timestamp is baseTimestamp plus its
// timestampDelta and maxTimestamp is the largest of them. With LogAppendTime
// (bit 3 set) every record's timestamp is maxTimestamp, which the broker set
// when it appended the batch; baseTimestamp and the deltas keep the create
// times.
//
// # Record
//
// The records section holds recordCount records back to back; when the codec
// is not 0 the whole section is one compressed stream of them. Every integer
// in a record is a zigzag varint (as protobuf's sint32 and sint64): "varint"
// fits an int32 and takes at most 5 bytes, "varlong" an int64 in at most 10.
//
//	field               type     meaning
//	length              varint   bytes of the record after this field
//	attributes          int8     unused, 0
//	timestampDelta      varlong  timestamp - baseTimestamp
//	offsetDelta         varint   offset - baseOffset; record i has delta i
//	keyLength           varint   -1 for a null key
//	key                 keyLength bytes
//	valueLength         varint   -1 for a null value
//	value               valueLength bytes
//	headerCount         varint   >= 0
//	headers             headerCount times:
//	  headerKeyLength   varint   >= 0
//	  headerKey         headerKeyLength bytes of UTF-8
//	  headerValueLength varint   -1 for a null value
//	  headerValue       headerValueLength bytes
//
// For example, the first record of a batch with key "k", value "v" and no
// headers is the 9 bytes
//
//	10 00 00 00 02 6b 02 76 00
//
// length 8 (zigzag 0x10), attributes 0, timestampDelta 0, offsetDelta 0,
// keyLength 1 (0x02), 'k', valueLength 1, 'v', headerCount 0. A null key
// would be keyLength -1, the single byte 0x01.
//
// # Control records
//
// A batch with attribute bit 5 set holds control records, written only by
// the broker: transaction markers (also bit 4, transactional) and KRaft
// records. Its key and value are fixed-width big-endian:
//
//	key    offset size field
//	       0      2    version              0
//	       2      2    type                 0 abort, 1 commit, 2 leader change,
//	                                        3 snapshot header, 4 snapshot footer,
//	                                        5 kraft version, 6 kraft voters
//
//	value of an end-transaction marker (types 0 and 1)
//	       0      2    version              0
//	       2      4    coordinatorEpoch     epoch of the transaction coordinator
//
// The commit marker written by coordinator epoch 5 has key 00 00 00 01 and
// value 00 00 00 00 00 05. A marker batch holds exactly one such record, with
// offsetDelta 0 and baseSequence -1.
//
// # Codecs
//
// Codec 1 is gzip (RFC 1952; concatenated members are read as one stream),
// 3 is the LZ4 frame format (not the raw block format), 4 is a zstd frame
// stream. Codec 2, snappy, arrives either as one raw snappy block or, from
// the Java client, in the xerial framing, which this package reads and writes:
//
//	offset size field
//	0      8    magic          0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00
//	8      4    version        1, big-endian int32
//	12     4    compatible     1, the oldest reader version that can read it
//	16     .    blocks, each:  4-byte big-endian length n, then n bytes of
//	                           one raw snappy block
//
// A raw snappy block starts with the uvarint of its decoded length and then a
// literal tag; it could start 0x82 'S' (a length of 10626) but the next byte
// 'N' is a copy tag, invalid at the start of a block, so the 8-byte magic
// tells the two forms apart. We write blocks of 32 KiB of input, as the Java
// client does, and read a second header where one stream was appended to
// another.
//
// Decompression is always bounded by a caller-given output size, so a small
// compressed batch cannot expand to exhaust memory.
package record
