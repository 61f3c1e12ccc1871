package api

import "github.com/twmb/franz-go/pkg/kmsg"

// transactionVersionFeature is the feature flag that turns on KIP-890
// transactions v2 in clients.
const transactionVersionFeature = "transaction.version"

// addFeatures advertises the features ApiVersions v3+ carries: the
// supported range and the finalized level of transaction.version. A client
// opts into transactions v2 (Produce v12 without AddPartitionsToTxn,
// TxnOffsetCommit v5 without AddOffsetsToTxn, EndTxn v5 bumping the epoch)
// only when the finalized level is 2.
func (b *Broker) addFeatures(resp *kmsg.ApiVersionsResponse) {
	if b.Txn == nil {
		return
	}
	sf := kmsg.NewApiVersionsResponseSupportedFeature()
	sf.Name, sf.MinVersion, sf.MaxVersion = transactionVersionFeature, 0, 2
	resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	ff := kmsg.NewApiVersionsResponseFinalizedFeature()
	level := int16(b.Txn.TransactionVersion())
	ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = transactionVersionFeature, level, level
	resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
	resp.FinalizedFeaturesEpoch = max(b.Image().Offset, 0)
}
