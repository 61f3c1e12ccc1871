package authz

import (
	"fmt"
	"strings"
)

// ResourceType is Kafka's ResourceType, with Kafka's wire codes.
type ResourceType int8

// Resource types.
const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7

	// The schema registry's resource types are Samsa's own, as Redpanda
	// adds its own: Kafka has none for the registry. REGISTRY is the
	// registry as a whole (its global compatibility level and mode), with
	// the one name RegistryName; SUBJECT is one subject, by name, literal or
	// prefixed. Their codes sit far above Kafka's, which Kafka allocates
	// one by one from 8, so a future Kafka type never takes them; Kafka's
	// clients read a code they do not know as UNKNOWN (Java's
	// ResourceType.fromCode), never as one of their own types.
	ResourceRegistry ResourceType = 100
	ResourceSubject  ResourceType = 101

	// numKafkaResourceTypes are the codes 0..7 Kafka defines.
	numKafkaResourceTypes = 8
	// numResourceTypes counts the slots of resourceSlot: Kafka's codes,
	// then REGISTRY and SUBJECT.
	numResourceTypes = numKafkaResourceTypes + 2
)

// resourceSlot maps a known resource type to 0..numResourceTypes-1, for
// per-type tables; -1 for a code neither Kafka nor Samsa defines.
func resourceSlot(t ResourceType) int {
	switch {
	case t >= 0 && t < numKafkaResourceTypes:
		return int(t)
	case t == ResourceRegistry:
		return numKafkaResourceTypes
	case t == ResourceSubject:
		return numKafkaResourceTypes + 1
	}
	return -1
}

// ClusterName is the name of the one CLUSTER resource.
const ClusterName = "kafka-cluster"

// RegistryName is the name of the one REGISTRY resource.
const RegistryName = "schema-registry"

// Wildcard is the literal resource name and host that match everything.
const Wildcard = "*"

// WildcardPrincipal is the principal every User: principal matches.
const WildcardPrincipal = "User:*"

// Operation is Kafka's AclOperation, with Kafka's wire codes.
type Operation int8

// Operations.
const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
	OpTwoPhaseCommit  Operation = 15

	numOperations = 16
)

// PatternType is Kafka's PatternType, with Kafka's wire codes. ANY and
// MATCH appear only in filters.
type PatternType int8

// Pattern types.
const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

// Permission is Kafka's AclPermissionType, with Kafka's wire codes. ANY
// appears only in filters.
type Permission int8

// Permissions.
const (
	PermissionUnknown Permission = 0
	PermissionAny     Permission = 1
	PermissionDeny    Permission = 2
	PermissionAllow   Permission = 3
)

var resourceTypeNames = [...]string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER",
	ResourceRegistry: "REGISTRY", ResourceSubject: "SUBJECT"}

var operationNames = [...]string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
	"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}

var patternTypeNames = [...]string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}

var permissionNames = [...]string{"UNKNOWN", "ANY", "DENY", "ALLOW"}

func nameOf(names []string, code int8) string {
	if code >= 0 && int(code) < len(names) && names[code] != "" {
		return names[code]
	}
	return fmt.Sprintf("UNKNOWN(%d)", code)
}

func parseName(names []string, s string) (int8, bool) {
	s = strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	for i, n := range names {
		if n == "" {
			continue
		}
		if n == s || strings.ReplaceAll(n, "_", "") == s {
			return int8(i), true
		}
	}
	return 0, false
}

func (t ResourceType) String() string { return nameOf(resourceTypeNames[:], int8(t)) }
func (o Operation) String() string    { return nameOf(operationNames[:], int8(o)) }
func (p PatternType) String() string  { return nameOf(patternTypeNames[:], int8(p)) }
func (p Permission) String() string   { return nameOf(permissionNames[:], int8(p)) }

// Known reports whether t is a code Kafka defines, or one of Samsa's
// registry types.
func (t ResourceType) Known() bool { return t != ResourceUnknown && resourceSlot(t) >= 0 }

// Known reports whether o is a code Kafka defines.
func (o Operation) Known() bool { return o > OpUnknown && o < numOperations }

// Known reports whether p is a code Kafka defines.
func (p PatternType) Known() bool { return p > PatternUnknown && p <= PatternPrefixed }

// Known reports whether p is a code Kafka defines.
func (p Permission) Known() bool { return p > PermissionUnknown && p <= PermissionAllow }

// ParseResourceType parses a name such as TOPIC, transactional-id or
// subject.
func ParseResourceType(s string) (ResourceType, bool) {
	v, ok := parseName(resourceTypeNames[:], s)
	return ResourceType(v), ok
}

// ParseOperation parses a name such as READ or describe-configs.
func ParseOperation(s string) (Operation, bool) {
	v, ok := parseName(operationNames[:], s)
	return Operation(v), ok
}

// ParsePatternType parses LITERAL, PREFIXED, ANY or MATCH.
func ParsePatternType(s string) (PatternType, bool) {
	v, ok := parseName(patternTypeNames[:], s)
	return PatternType(v), ok
}

