package txn

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Key and value versions of the __transaction_state records.
const (
	// keyVersion is the int16 that starts every key: record type 0,
	// TransactionLogKey.
	keyVersion int16 = 0
	// valueVersionV0 is written under transaction versions 0 and 1,
	// valueVersionV1 (flexible, with the KIP-890 tagged fields) under 2.
	valueVersionV0 int16 = 0
	valueVersionV1 int16 = 1
)

var (
	// ErrCorrupt marks a __transaction_state record that cannot be decoded.
	ErrCorrupt = errors.New("txn: corrupt __transaction_state record")
	// ErrUnknownVersion marks a key or value version this package does not
	// know; the loader skips such records, as Kafka's does.
	ErrUnknownVersion = errors.New("txn: unknown __transaction_state record version")
)

// EncodeKey returns the TransactionLogKey of a transactional id.
func EncodeKey(transactionalID string) []byte {
	k := kmsg.TxnMetadataKey{Version: keyVersion, TransactionalID: transactionalID}
	return k.AppendTo(nil)
}

// EncodeValue returns the TransactionLogValue of a transit, at the value
// version of the cluster's transaction version.
func EncodeValue(t Transit, clusterTV int8) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = valueVersionV0
	if supportsEpochBump(clusterTV) {
		v.Version = valueVersionV1
		v.PreviousProducerID, v.NextProducerID = t.PrevProducerID, t.NextProducerID
		v.ClientTransactionVersion = int16(t.ClientTransactionVersion)
	}
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = t.ProducerID, t.ProducerEpoch, t.TimeoutMs
	v.State = kmsg.TransactionState(t.State)
	v.LastUpdateTimestamp, v.StartTimestamp = t.UpdateTimestampMs, t.StartTimestampMs
	if t.State != Empty {
		v.Topics = []kmsg.TxnMetadataValueTopic{}
		for _, p := range t.Partitions.sorted() {
			if n := len(v.Topics); n == 0 || v.Topics[n-1].Topic != p.Topic {
				v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: p.Topic})
			}
			last := &v.Topics[len(v.Topics)-1]
			last.Partitions = append(last.Partitions, p.Partition)
		}
	}
	return v.AppendTo(nil)
}

// Record is a decoded __transaction_state record; Tombstone is set (and
// Transit empty) for a null value.
type Record struct {
	TransactionalID string
	Tombstone       bool
	Transit         Transit
}

// DecodeRecord decodes one __transaction_state record. Errors wrap
// ErrCorrupt or ErrUnknownVersion.
func DecodeRecord(key, value []byte) (Record, error) {
	if len(key) < 2 {
		return Record{}, fmt.Errorf("%w: key of %d bytes", ErrCorrupt, len(key))
	}
	if v := int16(binary.BigEndian.Uint16(key)); v != keyVersion {
		return Record{}, fmt.Errorf("%w: key version %d", ErrUnknownVersion, v)
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return Record{}, fmt.Errorf("%w: key: %v", ErrCorrupt, err)
	}
	r := Record{TransactionalID: k.TransactionalID}
	if value == nil {
		r.Tombstone = true
		return r, nil
	}
	if len(value) < 2 {
		return Record{}, fmt.Errorf("%w: value of %d bytes", ErrCorrupt, len(value))
	}
	if v := int16(binary.BigEndian.Uint16(value)); v != valueVersionV0 && v != valueVersionV1 {
		return Record{}, fmt.Errorf("%w: value version %d", ErrUnknownVersion, v)
	}
	v := kmsg.NewTxnMetadataValue()
	if err := v.ReadFrom(value); err != nil {
		return Record{}, fmt.Errorf("%w: value: %v", ErrCorrupt, err)
	}
	state := State(v.State)
	if !state.valid() {
		return Record{}, fmt.Errorf("%w: transaction state %d", ErrCorrupt, v.State)
	}
	if v.ClientTransactionVersion < 0 || v.ClientTransactionVersion > int16(TV2) {
		return Record{}, fmt.Errorf("%w: client transaction version %d", ErrCorrupt, v.ClientTransactionVersion)
	}
	t := Transit{
		ProducerID: v.ProducerID, PrevProducerID: v.PreviousProducerID, NextProducerID: v.NextProducerID,
		ProducerEpoch: v.ProducerEpoch, LastProducerEpoch: NoProducerEpoch, TimeoutMs: v.TimeoutMillis,
		State: state, Partitions: partitionSet{}, StartTimestampMs: v.StartTimestamp,
		UpdateTimestampMs: v.LastUpdateTimestamp, ClientTransactionVersion: int8(v.ClientTransactionVersion),
	}
	if v.Version == valueVersionV0 {
		t.PrevProducerID, t.NextProducerID = NoProducerID, NoProducerID
	}
	if state != Empty {
		for _, topic := range v.Topics {
			for _, p := range topic.Partitions {
				t.Partitions[TopicPartition{Topic: topic.Topic, Partition: p}] = struct{}{}
			}
		}
	}
	r.Transit = t
	return r, nil
}
