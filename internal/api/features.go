package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// addFeatures advertises the features ApiVersions v3+ carries
// (metadata.SupportedFeatures): each one's supported range, and the levels
// finalized in the metadata image (UpdateFeatures, 57_update_features.go)
// with the image's offset as their epoch. A client opts into transactions
// v2 (Produce v12 without AddPartitionsToTxn, TxnOffsetCommit v5 without
// AddOffsetsToTxn, EndTxn v5 bumping the epoch) only when the finalized
// transaction.version is 2. Below v4, supported features whose minimum is 0
// are left out, as Kafka does: older clients reject such ranges
// (KAFKA-17011, KAFKA-17492). A node without a transaction coordinator
// lists no transaction.version.
func (b *Broker) addFeatures(resp *kmsg.ApiVersionsResponse, version int16) {
	img := b.Image()
	for _, f := range metadata.SupportedFeatures {
		if f.Name == metadata.TransactionVersionFeature && b.Txn == nil {
			continue
		}
		if version < 4 && f.MinLevel == 0 {
			continue
		}
		sf := kmsg.NewApiVersionsResponseSupportedFeature()
		sf.Name, sf.MinVersion, sf.MaxVersion = f.Name, f.MinLevel, f.MaxLevel
		resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	}
	for _, f := range metadata.SupportedFeatures {
		level := img.FeatureLevel(f.Name)
		if level <= 0 || f.Name == metadata.TransactionVersionFeature && b.Txn == nil {
			continue
		}
		ff := kmsg.NewApiVersionsResponseFinalizedFeature()
		ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = f.Name, level, level
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
	}
	resp.FinalizedFeaturesEpoch = max(img.Offset, 0)
}
