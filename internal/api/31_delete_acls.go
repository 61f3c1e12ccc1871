package api

// DeleteAcls (key 31), versions 1-3 (Kafka 4 removed v0).
//
// Behavior:
//   - A filter with an UNKNOWN (0) resource type, pattern type, operation
//     or permission closes the connection unanswered, before anything else:
//     Kafka refuses it while parsing (acl_unknown_elements.go).
//   - Needs ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED for
//     every filter; with no authorizer configured, SECURITY_DISABLED.
//   - Decided by the active controller (forwarded from other nodes): each
//     filter removes the ACLs it matches (ANY and MATCH as in DescribeAcls)
//     and lists them; a filter with a code Kafka does not define answers
//     INVALID_REQUEST.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

func init() {
	register(31, 1, 3, handleDeleteACLs)
	registerController(31, 1, 3, handleDeleteACLs)
}

func handleDeleteACLs(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DeleteACLsRequest)
	for _, f := range req.Filters {
		if aclElementsUnknown(f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType) {
			b.closeUnparsable(c, "Filters contain UNKNOWN elements")
			return
		}
	}
	resp := kmsg.NewPtrDeleteACLsResponse()
	failAll := func(err *kerr.Error, message string) {
		for range req.Filters {
			res := kmsg.NewDeleteACLsResponseResult()
			res.ErrorCode, res.ErrorMessage = err.Code, strptr(message)
			resp.Results = append(resp.Results, res)
		}
		c.reply(resp)
	}
	if !b.admitACLChange(c, req, failAll) {
		return
	}
	filters := make([]authz.Filter, len(req.Filters))
	for i, f := range req.Filters {
		filters[i] = authz.Filter{
			ResourceType: authz.ResourceType(f.ResourceType), ResourceName: f.ResourceName,
			PatternType: authz.PatternType(f.ResourcePatternType), Principal: f.Principal, Host: f.Host,
			Operation: authz.Operation(f.Operation), Permission: authz.Permission(f.PermissionType),
		}
	}
	ctx, cancel := requestContext(forwardTimeoutMs)
	defer cancel()
	deleted := 0
	for _, result := range b.Controller.DeleteACLs(ctx, filters) {
		res := kmsg.NewDeleteACLsResponseResult()
		res.ErrorCode = result.ErrorCode
		if result.ErrorMessage != "" {
			res.ErrorMessage = strptr(result.ErrorMessage)
		}
		for _, binding := range result.Deleted {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType = kmsg.ACLResourceType(binding.ResourceType)
			m.ResourceName = binding.ResourceName
			m.ResourcePatternType = kmsg.ACLResourcePatternType(binding.PatternType)
			m.Principal, m.Host = binding.Principal, binding.Host
			m.Operation = kmsg.ACLOperation(binding.Operation)
			m.PermissionType = kmsg.ACLPermissionType(binding.Permission)
			res.MatchingACLs = append(res.MatchingACLs, m)
		}
		deleted += len(result.Deleted)
		resp.Results = append(resp.Results, res)
	}
	b.auditACLChange(c, "delete", deleted)
	c.reply(resp)
}
