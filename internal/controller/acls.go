package controller

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

// maxRecordsPerUserOp bounds the records one ACL request may write, as
// Kafka's QuorumController bounds a user operation (MAX_RECORDS_PER_USER_OP).
const maxRecordsPerUserOp = 10000

// ACLResult is the outcome of one ACL creation.
type ACLResult struct {
	ErrorCode    int16
	ErrorMessage string
}

// ACLDeletion is the outcome of one DeleteAcls filter: the ACLs it removed,
// or an error for the whole filter.
type ACLDeletion struct {
	ErrorCode    int16
	ErrorMessage string
	Deleted      []authz.Binding
}

// BindingOf is the binding an ACL record holds.
func BindingOf(r metadata.AccessControlEntryRecord) authz.Binding {
	return authz.Binding{
		ResourceType: authz.ResourceType(r.ResourceType), ResourceName: r.ResourceName,
		PatternType: authz.PatternType(r.PatternType), Principal: r.Principal, Host: r.Host,
		Operation: authz.Operation(r.Operation), Permission: authz.Permission(r.PermissionType),
	}
}

// Bindings are the ACLs of img as authorizer bindings.
func Bindings(img *metadata.Image) []authz.Binding {
	all := img.ACLs().All()
	out := make([]authz.Binding, len(all))
	for i, r := range all {
		out[i] = BindingOf(r)
	}
	return out
}

// CreateACLs validates and adds ACLs, as Kafka's AclControlManager: an
// invalid binding answers INVALID_REQUEST, one that exists already (or
// repeats an earlier one in the request) succeeds without a new record.
func (c *Controller) CreateACLs(ctx context.Context, bindings []authz.Binding) []ACLResult {
	results := make([]ACLResult, len(bindings))
	if len(bindings) > maxRecordsPerUserOp {
		for i := range results {
			results[i] = ACLResult{kerr.InvalidRequest.Code, fmt.Sprintf("Too many ACLs in one request: %d, at most %d.", len(bindings), maxRecordsPerUserOp)}
		}
		return results
	}
	if err := c.beginTimed(ctx); err != nil {
		for i := range results {
			results[i] = ACLResult{commitError(err).Code, err.Error()}
		}
		return results
	}
	defer c.mu.Unlock()
	existing := map[authz.Binding]bool{}
	for _, r := range c.image.Load().ACLs().All() {
		existing[BindingOf(r)] = true
	}
	var recs []metadata.Record
	for i, b := range bindings {
		if msg := b.Validate(); msg != "" {
			results[i] = ACLResult{kerr.InvalidRequest.Code, msg}
			continue
		}
		if existing[b] {
			continue
		}
		existing[b] = true
		id := metadata.RandomUUID()
		recs = append(recs, &metadata.AccessControlEntryRecord{
			ID: id, ResourceType: int8(b.ResourceType), ResourceName: b.ResourceName, PatternType: int8(b.PatternType),
			Principal: b.Principal, Host: b.Host, Operation: int8(b.Operation), PermissionType: int8(b.Permission),
		})
	}
	if err := c.commitLocked(ctx, recs); err != nil {
		for i := range results {
			if results[i].ErrorCode == 0 {
				results[i] = ACLResult{commitError(err).Code, err.Error()}
			}
		}
	}
	return results
}

// DeleteACLs removes the ACLs each filter matches, as Kafka's
// AclControlManager: a filter with a code Kafka does not define answers
// INVALID_REQUEST; an ACL matched by several filters is removed once and
// reported under the first.
func (c *Controller) DeleteACLs(ctx context.Context, filters []authz.Filter) []ACLDeletion {
	results := make([]ACLDeletion, len(filters))
	if err := c.beginTimed(ctx); err != nil {
		for i := range results {
			results[i] = ACLDeletion{ErrorCode: commitError(err).Code, ErrorMessage: err.Error()}
		}
		return results
	}
	defer c.mu.Unlock()
	all := c.image.Load().ACLs().All()
	removed := map[metadata.UUID]bool{}
	var recs []metadata.Record
	for i, f := range filters {
		if f.Unknown() {
			// AclControlManager.deleteAcls judges the pattern part first.
			message := "Unknown entryFilter."
			if !f.ResourceType.Known() || !f.PatternType.Known() {
				message = "Unknown patternFilter."
			}
			results[i] = ACLDeletion{ErrorCode: kerr.InvalidRequest.Code, ErrorMessage: message}
			continue
		}
		for _, r := range all {
			b := BindingOf(r)
			if removed[r.ID] || !f.Matches(b) {
				continue
			}
			removed[r.ID] = true
			results[i].Deleted = append(results[i].Deleted, b)
			recs = append(recs, &metadata.RemoveAccessControlEntryRecord{ID: r.ID})
		}
	}
	if len(recs) > maxRecordsPerUserOp {
		for i := range results {
			if results[i].ErrorCode == 0 {
				results[i] = ACLDeletion{ErrorCode: kerr.InvalidRequest.Code,
					ErrorMessage: fmt.Sprintf("The ACL delete request would delete %d ACLs, more than %d.", len(recs), maxRecordsPerUserOp)}
			}
		}
		return results
	}
	if err := c.commitLocked(ctx, recs); err != nil {
		for i := range results {
			if results[i].ErrorCode == 0 {
				results[i] = ACLDeletion{ErrorCode: commitError(err).Code, ErrorMessage: err.Error()}
			}
		}
	}
	return results
}