// ParsePermission parses ALLOW, DENY or ANY.
func ParsePermission(s string) (Permission, bool) {
	v, ok := parseName(permissionNames[:], s)
	return Permission(v), ok
}

// Binding is one ACL: a resource pattern and an access control entry, as
// in Kafka's AclBinding. Principal is "Type:Name" (User:alice, User:*);
// Host is an IP address or "*".
type Binding struct {
	ResourceType ResourceType
	ResourceName string
	PatternType  PatternType
	Principal    string
	Host         string
	Operation    Operation
	Permission   Permission
}

func (b Binding) String() string {
	return fmt.Sprintf("(pattern=ResourcePattern(resourceType=%s, name=%s, patternType=%s), entry=(principal=%s, host=%s, operation=%s, permissionType=%s))",
		b.ResourceType, b.ResourceName, b.PatternType, b.Principal, b.Host, b.Operation, b.Permission)
}

// Filter selects bindings, as Kafka's AclBindingFilter: ResourceAny
// matches every resource type Kafka defines (not the registry's, which a
// filter selects only by naming them: Kafka's Java client refuses a
// DescribeAcls or DeleteAcls answer with a resource type it does not know,
// so an ANY filter from kafka-acls.sh must never return one), PatternAny,
// OpAny and PermissionAny match every value, a nil name,
// principal or host matches every one, and PatternMatch selects the
// patterns that would apply to the named resource (the literal name, the
// literal wildcard and every prefix of it).
type Filter struct {
	ResourceType ResourceType
	ResourceName *string
	PatternType  PatternType
	Principal    *string
	Host         *string
	Operation    Operation
	Permission   Permission
}

// MatchAll is the filter that selects every binding on Kafka's resource
// types; with the registry's (RegistryFilters) it selects every binding.
var MatchAll = Filter{ResourceType: ResourceAny, PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny}

// RegistryFilters select every binding on the registry's resource types.
var RegistryFilters = []Filter{
	{ResourceType: ResourceRegistry, PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny},
	{ResourceType: ResourceSubject, PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny},
}

// Unknown reports whether the filter has a code Kafka does not define, which
// Kafka refuses with INVALID_REQUEST.
func (f Filter) Unknown() bool {
	return !f.ResourceType.Known() || !f.PatternType.Known() || !f.Operation.Known() || !f.Permission.Known()
}

// Matches reports whether the filter selects b.
func (f Filter) Matches(b Binding) bool {
	if f.ResourceType == ResourceAny {
		if b.ResourceType >= numKafkaResourceTypes {
			return false
		}
	} else if f.ResourceType != b.ResourceType {
		return false
	}
	if f.PatternType != PatternAny && f.PatternType != PatternMatch && f.PatternType != b.PatternType {
		return false
	}
	if f.ResourceName != nil {
		name := *f.ResourceName
		if f.PatternType == PatternMatch {
			switch b.PatternType {
			case PatternLiteral:
				if name != b.ResourceName && b.ResourceName != Wildcard {
					return false
				}
			case PatternPrefixed:
				if !strings.HasPrefix(name, b.ResourceName) {
					return false
				}
			default:
				return false
			}
		} else if name != b.ResourceName {
			return false
		}
	}
	if f.Principal != nil && *f.Principal != b.Principal {
		return false
	}
	if f.Host != nil && *f.Host != b.Host {
		return false
	}
	if f.Operation != OpAny && f.Operation != b.Operation {
		return false
	}
	return f.Permission == PermissionAny || f.Permission == b.Permission
}

// Validate checks a binding to be created as Kafka's controller does
// (AclControlManager.validateNewAcl and the broker's checks before it) and
// returns the INVALID_REQUEST message, or "" when the binding is valid.
func (b Binding) Validate() string {
	// Kafka's enums print every code they do not define as UNKNOWN.
	kafkaName := func(name string) string {
		if strings.HasPrefix(name, "UNKNOWN(") {
			return "UNKNOWN"
		}
		return name
	}
	switch {
	case !b.ResourceType.Known() || b.ResourceType == ResourceAny:
		return "Invalid resourceType " + kafkaName(b.ResourceType.String())
	case b.PatternType != PatternLiteral && b.PatternType != PatternPrefixed:
		return "Invalid patternType " + kafkaName(b.PatternType.String())
	case !b.Operation.Known() || b.Operation == OpAny:
		return "Invalid operation " + kafkaName(b.Operation.String())
	case b.Permission != PermissionAllow && b.Permission != PermissionDeny:
		return "Invalid permissionType " + kafkaName(b.Permission.String())
	case b.ResourceName == "":
		return "Resource name should not be empty"
	case b.ResourceType == ResourceCluster && b.ResourceName != ClusterName:
		return "The only valid name for the CLUSTER resource is " + ClusterName
	case b.ResourceType == ResourceRegistry && (b.ResourceName != RegistryName || b.PatternType != PatternLiteral):
		return "The only valid name for the REGISTRY resource is " + RegistryName + ", LITERAL"
	}
	if !strings.Contains(b.Principal, ":") {
		return "Could not parse principal from `" + b.Principal + "` (no colon is present separating the principal type from the principal name)"
	}
	return ""
}
