package controller

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/quota"
)

// QuotaOp sets Key to Value, or removes it when Remove is set.
type QuotaOp struct {
	Key    string
	Value  float64
	Remove bool
}

// QuotaAlteration changes the quotas of one entity.
type QuotaAlteration struct {
	Entity []quota.Component
	Ops    []QuotaOp
}

// QuotaResult is one entity's outcome.
type QuotaResult struct {
	Entity       []quota.Component
	ErrorCode    int16
	ErrorMessage string
}

// AlterClientQuotas applies quota alterations as Kafka's controller
// decides them, with one difference: an entity altered twice in one
// request, or given the same key twice, answers Kafka's INVALID_REQUEST
// ("Ignoring duplicate entity ...") and none of its alterations is applied
// (Kafka keeps the first alteration of a duplicated entity while reporting
// the error). An entity with an invalid type, name, key or value gets the
// error and none of its alterations; the other entities' changes are
// committed together in one metadata log entry, unless validateOnly.
// Results come one per distinct entity, in request order.
func (c *Controller) AlterClientQuotas(alterations []QuotaAlteration, validateOnly bool) ([]QuotaResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return nil, err
	}
	current := c.image.Load().ClientQuotas()

	type outcome struct {
		result  QuotaResult
		records []metadata.Record
	}
	var order []entityKey
	outcomes := map[entityKey]*outcome{}
	for _, alteration := range alterations {
		entity, entityErr := quota.EntityFromComponents(alteration.Entity)
		id := entityKey{entity: entity}
		if entityErr != nil {
			id = entityKey{invalid: rawComponents(alteration.Entity)}
		}
		if o, seen := outcomes[id]; seen {
			o.records = nil
			o.result.ErrorCode = kerr.InvalidRequest.Code
			o.result.ErrorMessage = "Ignoring duplicate entity " + entityName(entity, alteration.Entity, entityErr == nil)
			continue
		}
		o := &outcome{result: QuotaResult{Entity: alteration.Entity}}
		outcomes[id] = o
		order = append(order, id)
		fail := func(message string) {
			o.result.ErrorCode, o.result.ErrorMessage = kerr.InvalidRequest.Code, message
			o.records = nil
		}
		keys := map[string]bool{}
		for _, op := range alteration.Ops {
			if keys[op.Key] {
				fail("Ignoring duplicate entity " + entityName(entity, alteration.Entity, entityErr == nil))
			}
			keys[op.Key] = true
		}
		if o.result.ErrorCode != 0 {
			continue
		}
		if entityErr != nil {
			fail(entityErr.Message)
			continue
		}
		values := current.Values(entity)
		for _, op := range alteration.Ops {
			if op.Remove {
				if _, ok := values[op.Key]; ok {
					o.records = append(o.records, metadata.QuotaRecordOf(entity, op.Key, nil))
				}
				continue
			}
			if err := quota.CheckValue(entity, op.Key, op.Value); err != nil {
				fail(err.Message)
				break
			}
			if old, ok := values[op.Key]; !ok || old != op.Value {
				value := op.Value
				o.records = append(o.records, metadata.QuotaRecordOf(entity, op.Key, &value))
			}
		}
	}
	var recs []metadata.Record
	results := make([]QuotaResult, 0, len(order))
	for _, id := range order {
		o := outcomes[id]
		recs = append(recs, o.records...)
		results = append(results, o.result)
	}
	if len(recs) > 0 && !validateOnly {
		if err := c.commitLocked(context.Background(), recs); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// entityKey tells the entities of a request apart: the checked entity
// when valid, else its components as sent.
type entityKey struct {
	entity  quota.Entity
	invalid string
}

func entityName(entity quota.Entity, components []quota.Component, valid bool) string {
	if valid {
		return entity.String()
	}
	return "ClientQuotaEntity(entries={" + rawComponents(components) + "})"
}

func rawComponents(components []quota.Component) string {
	parts := make([]string, 0, len(components))
	for _, c := range components {
		name := "null"
		if c.Name != nil {
			name = *c.Name
		}
		parts = append(parts, c.Type+"="+name)
	}
	return strings.Join(parts, ", ")
}
