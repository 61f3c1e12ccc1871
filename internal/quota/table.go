package quota

import "sort"

// Table is the set of configured quotas: each entity's values by key. A
// Table is immutable once built; NewTable copies its input.
type Table struct {
	entities map[Entity]map[string]float64
	// keysInUse counts the entities that set each key, so a key no entity
	// sets costs a request nothing.
	keysInUse map[string]int
}

// NewTable builds a table from entity values.
func NewTable(entities map[Entity]map[string]float64) *Table {
	t := &Table{entities: make(map[Entity]map[string]float64, len(entities)), keysInUse: map[string]int{}}
	for e, values := range entities {
		if len(values) == 0 {
			continue
		}
		copied := make(map[string]float64, len(values))
		for k, v := range values {
			copied[k] = v
			t.keysInUse[k]++
		}
		t.entities[e] = copied
	}
	return t
}

// EmptyTable has no quotas.
var EmptyTable = NewTable(nil)

// Uses reports whether any entity sets key.
func (t *Table) Uses(key string) bool { return t.keysInUse[key] > 0 }

// Values returns an entity's quotas (do not modify); nil if it has none.
func (t *Table) Values(e Entity) map[string]float64 { return t.entities[e] }

// Entities lists the entities with quotas in a stable order.
func (t *Table) Entities() []Entity {
	out := make([]Entity, 0, len(t.entities))
	for e := range t.entities {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Len is the number of entities with quotas.
func (t *Table) Len() int { return len(t.entities) }

// Bucket names whom a measured rate is shared by: Kafka's metric tags user
// and client-id, empty where the quota that applies does not name the type.
type Bucket struct {
	User     string
	ClientID string
}

// resolutionOrder is Kafka's lookup order of a user and client-id quota:
// which parts of the request's (user, client id) each step uses.
var resolutionOrder = [...]struct{ user, client PartKind }{
	{Named, Named},
	{Named, Default},
	{Named, Absent},
	{Default, Named},
	{Default, Default},
	{Default, Absent},
	{Absent, Named},
	{Absent, Default},
}

// Resolve finds the quota of key for a request of user and clientID, in
// Kafka's order. ok is false when none applies; the bucket is then the one
// shared by every client without a quota.
func (t *Table) Resolve(key, user, clientID string) (bound float64, bucket Bucket, ok bool) {
	if !t.Uses(key) {
		return 0, Bucket{}, false
	}
	for _, step := range resolutionOrder {
		var e Entity
		e.User = partFor(step.user, user)
		e.ClientID = partFor(step.client, clientID)
		values := t.entities[e]
		if values == nil {
			continue
		}
		if v, found := values[key]; found {
			if step.user != Absent {
				bucket.User = user
			}
			if step.client != Absent {
				bucket.ClientID = clientID
			}
			return v, bucket, true
		}
	}
	return 0, Bucket{}, false
}

// ResolveIP finds the connection creation rate of an IP: ip=<ip>, then the
// default IP.
func (t *Table) ResolveIP(ip string) (bound float64, ok bool) {
	if !t.Uses(ConnectionCreationRate) {
		return 0, false
	}
	if v, found := t.entities[Entity{IP: NamedPart(ip)}][ConnectionCreationRate]; found {
		return v, true
	}
	v, found := t.entities[Entity{IP: DefaultPart}][ConnectionCreationRate]
	return v, found
}

func partFor(kind PartKind, name string) Part {
	if kind == Named {
		return NamedPart(name)
	}
	return Part{Kind: kind}
}
