// Package authz is Samsa's authorizer, the equivalent of Kafka's
// StandardAuthorizer: it decides whether a principal connecting from a host
// may perform an operation on a resource, from the ACLs of the metadata log.
//
// An Index is an immutable, deterministic structure built from a set of
// bindings and the authorizer's settings; an Authorizer holds the current
// Index behind an atomic pointer, so checks on the request path take no lock
// and a metadata change swaps in a whole new Index.
//
// The rules, as Kafka's StandardAuthorizerData applies them:
//
//   - A super user (super.users) is allowed everything.
//   - The ACLs that apply to a resource are its literal ACLs, the literal
//     wildcard "*" of its type and the prefixed ACLs whose prefix starts its
//     name. An ACL applies to a request when its principal is the request's
//     or User:*, and its host is the client's IP address or "*".
//   - Any applying DENY for the operation or ALL denies: DENY beats ALLOW.
//     A DENY does not spread by implication (DENY READ leaves DESCRIBE).
//   - An applying ALLOW for the operation or ALL allows; ALLOW of READ,
//     WRITE, DELETE or ALTER also allows DESCRIBE, and ALLOW of
//     ALTER_CONFIGS also allows DESCRIBE_CONFIGS.
//   - The schema registry's REGISTRY and SUBJECT resource types (codes 100
//     and 101, Samsa's own, see types.go) follow the same rules.
//   - A resource with ACLs but none allowing is denied. A resource with no
//     ACL at all (for any principal) is allowed only when
//     allow.everyone.if.no.acl.found is true.
package authz

import (
	"slices"
	"strings"
)

// Settings are the authorizer's broker configs.
type Settings struct {
	// SuperUsers are principals ("User:admin") allowed everything.
	SuperUsers []string
	// AllowEveryoneIfNoACLFound opens resources that have no ACL at all.
	AllowEveryoneIfNoACLFound bool
}

// entry is one ACL as the index stores it under its resource pattern.
type entry struct {
	principal  string
	host       string
	operation  Operation
	permission Permission
}

type resourceKey struct {
	resourceType ResourceType
	name         string
}

// Index is an immutable ACL index. The zero value is not usable; build one
// with NewIndex.
type Index struct {
	settings   Settings
	superUsers map[string]struct{}
	literal    map[resourceKey][]entry
	prefixed   map[resourceKey][]entry
	// prefixLengths holds, per resource type (indexed by resourceSlot),
	// the distinct lengths of its prefixed patterns in ascending order, so
	// a check looks up only the prefixes of a name that some ACL could
	// have.
	prefixLengths [numResourceTypes][]int
	// bindings are all the ACLs, deduplicated, in a stable order.
	bindings []Binding
}

// NewIndex builds an index of bindings under settings. Bindings with codes
// Kafka does not define are skipped; duplicates are kept once.
func NewIndex(bindings []Binding, settings Settings) *Index {
	ix := &Index{
		settings:   settings,
		superUsers: make(map[string]struct{}, len(settings.SuperUsers)),
		literal:    map[resourceKey][]entry{},
		prefixed:   map[resourceKey][]entry{},
	}
	for _, u := range settings.SuperUsers {
		ix.superUsers[u] = struct{}{}
	}
	seen := make(map[Binding]struct{}, len(bindings))
	for _, b := range bindings {
		if b.Validate() != "" {
			continue
		}
		if _, dup := seen[b]; dup {
			continue
		}
		seen[b] = struct{}{}
		ix.bindings = append(ix.bindings, b)
		key := resourceKey{b.ResourceType, b.ResourceName}
		e := entry{principal: b.Principal, host: b.Host, operation: b.Operation, permission: b.Permission}
		if b.PatternType == PatternLiteral {
			ix.literal[key] = append(ix.literal[key], e)
			continue
		}
		ix.prefixed[key] = append(ix.prefixed[key], e)
		slot := resourceSlot(b.ResourceType)
		lengths := ix.prefixLengths[slot]
		if i, found := slices.BinarySearch(lengths, len(b.ResourceName)); !found {
			ix.prefixLengths[slot] = slices.Insert(lengths, i, len(b.ResourceName))
		}
	}
	slices.SortFunc(ix.bindings, compareBindings)
	return ix
}

func compareBindings(a, b Binding) int {
	switch {
	case a.ResourceType != b.ResourceType:
		return int(a.ResourceType) - int(b.ResourceType)
	case a.ResourceName != b.ResourceName:
		return strings.Compare(a.ResourceName, b.ResourceName)
	case a.PatternType != b.PatternType:
		return int(a.PatternType) - int(b.PatternType)
	case a.Principal != b.Principal:
		return strings.Compare(a.Principal, b.Principal)
	case a.Host != b.Host:
		return strings.Compare(a.Host, b.Host)
	case a.Operation != b.Operation:
		return int(a.Operation) - int(b.Operation)
	}
	return int(a.Permission) - int(b.Permission)
}

// Settings returns the settings the index was built with.
func (ix *Index) Settings() Settings { return ix.settings }

// Len is the number of ACLs in the index.
func (ix *Index) Len() int { return len(ix.bindings) }

// IsSuperUser reports whether principal is in super.users.
func (ix *Index) IsSuperUser(principal string) bool {
	_, ok := ix.superUsers[principal]
	return ok
}

// Bindings returns the ACLs the filter selects, in a stable order.
func (ix *Index) Bindings(f Filter) []Binding {
	var out []Binding
	for _, b := range ix.bindings {
		if f.Matches(b) {
			out = append(out, b)
		}
	}
	return out
}

