package api

// CreateAcls (key 30), versions 1-3 (Kafka 4 removed v0).
//
// Behavior:
//   - A creation with an UNKNOWN (0) resource type, pattern type, operation
//     or permission closes the connection unanswered, before anything else:
//     Kafka refuses it while parsing (acl_unknown_elements.go).
//   - Needs ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED for
//     every creation; with no authorizer configured, SECURITY_DISABLED.
//   - Decided by the active controller (forwarded from other nodes), which
//     validates each binding as Kafka's AclControlManager does: an unknown
//     or ANY resource type, a pattern type other than LITERAL or PREFIXED,
//     an unknown or ANY operation, a permission other than ALLOW or DENY,
//     an empty resource name, a CLUSTER name other than kafka-cluster, or a
//     principal without a colon answer INVALID_REQUEST for that binding.
//   - An ACL that exists already succeeds without a new record.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

func init() {
	register(30, 1, 3, handleCreateACLs)
	registerController(30, 1, 3, handleCreateACLs)
}

func handleCreateACLs(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.CreateACLsRequest)
	for _, creation := range req.Creations {
		if aclElementsUnknown(creation.ResourceType, creation.ResourcePatternType, creation.Operation, creation.PermissionType) {
			b.closeUnparsable(c, "CreatableAcls contain unknown elements")
			return
		}
	}
	resp := kmsg.NewPtrCreateACLsResponse()
	failAll := func(err *kerr.Error, message string) {
		for range req.Creations {
			res := kmsg.NewCreateACLsResponseResult()
			res.ErrorCode, res.ErrorMessage = err.Code, strptr(message)
			resp.Results = append(resp.Results, res)
		}
		c.reply(resp)
	}
	if !b.admitACLChange(c, req, failAll) {
		return
	}
	bindings := make([]authz.Binding, len(req.Creations))
	for i, creation := range req.Creations {
		bindings[i] = authz.Binding{
			ResourceType: authz.ResourceType(creation.ResourceType), ResourceName: creation.ResourceName,
			PatternType: authz.PatternType(creation.ResourcePatternType), Principal: creation.Principal, Host: creation.Host,
			Operation: authz.Operation(creation.Operation), Permission: authz.Permission(creation.PermissionType),
		}
	}
	ctx, cancel := requestContext(forwardTimeoutMs)
	defer cancel()
	for _, result := range b.Controller.CreateACLs(ctx, bindings) {
		res := kmsg.NewCreateACLsResponseResult()
		res.ErrorCode = result.ErrorCode
		// Kafka's created ACLs carry an empty, not null, error message.
		if result.ErrorMessage != "" || result.ErrorCode == 0 {
			res.ErrorMessage = strptr(result.ErrorMessage)
		}
		resp.Results = append(resp.Results, res)
	}
	b.auditACLChange(c, "create", len(bindings))
	c.reply(resp)
}

// admitACLChange lets a CreateAcls or DeleteAcls request go on to the
// controller here: it answers every item with fail and returns false when
// no authorizer is configured (SECURITY_DISABLED) or the principal may not
// ALTER the cluster, and returns false after forwarding the request when
// this node is not the active controller.
func (b *Broker) admitACLChange(c *call, req kmsg.Request, fail func(err *kerr.Error, message string)) bool {
	switch {
	case b.forwarded(c, req):
	case !b.authorizing():
		fail(kerr.SecurityDisabled, "No Authorizer is configured.")
	case !b.authorizeCluster(c, opAlter):
		fail(kerr.ClusterAuthorizationFailed, kerr.ClusterAuthorizationFailed.Message)
	default:
		return true
	}
	return false
}
