package server

import (
	"strconv"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

// bootstrapFeatureLevels finalize the features at the levels a new cluster
// starts at (metadata.SupportedFeatures' defaults), the FeatureLevelRecords
// of Kafka's bootstrap metadata (kafka-storage format writes
// metadata.version and the other features' levels for the release). They
// pin the levels in the log: a later build that supports higher levels does
// not raise them until UpdateFeatures does. kraft.version is left out: its
// level lives in the quorum's own state, not in a FeatureLevelRecord.
func bootstrapFeatureLevels() []metadata.Record {
	var recs []metadata.Record
	for _, f := range metadata.SupportedFeatures {
		if f.Name == metadata.KRaftVersionFeature || f.DefaultLevel <= 0 {
			continue
		}
		recs = append(recs, &metadata.FeatureLevelRecord{Name: f.Name, FeatureLevel: f.DefaultLevel})
	}
	return recs
}

// bootstrapClusterConfigs are the dynamic configs a new cluster starts
// with, written once with the cluster id by the controller that creates
// the metadata log.
//
// Kafka 4.4 finalizes eligible.leader.replicas.version 1 on a freshly
// formatted cluster, and its controller first writes the config record that
// makes ELR safe (ConfigurationControlManager.maybeGenerateElrSafetyRecords):
// a cluster-level min.insync.replicas, the default broker resource "",
// holding the controller's static value. From then on every topic without
// its own override reports min.insync.replicas with source
// DYNAMIC_DEFAULT_BROKER_CONFIG, and a later change of the static value in
// server.properties no longer applies. Samsa writes the same record, so a
// new cluster describes and behaves the same.
func bootstrapClusterConfigs(cfg *config.Broker) []metadata.Record {
	value := strconv.Itoa(int(cfg.MinInsyncReplicas))
	return []metadata.Record{&metadata.ConfigRecord{
		ResourceType: metadata.ResourceBroker,
		ResourceName: "",
		Name:         "min.insync.replicas",
		Value:        &value,
	}}
}
