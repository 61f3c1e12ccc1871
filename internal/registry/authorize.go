package registry

// Authorization of registry requests, when the node's authorizer is on.
//
// Kafka's ACLs have no resource for the registry, so Samsa adds two, as
// Redpanda does (internal/authz): SUBJECT, one subject by name (literal or
// prefixed), and REGISTRY, the registry as a whole, named
// "schema-registry". They are ordinary ACLs: created with CreateAcls,
// stored in the metadata log, decided by the node's authorizer with
// Kafka's rules (super users, DENY before ALLOW, READ/WRITE/DELETE/ALTER
// imply DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS,
// allow.everyone.if.no.acl.found). Each request is checked for the
// principal its basic credentials authenticated (User:ANONYMOUS without
// SASL) connecting from the client's IP address:
//
//	route                                              resource   operation
//	GET  /subjects                                     SUBJECT    DESCRIBE, per subject: the others are left out
//	GET  /subjects/{s}/versions                        SUBJECT    DESCRIBE
//	GET  /subjects/{s}/versions/{v}[/schema]           SUBJECT    READ
//	GET  /subjects/{s}/versions/{v}/referencedby       SUBJECT    READ
//	POST /subjects/{s}                (lookup)         SUBJECT    READ
//	POST /subjects/{s}/versions       (register)       SUBJECT    WRITE
//	POST /compatibility/subjects/{s}/versions[/{v}]    SUBJECT    READ
//	DELETE /subjects/{s}[/versions/{v}]                SUBJECT    DELETE
//	GET  /schemas                                      SUBJECT    READ, per subject: the others are left out
//	GET  /schemas/ids/{id}[/schema]                    SUBJECT    READ on a subject that has the id
//	GET  /schemas/ids/{id}/versions, /subjects         SUBJECT    READ on a subject that has the id;
//	                                                              lists the subjects it may DESCRIBE
//	GET  /config/{s}, /mode/{s}                        SUBJECT    DESCRIBE_CONFIGS
//	PUT, DELETE /config/{s}, /mode/{s}                 SUBJECT    ALTER_CONFIGS
//	GET  /config, /mode                                REGISTRY   DESCRIBE_CONFIGS
//	PUT, DELETE /config, /mode                         REGISTRY   ALTER_CONFIGS
//	GET  /, /schemas/types                             none (authenticated only)
//
// A denied request gets Confluent's 403 answer, error_code 40301. A write
// that a non-writer node forwards is checked there first, with the
// client's address, and again by the writer, which authenticates the same
// credentials but sees the forwarding node's address: an ACL for a
// particular host lets its writes through only on the writer (fail
// closed), an ACL for host "*" everywhere.

import (
	"net"
	"net/http"

	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/httpserve"
)

// Authorizer decides whether principal, connecting from host, may perform
// operation on a resource; *authz.Authorizer is one.
type Authorizer interface {
	Authorize(principal, host string, operation authz.Operation, resourceType authz.ResourceType, name string) bool
}

// need is the ACL a route needs, computed from its request; nil needs none.
type need func(req *http.Request) (authz.ResourceType, string, authz.Operation)

func onSubject(operation authz.Operation) need {
	return func(req *http.Request) (authz.ResourceType, string, authz.Operation) {
		return authz.ResourceSubject, req.PathValue("subject"), operation
	}
}

func onRegistry(operation authz.Operation) need {
	return func(*http.Request) (authz.ResourceType, string, authz.Operation) {
		return authz.ResourceRegistry, authz.RegistryName, operation
	}
}

// onConfig is the need of a config or mode route: the subject's when the
// route names one, else the registry's.
func onConfig(operation authz.Operation) need {
	return func(req *http.Request) (authz.ResourceType, string, authz.Operation) {
		if subject := req.PathValue("subject"); subject != "" {
			return authz.ResourceSubject, subject, operation
		}
		return authz.ResourceRegistry, authz.RegistryName, operation
	}
}

// allowed reports whether req's principal may perform operation on the
// resource; always true without an authorizer.
func (r *Registry) allowed(req *http.Request, resourceType authz.ResourceType, name string, operation authz.Operation) bool {
	if r.config.Authorizer == nil {
		return true
	}
	return r.config.Authorizer.Authorize(string(httpserve.PrincipalOf(req)), clientHost(req), operation, resourceType, name)
}

// check answers the route's need: nil when allowed, else Confluent's 40301.
func (r *Registry) check(req *http.Request, n need) error {
	if n == nil || r.config.Authorizer == nil {
		return nil
	}
	resourceType, name, operation := n(req)
	if r.allowed(req, resourceType, name, operation) {
		return nil
	}
	return errForbidden(resourceType, name, operation)
}

// errForbidden is Confluent's answer to a denied request.
func errForbidden(resourceType authz.ResourceType, name string, operation authz.Operation) *apiError {
	resource := "Subject"
	if resourceType == authz.ResourceRegistry {
		resource = "Registry"
	}
	return newError(http.StatusForbidden, 40301, "User is denied operation %s on %s: %s", operationName(operation), resource, name)
}

// errForbiddenID is the answer to a schema id whose subjects the principal
// may not read.
func errForbiddenID(id int) *apiError {
	return newError(http.StatusForbidden, 40301, "User is denied operation Read on Schema: %d", id)
}

// operationName is an operation as Kafka's AclOperation names it in
// prose: Read, Write, DescribeConfigs.
func operationName(operation authz.Operation) string {
	switch operation {
	case authz.OpRead:
		return "Read"
	case authz.OpWrite:
		return "Write"
	case authz.OpDelete:
		return "Delete"
	case authz.OpDescribe:
		return "Describe"
	case authz.OpDescribeConfigs:
		return "DescribeConfigs"
	case authz.OpAlterConfigs:
		return "AlterConfigs"
	}
	return operation.String()
}

// clientHost is the IP address req came from, as Kafka's ACL hosts name it.
func clientHost(req *http.Request) string {
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		return req.RemoteAddr
	}
	return host
}

// readableID reports whether req's principal may READ some subject version
// registered with id, soft-deleted ones included: a schema is readable by
// id through any subject that holds it, as Confluent's SCHEMA_READ.
func (r *Registry) readableID(req *http.Request, s *state, id int) bool {
	if r.config.Authorizer == nil {
		return true
	}
	for _, use := range s.usesOf(id, true) {
		if r.allowed(req, authz.ResourceSubject, use.Subject, authz.OpRead) {
			return true
		}
	}
	return false
}
