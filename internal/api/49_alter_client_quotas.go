package api

// AlterClientQuotas (key 49), versions 0-1.
//
// Behavior:
//   - Decided by the active controller (forwarded there from other nodes)
//     and written as ClientQuotaRecords, so every broker applies the same
//     quotas. Needs ALTER_CONFIGS on the cluster, else every entity
//     answers CLUSTER_AUTHORIZATION_FAILED.
//   - Per entity, with Kafka 4.4's INVALID_REQUEST messages: an unknown
//     entity type, an empty entity or name, an IP beside a user or
//     client-id or not an IP address, a key the entity's types do not take,
//     a value not finite and positive, a fractional or too large value for
//     the integral keys. Such an entity changes nothing; the others are
//     committed together. validate_only checks and commits nothing.
//   - An entity altered twice, or a key given twice for one entity,
//     answers "Ignoring duplicate entity" and applies none of that
//     entity's alterations (Kafka applies the first of a duplicated
//     entity's alterations while reporting the error; nothing is applied
//     partially here).
//   - Only changed values are written; removing a key that is not set is
//     accepted and writes nothing.
//   - v1 is the flexible version of v0.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/quota"
)

func init() {
	register(49, 0, 1, handleAlterClientQuotas)
	registerController(49, 0, 1, handleAlterClientQuotas)
}

func handleAlterClientQuotas(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.AlterClientQuotasRequest)
	if b.forwarded(c, req) {
		return
	}
	if !b.authorizeCluster(c, opAlterConfigs) {
		c.reply(alterClientQuotasError(req, kerr.ClusterAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Message))
		return
	}
	alterations := make([]controller.QuotaAlteration, 0, len(req.Entries))
	for _, entry := range req.Entries {
		alteration := controller.QuotaAlteration{Entity: alterComponents(entry)}
		for _, op := range entry.Ops {
			alteration.Ops = append(alteration.Ops, controller.QuotaOp{Key: op.Key, Value: op.Value, Remove: op.Remove})
		}
		alterations = append(alterations, alteration)
	}
	results, err := b.Controller.AlterClientQuotas(alterations, req.ValidateOnly)
	if err != nil {
		code := kerr.UnknownServerError.Code
		if errors.Is(err, controller.ErrNotActive) {
			code = kerr.NotController.Code
		}
		c.reply(alterClientQuotasError(req, code, err.Error()))
		return
	}
	resp := kmsg.NewPtrAlterClientQuotasResponse()
	for _, res := range results {
		entry := kmsg.NewAlterClientQuotasResponseEntry()
		entry.ErrorCode = res.ErrorCode
		if res.ErrorCode != 0 {
			entry.ErrorMessage = strptr(res.ErrorMessage)
		}
		for _, component := range res.Entity {
			e := kmsg.NewAlterClientQuotasResponseEntryEntity()
			e.Type, e.Name = component.Type, component.Name
			entry.Entity = append(entry.Entity, e)
		}
		resp.Entries = append(resp.Entries, entry)
	}
	c.reply(resp)
}

func alterComponents(entry kmsg.AlterClientQuotasRequestEntry) []quota.Component {
	out := make([]quota.Component, 0, len(entry.Entity))
	for _, e := range entry.Entity {
		out = append(out, quota.Component{Type: e.Type, Name: e.Name})
	}
	return out
}

// alterClientQuotasError answers every entry with code.
func alterClientQuotasError(req *kmsg.AlterClientQuotasRequest, code int16, message string) *kmsg.AlterClientQuotasResponse {
	resp := kmsg.NewPtrAlterClientQuotasResponse()
	for _, entry := range req.Entries {
		out := kmsg.NewAlterClientQuotasResponseEntry()
		out.ErrorCode, out.ErrorMessage = code, strptr(message)
		for _, e := range entry.Entity {
			oe := kmsg.NewAlterClientQuotasResponseEntryEntity()
			oe.Type, oe.Name = e.Type, e.Name
			out.Entity = append(out.Entity, oe)
		}
		resp.Entries = append(resp.Entries, out)
	}
	return resp
}
