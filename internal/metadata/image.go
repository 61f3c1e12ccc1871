package metadata

import (
	"maps"
	"slices"
	"sort"

	"github.com/samsa-streaming/samsa/internal/quota"
)

// Image is an immutable view of the cluster metadata after applying every
// record up to Offset. Apply returns a new Image; readers hold on to the one
// they loaded without locks.
type Image struct {
	// Offset is the metadata log offset of the last record applied, -1 for none.
	Offset    int64
	ClusterID string

	topics     map[string]*Topic
	topicsByID map[UUID]*Topic
	brokers    map[int32]*Broker
	// configs maps a resource to its dynamic config overrides.
	configs map[ConfigResource]map[string]string
	// NextProducerID is the first producer id not yet allocated to any broker.
	NextProducerID int64
	// features holds the finalized feature levels written by
	// FeatureLevelRecords (features.go); absent ones are at their default.
	features map[string]int16
	// acls are the ACLs (acls.go); aclsOwned is set once this image has
	// its own copy to change.
	acls      *ACLSet
	aclsOwned bool
	// scram holds the SCRAM credentials (scram.go); shared between images
	// until a SCRAM record changes them.
	scram map[ScramKey]ScramCredential
	// tokens holds the delegation tokens by id (tokens.go); shared between
	// images until a token record changes them.
	tokens map[string]DelegationToken
	// quotas are the client quotas (quotas.go); nil for none, shared
	// between images until a ClientQuotaRecord changes them.
	quotas *quota.Table
}

// Topic is a topic and its partitions; Partitions[i].Partition == i.
type Topic struct {
	Name       string
	ID         UUID
	Partitions []*Partition
}

