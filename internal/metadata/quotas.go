package metadata

import (
	"fmt"
	"maps"
	"math"

	"github.com/samsa-streaming/samsa/internal/quota"
)

// Client quotas (KIP-546). A ClientQuotaRecord sets (or, with "remove",
// deletes) one quota key of one entity; the entity is a list of (type,
// name) pairs, a null name being the type's default:
//
//	ClientQuotaRecord (type 14, version 0)
//	  {"entity": [{"entityType": "user", "entityName": "alice"},
//	              {"entityType": "client-id", "entityName": null}],
//	   "key": "producer_byte_rate", "value": 1048576, "remove": false}
//
// Entity types are user, client-id and ip; a record naming another type,
// an empty name, an IP with another type, or a value that is not a
// positive number is corrupt (the controller never writes one).

// TypeClientQuota is Kafka's ClientQuotaRecord (QuotaRecord) type.
const TypeClientQuota RecordType = 14

// QuotaEntityData is one (type, name) pair of a quota entity.
type QuotaEntityData struct {
	EntityType string  `json:"entityType"`
	EntityName *string `json:"entityName"`
}

// ClientQuotaRecord sets or removes one quota of an entity.
type ClientQuotaRecord struct {
	Entity []QuotaEntityData `json:"entity"`
	Key    string            `json:"key"`
	Value  float64           `json:"value"`
	Remove bool              `json:"remove"`
}

// Type implements Record.
func (*ClientQuotaRecord) Type() RecordType { return TypeClientQuota }

// QuotaEntity is the record's entity, checked.
func (r *ClientQuotaRecord) QuotaEntity() (quota.Entity, error) {
	components := make([]quota.Component, len(r.Entity))
	for i, e := range r.Entity {
		components[i] = quota.Component{Type: e.EntityType, Name: e.EntityName}
	}
	entity, err := quota.EntityFromComponents(components)
	if err != nil {
		return entity, fmt.Errorf("%w: client quota: %s", ErrCorrupt, err.Message)
	}
	return entity, nil
}

// QuotaRecordOf is the record setting (or removing, when value is nil) key
// of entity.
func QuotaRecordOf(entity quota.Entity, key string, value *float64) *ClientQuotaRecord {
	r := &ClientQuotaRecord{Key: key}
	for _, c := range entity.Components() {
		r.Entity = append(r.Entity, QuotaEntityData{EntityType: c.Type, EntityName: c.Name})
	}
	if value == nil {
		r.Remove = true
	} else {
		r.Value = *value
	}
	return r
}

// checkClientQuota is Decode's check of a decoded ClientQuotaRecord.
func checkClientQuota(r *ClientQuotaRecord) error {
	if _, err := r.QuotaEntity(); err != nil {
		return err
	}
	if r.Key == "" {
		return fmt.Errorf("%w: client quota without a key", ErrCorrupt)
	}
	if !r.Remove && (r.Value <= 0 || math.IsInf(r.Value, 0) || math.IsNaN(r.Value)) {
		return fmt.Errorf("%w: client quota %s value %v", ErrCorrupt, r.Key, r.Value)
	}
	return nil
}

// ClientQuotas is the image's quotas (shared; do not modify), never nil.
func (img *Image) ClientQuotas() *quota.Table {
	if img.quotas == nil {
		return quota.EmptyTable
	}
	return img.quotas
}

// applyClientQuota applies a ClientQuotaRecord to a freshly cloned image.
func (img *Image) applyClientQuota(r *ClientQuotaRecord) {
	entity, err := r.QuotaEntity()
	if err != nil {
		return // Decode refused it already
	}
	current := img.ClientQuotas()
	entities := map[quota.Entity]map[string]float64{}
	for _, e := range current.Entities() {
		entities[e] = current.Values(e)
	}
	values := maps.Clone(entities[entity])
	if values == nil {
		values = map[string]float64{}
	}
	if r.Remove {
		delete(values, r.Key)
	} else {
		values[r.Key] = r.Value
	}
	entities[entity] = values
	img.quotas = quota.NewTable(entities)
}

// quotaRecords rebuild the quotas in a snapshot.
func (img *Image) quotaRecords() []Record {
	var recs []Record
	t := img.ClientQuotas()
	for _, e := range t.Entities() {
		values := t.Values(e)
		for _, key := range quota.Keys(e) {
			if v, ok := values[key]; ok {
				recs = append(recs, QuotaRecordOf(e, key, &v))
			}
		}
		// Keys no longer valid for the entity are still carried over.
		for key, v := range values {
			if !contains(quota.Keys(e), key) {
				recs = append(recs, QuotaRecordOf(e, key, &v))
			}
		}
	}
	return recs
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