// verdict accumulates what the applying ACLs say.
type verdict struct {
	// resourceHasACLs is set by any ACL on a matching pattern, whoever it
	// is for: a resource with ACLs is closed to everyone else.
	resourceHasACLs bool
	allowed         bool
	denied          bool
}

// Authorize reports whether principal, connected from host, may perform
// operation on the resource of type resourceType named name.
func (ix *Index) Authorize(principal, host string, operation Operation, resourceType ResourceType, name string) bool {
	if _, ok := ix.superUsers[principal]; ok {
		return true
	}
	slot := resourceSlot(resourceType)
	if slot < 0 {
		return false
	}
	userPrincipal := strings.HasPrefix(principal, "User:")
	var v verdict
	v.add(ix.literal[resourceKey{resourceType, name}], principal, userPrincipal, host, operation)
	if name != Wildcard {
		v.add(ix.literal[resourceKey{resourceType, Wildcard}], principal, userPrincipal, host, operation)
	}
	for _, n := range ix.prefixLengths[slot] {
		if n > len(name) {
			break
		}
		v.add(ix.prefixed[resourceKey{resourceType, name[:n]}], principal, userPrincipal, host, operation)
		if v.denied {
			return false
		}
	}
	switch {
	case v.denied:
		return false
	case v.allowed:
		return true
	case v.resourceHasACLs:
		return false
	}
	return ix.settings.AllowEveryoneIfNoACLFound
}

func (v *verdict) add(entries []entry, principal string, userPrincipal bool, host string, operation Operation) {
	if len(entries) == 0 {
		return
	}
	v.resourceHasACLs = true
	for i := range entries {
		e := &entries[i]
		if e.principal != principal && !(userPrincipal && e.principal == WildcardPrincipal) {
			continue
		}
		if e.host != Wildcard && e.host != host {
			continue
		}
		if e.permission == PermissionDeny {
			if e.operation == OpAll || e.operation == operation {
				v.denied = true
				return
			}
			continue
		}
		if allows(e.operation, operation) {
			v.allowed = true
		}
	}
}

// allows reports whether an ALLOW of granted permits operation.
func allows(granted, operation Operation) bool {
	switch {
	case granted == OpAll || granted == operation:
		return true
	case operation == OpDescribe:
		return granted == OpRead || granted == OpWrite || granted == OpDelete || granted == OpAlter
	case operation == OpDescribeConfigs:
		return granted == OpAlterConfigs
	}
	return false
}

// AuthorizeByResourceType reports whether principal may perform operation
// on at least one resource of resourceType, as Kafka's
// Authorizer.authorizeByResourceType decides it: allowed when the operation
// is allowed on an arbitrary name (super users, or no ACL at all with
// allow.everyone.if.no.acl.found), or when some literal or prefixed ALLOW
// for exactly the operation (or ALL) is not covered by a DENY.
func (ix *Index) AuthorizeByResourceType(principal, host string, operation Operation, resourceType ResourceType) bool {
	if ix.Authorize(principal, host, operation, resourceType, "hardcode") {
		return true
	}
	userPrincipal := strings.HasPrefix(principal, "User:")
	deniedLiteral := map[string]bool{}
	deniedPrefix := map[string]bool{}
	var allowLiteral, allowPrefix []string
	wildcardAllow := false
	for _, b := range ix.bindings {
		if b.ResourceType != resourceType {
			continue
		}
		if b.Host != Wildcard && b.Host != host {
			continue
		}
		if b.Principal != principal && !(userPrincipal && b.Principal == WildcardPrincipal) {
			continue
		}
		if b.Operation != operation && b.Operation != OpAll {
			continue
		}
		literal := b.PatternType == PatternLiteral
		if b.Permission == PermissionDeny {
			switch {
			case literal && b.ResourceName == Wildcard:
				return false
			case literal:
				deniedLiteral[b.ResourceName] = true
			default:
				deniedPrefix[b.ResourceName] = true
			}
			continue
		}
		switch {
		case literal && b.ResourceName == Wildcard:
			wildcardAllow = true
		case literal:
			allowLiteral = append(allowLiteral, b.ResourceName)
		default:
			allowPrefix = append(allowPrefix, b.ResourceName)
		}
	}
	if wildcardAllow {
		return true
	}
	dominated := func(name string) bool {
		for n := 1; n <= len(name); n++ {
			if deniedPrefix[name[:n]] {
				return true
			}
		}
		return false
	}
	for _, name := range allowLiteral {
		if !deniedLiteral[name] && !dominated(name) {
			return true
		}
	}
	for _, name := range allowPrefix {
		if !dominated(name) {
			return true
		}
	}
	return false
}

// Supported operations per resource type, as Kafka reports them in the
// authorized-operations fields (KIP-430).
var (
	TopicOperations   = []Operation{OpRead, OpWrite, OpCreate, OpDescribe, OpDelete, OpAlter, OpDescribeConfigs, OpAlterConfigs}
	GroupOperations   = []Operation{OpRead, OpDescribe, OpDelete}
	ClusterOperations = []Operation{OpCreate, OpClusterAction, OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite, OpAlter, OpDescribe}
)

// AuthorizedOperations is the KIP-430 bitfield of the operations of ops
// that principal may perform on the resource: bit n set for operation n.
func (ix *Index) AuthorizedOperations(principal, host string, resourceType ResourceType, name string, ops []Operation) int32 {
	var bits int32
	for _, op := range ops {
		if ix.Authorize(principal, host, op, resourceType, name) {
			bits |= 1 << op
		}
	}
	return bits
}