// Partition is the replica state of one partition.
type Partition struct {
	Partition      int32
	Replicas       []int32
	ISR            []int32
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	// AddingReplicas and RemovingReplicas describe a reassignment in
	// progress (KIP-455); both are empty when none is.
	// Invariant: AddingReplicas and RemovingReplicas are disjoint subsets
	// of Replicas.
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// Reassigning reports whether a reassignment of the partition is in
// progress.
func (p *Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// TargetReplicas is the replica set the partition is headed for: Replicas
// without the replicas a reassignment is removing.
func (p *Partition) TargetReplicas() []int32 {
	out := make([]int32, 0, len(p.Replicas))
	for _, r := range p.Replicas {
		if !slices.Contains(p.RemovingReplicas, r) {
			out = append(out, r)
		}
	}
	return out
}

// Broker is a registered broker.
type Broker struct {
	ID        int32
	Endpoints []Endpoint
	Rack      *string
	Fenced    bool
}

// ConfigResource names a config resource.
type ConfigResource struct {
	Type int8
	Name string
}

// EmptyImage is the image before any record.
func EmptyImage() *Image {
	return &Image{
		Offset:     -1,
		topics:     map[string]*Topic{},
		topicsByID: map[UUID]*Topic{},
		brokers:    map[int32]*Broker{},
		configs:    map[ConfigResource]map[string]string{},
	}
}

// Topic returns the topic named name, or nil.
func (img *Image) Topic(name string) *Topic { return img.topics[name] }

// TopicByID returns the topic with id, or nil.
func (img *Image) TopicByID(id UUID) *Topic { return img.topicsByID[id] }

// TopicNames returns all topic names, sorted.
func (img *Image) TopicNames() []string {
	names := make([]string, 0, len(img.topics))
	for name := range img.topics {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// NumTopics is the number of topics.
func (img *Image) NumTopics() int { return len(img.topics) }

// Broker returns the broker with id, or nil.
func (img *Image) Broker(id int32) *Broker { return img.brokers[id] }

// Brokers returns the registered brokers sorted by id.
func (img *Image) Brokers() []*Broker {
	out := make([]*Broker, 0, len(img.brokers))
	for _, b := range img.brokers {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Configs returns the dynamic config overrides of a resource (never nil; do
// not modify).
func (img *Image) Configs(resourceType int8, name string) map[string]string {
	if m := img.configs[ConfigResource{resourceType, name}]; m != nil {
		return m
	}
	return map[string]string{}
}

// Apply returns the image after applying recs, which were committed
// together at offset (one metadata log entry). img is unchanged.
func (img *Image) Apply(offset int64, recs []Record) *Image {
	next := img.clone()
	for _, r := range recs {
		next.apply(r)
	}
	next.Offset = offset
	return next
}

// Records returns records that rebuild the image from an empty one: the
// content of a metadata snapshot.
func (img *Image) Records() []Record {
	var recs []Record
	if img.ClusterID != "" {
		recs = append(recs, &ClusterRecord{ClusterID: img.ClusterID})
	}
	for _, b := range img.Brokers() {
		recs = append(recs, &RegisterBrokerRecord{BrokerID: b.ID, Endpoints: b.Endpoints, Rack: b.Rack, Fenced: b.Fenced})
	}
	for _, name := range img.TopicNames() {
		t := img.topics[name]
		recs = append(recs, &TopicRecord{Name: t.Name, TopicID: t.ID})
		for _, p := range t.Partitions {
			if p == nil {
				continue
			}
			recs = append(recs, &PartitionRecord{TopicID: t.ID, Partition: p.Partition, Replicas: p.Replicas, ISR: p.ISR,
				Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch,
				AddingReplicas: p.AddingReplicas, RemovingReplicas: p.RemovingReplicas})
		}
	}
	resources := make([]ConfigResource, 0, len(img.configs))
	for r := range img.configs {
		resources = append(resources, r)
	}
	sort.Slice(resources, func(i, j int) bool {
		if resources[i].Type != resources[j].Type {
			return resources[i].Type < resources[j].Type
		}
		return resources[i].Name < resources[j].Name
	})
	for _, r := range resources {
		names := make([]string, 0, len(img.configs[r]))
		for name := range img.configs[r] {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			v := img.configs[r][name]
			recs = append(recs, &ConfigRecord{ResourceType: r.Type, ResourceName: r.Name, Name: name, Value: &v})
		}
	}
	if img.NextProducerID > 0 {
		recs = append(recs, &ProducerIDsRecord{BrokerID: -1, NextProducerID: img.NextProducerID})
	}
	recs = append(recs, img.featureRecords()...)
	recs = append(recs, img.aclRecords()...)
	recs = append(recs, img.scramRecords()...)
	recs = append(recs, img.tokenRecords()...)
	return append(recs, img.quotaRecords()...)
}

func (img *Image) clone() *Image {
	return &Image{
		Offset:         img.Offset,
		ClusterID:      img.ClusterID,
		topics:         maps.Clone(img.topics),
		topicsByID:     maps.Clone(img.topicsByID),
		brokers:        maps.Clone(img.brokers),
		configs:        maps.Clone(img.configs),
		NextProducerID: img.NextProducerID,
		features:       maps.Clone(img.features),
		acls:           img.acls,
		scram:          img.scram,
		tokens:         img.tokens,
		quotas:         img.quotas,
	}
}

// apply mutates the (freshly cloned) image. Shared *Topic values are copied
// before they change so older images stay intact.
func (img *Image) apply(r Record) {
	switch r := r.(type) {
	case *ClusterRecord:
		img.ClusterID = r.ClusterID
	case *RegisterBrokerRecord:
		img.brokers[r.BrokerID] = &Broker{ID: r.BrokerID, Endpoints: r.Endpoints, Rack: r.Rack, Fenced: r.Fenced}
	case *TopicRecord:
		t := &Topic{Name: r.Name, ID: r.TopicID}
		img.topics[r.Name] = t
		img.topicsByID[r.TopicID] = t
	case *PartitionRecord:
		t := img.mutableTopic(r.TopicID)
		if t == nil {
			return
		}
		p := &Partition{
			Partition: r.Partition, Replicas: r.Replicas, ISR: r.ISR,
			Leader: r.Leader, LeaderEpoch: r.LeaderEpoch, PartitionEpoch: r.PartitionEpoch,
			AddingReplicas: r.AddingReplicas, RemovingReplicas: r.RemovingReplicas,
		}
		for int(r.Partition) >= len(t.Partitions) {
			t.Partitions = append(t.Partitions, nil)
		}
		t.Partitions[r.Partition] = p
	case *PartitionChangeRecord:
		t := img.mutableTopic(r.TopicID)
		if t == nil || int(r.Partition) >= len(t.Partitions) || t.Partitions[r.Partition] == nil {
			return
		}
		p := *t.Partitions[r.Partition]
		if r.Leader != nil && *r.Leader != p.Leader {
			p.Leader = *r.Leader
			p.LeaderEpoch++
		}
		if r.ISR != nil {
			p.ISR = r.ISR
		}
		if r.Replicas != nil {
			p.Replicas = r.Replicas
			p.AddingReplicas, p.RemovingReplicas = r.AddingReplicas, r.RemovingReplicas
		}
		p.PartitionEpoch++
		t.Partitions[r.Partition] = &p
	case *ConfigRecord:
		key := ConfigResource{r.ResourceType, r.ResourceName}
		m := maps.Clone(img.configs[key])
		if m == nil {
			m = map[string]string{}
		}
		if r.Value == nil {
			delete(m, r.Name)
		} else {
			m[r.Name] = *r.Value
		}
		if len(m) == 0 {
			delete(img.configs, key)
		} else {
			img.configs[key] = m
		}
	case *RemoveTopicRecord:
		t := img.topicsByID[r.TopicID]
		if t == nil {
			return
		}
		delete(img.topicsByID, r.TopicID)
		delete(img.topics, t.Name)
		delete(img.configs, ConfigResource{ResourceTopic, t.Name})
	case *ProducerIDsRecord:
		if r.NextProducerID > img.NextProducerID {
			img.NextProducerID = r.NextProducerID
		}
	case *FeatureLevelRecord:
		img.applyFeatureLevel(r)
	case *AccessControlEntryRecord, *RemoveAccessControlEntryRecord:
		img.applyACL(r)
	case *ClientQuotaRecord:
		img.applyClientQuota(r)
	default:
		_ = img.applyScram(r) || img.applyToken(r)
	}
}

// mutableTopic replaces the topic with id by a copy this image owns.
func (img *Image) mutableTopic(id UUID) *Topic {
	old := img.topicsByID[id]
	if old == nil {
		return nil
	}
	t := &Topic{Name: old.Name, ID: old.ID, Partitions: slices.Clone(old.Partitions)}
	img.topicsByID[id] = t
	img.topics[t.Name] = t
	return t
}
