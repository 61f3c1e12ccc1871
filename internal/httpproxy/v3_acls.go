package httpproxy

import (
	"net/http"
	"net/url"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclV3 is one ACL binding, as v3 names its fields and enum values.
type aclV3 struct {
	Kind         string            `json:"kind,omitempty"`
	Metadata     *resourceMetadata `json:"metadata,omitempty"`
	ClusterID    string            `json:"cluster_id,omitempty"`
	ResourceType string            `json:"resource_type"`
	ResourceName string            `json:"resource_name"`
	PatternType  string            `json:"pattern_type"`
	Principal    string            `json:"principal"`
	Host         string            `json:"host"`
	Operation    string            `json:"operation"`
	Permission   string            `json:"permission"`
}

// aclFilter is a parsed binding or filter: enum fields as Kafka codes.
type aclFilter struct {
	resourceType kmsg.ACLResourceType
	patternType  kmsg.ACLResourcePatternType
	operation    kmsg.ACLOperation
	permission   kmsg.ACLPermissionType
	name         *string
	principal    *string
	host         *string
}

// parseACL reads an ACL from its text fields; filter allows ANY and
// missing names.
func parseACL(fields aclV3, filter bool) (aclFilter, error) {
	var out aclFilter
	var err error
	defaultTo := func(value, fallback string) string {
		if value == "" {
			return fallback
		}
		return value
	}
	wildcard := "ANY"
	if !filter {
		wildcard = ""
	}
	if out.resourceType, err = kmsg.ParseACLResourceType(defaultTo(fields.ResourceType, wildcard)); err != nil || (!filter && out.resourceType <= 1) {
		return out, errBadRequest("invalid resource_type %q", fields.ResourceType)
	}
	if out.patternType, err = kmsg.ParseACLResourcePatternType(defaultTo(fields.PatternType, defaultTo(wildcard, "LITERAL"))); err != nil || (!filter && out.patternType <= 1) {
		return out, errBadRequest("invalid pattern_type %q", fields.PatternType)
	}
	if out.operation, err = kmsg.ParseACLOperation(defaultTo(fields.Operation, wildcard)); err != nil || (!filter && out.operation <= 1) {
		return out, errBadRequest("invalid operation %q", fields.Operation)
	}
	if out.permission, err = kmsg.ParseACLPermissionType(defaultTo(fields.Permission, wildcard)); err != nil || (!filter && out.permission <= 1) {
		return out, errBadRequest("invalid permission %q", fields.Permission)
	}
	optional := func(value string) *string {
		if value == "" && filter {
			return nil
		}
		return &value
	}
	out.name, out.principal, out.host = optional(fields.ResourceName), optional(fields.Principal), optional(fields.Host)
	if !filter && (fields.ResourceName == "" || fields.Principal == "") {
		return out, errBadRequest("resource_name and principal are required")
	}
	if !filter && fields.Host == "" {
		star := "*"
		out.host = &star
	}
	return out, nil
}

func aclFromQuery(query url.Values) aclV3 {
	return aclV3{
		ResourceType: query.Get("resource_type"), ResourceName: query.Get("resource_name"), PatternType: query.Get("pattern_type"),
		Principal: query.Get("principal"), Host: query.Get("host"), Operation: query.Get("operation"), Permission: query.Get("permission"),
	}
}

func aclOfV3(r *request, id string, resourceType kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, principal, host string, operation kmsg.ACLOperation, permission kmsg.ACLPermissionType) aclV3 {
	query := url.Values{}
	query.Set("resource_type", resourceType.String())
	query.Set("resource_name", name)
	query.Set("pattern_type", pattern.String())
	query.Set("principal", principal)
	query.Set("host", host)
	query.Set("operation", operation.String())
	query.Set("permission", permission.String())
	return aclV3{
		Kind: "KafkaAcl", Metadata: &resourceMetadata{Self: clusterURL(r, id) + "/acls?" + query.Encode()}, ClusterID: id,
		ResourceType: resourceType.String(), ResourceName: name, PatternType: pattern.String(),
		Principal: principal, Host: host, Operation: operation.String(), Permission: permission.String(),
	}
}

// GET /v3/clusters/{cluster_id}/acls?resource_type=...: the matching ACLs.
func (p *Proxy) listACLsV3(r *request) (int, any, error) {
	id, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	filter, err := parseACL(aclFromQuery(r.URL.Query()), true)
	if err != nil {
		return 0, nil, err
	}
	request := kmsg.NewPtrDescribeACLsRequest()
	request.ResourceType, request.ResourceName, request.ResourcePatternType = filter.resourceType, filter.name, filter.patternType
	request.Principal, request.Host, request.Operation, request.PermissionType = filter.principal, filter.host, filter.operation, filter.permission
	response, err := request.RequestWith(r.ctx, r.session.client)
	if err != nil {
		return 0, nil, err
	}
	if err := kerr.ErrorForCode(response.ErrorCode); err != nil {
		return 0, nil, err
	}
	var data []any
	for _, resource := range response.Resources {
		for _, acl := range resource.ACLs {
			data = append(data, aclOfV3(r, id, resource.ResourceType, resource.ResourceName, resource.ResourcePatternType, acl.Principal, acl.Host, acl.Operation, acl.PermissionType))
		}
	}
	return http.StatusOK, list(r, "KafkaAclList", data), nil
}

// POST /v3/clusters/{cluster_id}/acls: 201.
func (p *Proxy) createACLV3(r *request) (int, any, error) {
	if _, err := checkCluster(r); err != nil {
		return 0, nil, err
	}
	var body aclV3
	if err := readBody(r, &body, false); err != nil {
		return 0, nil, err
	}
	binding, err := parseACL(body, false)
	if err != nil {
		return 0, nil, err
	}
	request := kmsg.NewPtrCreateACLsRequest()
	creation := kmsg.NewCreateACLsRequestCreation()
	creation.ResourceType, creation.ResourceName, creation.ResourcePatternType = binding.resourceType, *binding.name, binding.patternType
	creation.Principal, creation.Host, creation.Operation, creation.PermissionType = *binding.principal, *binding.host, binding.operation, binding.permission
	request.Creations = append(request.Creations, creation)
	response, err := request.RequestWith(r.ctx, r.session.client)
	if err != nil {
		return 0, nil, err
	}
	for _, result := range response.Results {
		if err := kerr.ErrorForCode(result.ErrorCode); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusCreated, map[string]any{}, nil
}

// DELETE /v3/clusters/{cluster_id}/acls?...: the ACLs deleted.
func (p *Proxy) deleteACLsV3(r *request) (int, any, error) {
	id, err := checkCluster(r)
	if err != nil {
		return 0, nil, err
	}
	filter, err := parseACL(aclFromQuery(r.URL.Query()), true)
	if err != nil {
		return 0, nil, err
	}
	request := kmsg.NewPtrDeleteACLsRequest()
	deletion := kmsg.NewDeleteACLsRequestFilter()
	deletion.ResourceType, deletion.ResourceName, deletion.ResourcePatternType = filter.resourceType, filter.name, filter.patternType
	deletion.Principal, deletion.Host, deletion.Operation, deletion.PermissionType = filter.principal, filter.host, filter.operation, filter.permission
	request.Filters = append(request.Filters, deletion)
	response, err := request.RequestWith(r.ctx, r.session.client)
	if err != nil {
		return 0, nil, err
	}
	var data []any
	for _, result := range response.Results {
		if err := kerr.ErrorForCode(result.ErrorCode); err != nil {
			return 0, nil, err
		}
		for _, match := range result.MatchingACLs {
			data = append(data, aclOfV3(r, id, match.ResourceType, match.ResourceName, match.ResourcePatternType, match.Principal, match.Host, match.Operation, match.PermissionType))
		}
	}
	return http.StatusOK, map[string]any{"data": orEmpty(data)}, nil
}

func orEmpty(data []any) []any {
	if data == nil {
		return []any{}
	}
	return data
}
