package api

// The UNKNOWN element check Kafka's ACL requests make while they parse.
//
// Kafka's CreateAclsRequest, DescribeAclsRequest and DeleteAclsRequest
// constructors refuse a creation or filter whose resource type, pattern
// type, operation or permission is code 0 (UNKNOWN) with an
// IllegalArgumentException. That happens while the request is parsed,
// before authorization or the "No Authorizer is configured" answer, so the
// broker answers nothing and closes the connection, as for any request it
// cannot read. A code Kafka does not define at all (say 99) parses, and is
// judged by each handler.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/network"
)

// aclElementsUnknown reports whether any of the four codes is UNKNOWN (0).
func aclElementsUnknown(resourceType kmsg.ACLResourceType, patternType kmsg.ACLResourcePatternType, operation kmsg.ACLOperation, permission kmsg.ACLPermissionType) bool {
	return resourceType == kmsg.ACLResourceTypeUnknown || patternType == kmsg.ACLResourcePatternTypeUnknown ||
		operation == kmsg.ACLOperationUnknown || permission == kmsg.ACLPermissionTypeUnknown
}

// closeUnparsable closes the connection without an answer, as Kafka does
// for a request it fails to parse.
func (b *Broker) closeUnparsable(c *call, reason string) {
	b.Logger.Info("closing connection: "+reason, "key", c.req.APIKey, "version", c.version, "client", c.req.Conn.RemoteAddr)
	c.req.Respond(network.Response{None: true, Close: true})
}
