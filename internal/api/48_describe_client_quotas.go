package api

// DescribeClientQuotas (key 48), versions 0-1.
//
// Behavior:
//   - Answered from this node's metadata image, as Kafka's brokers answer
//     it from theirs. Needs DESCRIBE_CONFIGS on the cluster, else
//     CLUSTER_AUTHORIZATION_FAILED.
//   - Each filter component names an entity type and matches it exactly
//     (match_type 0, a name), as the default (1, a null match) or as any
//     entity of the type, default included (2, a null match). An entity
//     matches when it matches every component; strict also requires it to
//     name no other type. No components: every entity, or none if strict.
//   - A type named twice, an empty type, a match that does not fit its
//     match type, an unknown match type, or an ip component beside a user
//     or client-id one answers INVALID_REQUEST; an unknown entity type
//     UNSUPPORTED_VERSION, with Kafka's messages and no entries.
//   - entries is an empty list when nothing matches, null with an error.
//   - v1 is the flexible version of v0.

import (
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/quota"
)

func init() {
	register(48, 0, 1, handleDescribeClientQuotas)
	registerController(48, 0, 1, handleDescribeClientQuotas)
}

func handleDescribeClientQuotas(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeClientQuotasRequest)
	resp := kmsg.NewPtrDescribeClientQuotasResponse()
	if !b.authorizeCluster(c, opDescribeConfigs) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, strptr(kerr.ClusterAuthorizationFailed.Message)
		c.reply(resp)
		return
	}
	filter, err := quotaFilterOf(req)
	if err != nil {
		resp.ErrorCode = kerr.InvalidRequest.Code
		if err.Unsupported {
			resp.ErrorCode = kerr.UnsupportedVersion.Code
		}
		resp.ErrorMessage = &err.Message
		c.reply(resp)
		return
	}
	table := b.Image().ClientQuotas()
	// Empty, not null, when nothing matches: Kafka's Admin client reads
	// null entries as an error answer and fails on it.
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, entity := range table.Entities() {
		if !filter.matches(entity) {
			continue
		}
		entry := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, component := range entity.Components() {
			e := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			e.Type, e.Name = component.Type, component.Name
			entry.Entity = append(entry.Entity, e)
		}
		values := table.Values(entity)
		for _, key := range slices.Sorted(maps.Keys(values)) {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = key, values[key]
			entry.Values = append(entry.Values, v)
		}
		resp.Entries = append(resp.Entries, entry)
	}
	c.reply(resp)
}

// quotaFilter is a checked DescribeClientQuotas filter.
type quotaFilter struct {
	// exact maps a type to the part it must be (named or default); any
	// lists the types that must be present in any form.
	exact  map[string]quota.Part
	any    map[string]bool
	strict bool
}

// quotaFilterOf checks the components as Kafka's ClientQuotasImage does.
func quotaFilterOf(req *kmsg.DescribeClientQuotasRequest) (*quotaFilter, *quota.Error) {
	f := &quotaFilter{exact: map[string]quota.Part{}, any: map[string]bool{}, strict: req.Strict}
	for _, component := range req.Components {
		typ := component.EntityType
		if typ == "" {
			return nil, &quota.Error{Message: "Invalid empty entity type."}
		}
		if _, dup := f.exact[typ]; dup || f.any[typ] {
			return nil, &quota.Error{Message: "Entity type " + typ + " cannot appear more than once in the filter."}
		}
		if typ != quota.TypeUser && typ != quota.TypeClientID && typ != quota.TypeIP {
			return nil, &quota.Error{Message: "Unsupported entity type " + typ, Unsupported: true}
		}
		switch component.MatchType {
		case 0:
			if component.Match == nil {
				return nil, &quota.Error{Message: "Request specified MATCH_TYPE_EXACT, but set match string to null."}
			}
			f.exact[typ] = quota.NamedPart(*component.Match)
		case 1:
			if component.Match != nil {
				return nil, &quota.Error{Message: "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."}
			}
			f.exact[typ] = quota.DefaultPart
		case 2:
			if component.Match != nil {
				return nil, &quota.Error{Message: "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."}
			}
			f.any[typ] = true
		default:
			return nil, &quota.Error{Message: "Unknown match type " + strconv.Itoa(int(component.MatchType))}
		}
	}
	_, exactIP := f.exact[quota.TypeIP]
	if exactIP || f.any[quota.TypeIP] {
		if len(f.exact)+len(f.any) > 1 {
			return nil, &quota.Error{Message: "Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component."}
		}
	}
	return f, nil
}

func (f *quotaFilter) matches(e quota.Entity) bool {
	if len(f.exact) == 0 && len(f.any) == 0 {
		return !f.strict
	}
	for typ, part := range f.exact {
		if e.Part(typ) != part {
			return false
		}
	}
	for typ := range f.any {
		if e.Part(typ).Kind == quota.Absent {
			return false
		}
	}
	return !f.strict || e.Size() == len(f.exact)+len(f.any)
}
