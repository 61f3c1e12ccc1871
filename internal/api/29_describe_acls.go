package api

// DescribeAcls (key 29), versions 1-3 (Kafka 4 removed v0).
//
// Behavior:
//   - A filter with an UNKNOWN (0) resource type, pattern type, operation
//     or permission closes the connection unanswered, before anything else:
//     Kafka refuses it while parsing (acl_unknown_elements.go).
//   - Needs DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
//   - With no authorizer configured, SECURITY_DISABLED.
//   - A filter with another code Kafka does not define (say 42) matches no
//     ACL: NONE, no resources.
//   - Success carries an empty, not null, error message, as Kafka's does.
//   - Answered from this node's ACL index (the ACLs of the metadata image it
//     has applied), grouped by resource pattern as Kafka groups them.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

func init() {
	register(29, 1, 3, handleDescribeACLs)
	registerController(29, 1, 3, handleDescribeACLs)
}

func handleDescribeACLs(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.DescribeACLsRequest)
	if aclElementsUnknown(req.ResourceType, req.ResourcePatternType, req.Operation, req.PermissionType) {
		b.closeUnparsable(c, "DescribeAclsRequest contains UNKNOWN elements")
		return
	}
	resp := kmsg.NewPtrDescribeACLsResponse()
	fail := func(err *kerr.Error, message string) {
		resp.ErrorCode = err.Code
		resp.ErrorMessage = strptr(message)
		c.reply(resp)
	}
	if !b.authorizing() {
		fail(kerr.SecurityDisabled, "No Authorizer is configured.")
		return
	}
	if !b.authorizeCluster(c, opDescribe) {
		fail(kerr.ClusterAuthorizationFailed, kerr.ClusterAuthorizationFailed.Message)
		return
	}
	filter := authz.Filter{
		ResourceType: authz.ResourceType(req.ResourceType), ResourceName: req.ResourceName,
		PatternType: authz.PatternType(req.ResourcePatternType), Principal: req.Principal, Host: req.Host,
		Operation: authz.Operation(req.Operation), Permission: authz.Permission(req.PermissionType),
	}
	// Kafka answers NONE with an empty error message, and a code it does
	// not define (say 42) matches no ACL.
	resp.ErrorMessage = strptr("")
	if filter.Unknown() {
		c.reply(resp)
		return
	}
	type pattern struct {
		resourceType authz.ResourceType
		name         string
		patternType  authz.PatternType
	}
	at := map[pattern]int{}
	for _, binding := range b.Authorization.Authorizer.Index().Bindings(filter) {
		p := pattern{binding.ResourceType, binding.ResourceName, binding.PatternType}
		i, ok := at[p]
		if !ok {
			i = len(resp.Resources)
			at[p] = i
			res := kmsg.NewDescribeACLsResponseResource()
			res.ResourceType = kmsg.ACLResourceType(p.resourceType)
			res.ResourceName = p.name
			res.ResourcePatternType = kmsg.ACLResourcePatternType(p.patternType)
			resp.Resources = append(resp.Resources, res)
		}
		acl := kmsg.NewDescribeACLsResponseResourceACL()
		acl.Principal, acl.Host = binding.Principal, binding.Host
		acl.Operation = kmsg.ACLOperation(binding.Operation)
		acl.PermissionType = kmsg.ACLPermissionType(binding.Permission)
		resp.Resources[i].ACLs = append(resp.Resources[i].ACLs, acl)
	}
	c.reply(resp)
}
