package diffcheck

import "github.com/twmb/franz-go/pkg/kmsg"

// aclCases compare the ACL APIs on nodes without an authorizer: a filter
// of ANY answers SECURITY_DISABLED, and a request with an UNKNOWN (0)
// element, the empty DescribeAcls request among them, closes the
// connection unanswered (Kafka's request parser refuses it).
func aclCases() []Case {
	anyFilter := func() *kmsg.DescribeACLsRequest {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
		req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		return req
	}
	return []Case{
		{Key: 29, Name: "empty request", Request: func(s *Side, v int16) kmsg.Request { return kmsg.NewPtrDescribeACLsRequest() }},
		{Key: 29, Name: "every ACL", Request: func(s *Side, v int16) kmsg.Request { return anyFilter() }},
		{Key: 29, Name: "UNKNOWN permission", Request: func(s *Side, v int16) kmsg.Request {
			req := anyFilter()
			req.PermissionType = kmsg.ACLPermissionTypeUnknown
			return req
		}},
		{Key: 30, Name: "creation with UNKNOWN elements", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrCreateACLsRequest()
			req.Creations = append(req.Creations, kmsg.NewCreateACLsRequestCreation())
			return req
		}},
		{Key: 31, Name: "filter with UNKNOWN elements", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrDeleteACLsRequest()
			req.Filters = append(req.Filters, kmsg.NewDeleteACLsRequestFilter())
			return req
		}},
	}
}
