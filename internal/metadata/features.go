package metadata

import (
	"maps"
	"slices"
)

// Feature flags (KIP-584). Each feature runs at one finalized level for the
// whole cluster, chosen with UpdateFeatures and written as a
// FeatureLevelRecord; clients read the levels in ApiVersions and opt into
// behaviour by them (transaction.version 2: KIP-890 transactions v2). A
// cluster whose log holds no record for a feature runs it at the feature's
// default, the level a Kafka 4.0 cluster is formatted with.

// Feature names.
const (
	MetadataVersionFeature    = "metadata.version"
	KRaftVersionFeature       = "kraft.version"
	GroupVersionFeature       = "group.version"
	TransactionVersionFeature = "transaction.version"
	StreamsVersionFeature     = "streams.version"
	ShareVersionFeature       = "share.version"
)

// metadata.version levels: MetadataVersionMin is 3.3-IV3, the oldest Kafka
// 4.0 runs; MetadataVersionLatest is 4.0-IV3, Kafka 4.0's.
const (
	MetadataVersionMin    int16 = 7
	MetadataVersionLatest int16 = 25
)

// Feature is a feature this build supports: the levels it can run at and
// the level a cluster starts at.
type Feature struct {
	Name         string
	MinLevel     int16
	MaxLevel     int16
	DefaultLevel int16
}

// SupportedFeatures lists the features, sorted by name. kraft.version 1 is
// KIP-853's dynamic controller quorum; a cluster starts at 0, its voters
// those of controller.quorum.voters, and is upgraded with UpdateFeatures.
var SupportedFeatures = []Feature{
	{Name: GroupVersionFeature, MinLevel: 0, MaxLevel: 1, DefaultLevel: 1},
	{Name: KRaftVersionFeature, MinLevel: 0, MaxLevel: 1, DefaultLevel: 0},
	{Name: MetadataVersionFeature, MinLevel: MetadataVersionMin, MaxLevel: MetadataVersionLatest, DefaultLevel: MetadataVersionLatest},
	// share.version 1 serves share groups (KIP-932); Kafka 4.4's level 2
	// adds share-group dead-letter queues (KIP-1191), not built here.
	{Name: ShareVersionFeature, MinLevel: 0, MaxLevel: 1, DefaultLevel: 1},
	{Name: StreamsVersionFeature, MinLevel: 0, MaxLevel: 1, DefaultLevel: 1},
	{Name: TransactionVersionFeature, MinLevel: 0, MaxLevel: 2, DefaultLevel: 2},
}

// LookupFeature returns the supported feature called name.
func LookupFeature(name string) (Feature, bool) {
	for _, f := range SupportedFeatures {
		if f.Name == name {
			return f, true
		}
	}
	return Feature{}, false
}

// FeatureLevelRecord finalizes feature Name at FeatureLevel (0: disabled).
type FeatureLevelRecord struct {
	Name         string `json:"name"`
	FeatureLevel int16  `json:"featureLevel"`
}

// FeatureLevel is the finalized level of feature name: the last
// FeatureLevelRecord's, else the feature's default (0 for one this build
// does not know).
func (img *Image) FeatureLevel(name string) int16 {
	if level, ok := img.features[name]; ok {
		return level
	}
	f, _ := LookupFeature(name)
	return f.DefaultLevel
}

// FinalizedFeatures returns every supported feature finalized above level
// 0, by name, as ApiVersions lists them.
func (img *Image) FinalizedFeatures() map[string]int16 {
	out := map[string]int16{}
	for _, f := range SupportedFeatures {
		if level := img.FeatureLevel(f.Name); level > 0 {
			out[f.Name] = level
		}
	}
	return out
}

func (img *Image) applyFeatureLevel(r *FeatureLevelRecord) {
	if img.features == nil {
		img.features = map[string]int16{}
	}
	img.features[r.Name] = r.FeatureLevel
}

// featureRecords rebuild the finalized levels written so far, by name.
func (img *Image) featureRecords() []Record {
	var recs []Record
	for _, name := range slices.Sorted(maps.Keys(img.features)) {
		recs = append(recs, &FeatureLevelRecord{Name: name, FeatureLevel: img.features[name]})
	}
	return recs
}
