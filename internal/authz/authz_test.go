package authz

import (
	"fmt"
	"testing"
)

func lit(rt ResourceType, name, principal, host string, op Operation, perm Permission) Binding {
	return Binding{rt, name, PatternLiteral, principal, host, op, perm}
}

func pre(rt ResourceType, name, principal, host string, op Operation, perm Permission) Binding {
	return Binding{rt, name, PatternPrefixed, principal, host, op, perm}
}

// Cases in the shape of Kafka's StandardAuthorizerTest: a prefixed topic ACL
// and a literal group ACL for one user, DENY ALL beside an ALLOW, and
// wildcard principals.
func TestAuthorizeKafkaVectors(t *testing.T) {
	bindings := []Binding{
		pre(ResourceTopic, "foo_", "User:bob", Wildcard, OpRead, PermissionAllow),
		pre(ResourceTopic, "foo_", "User:bob", Wildcard, OpWrite, PermissionAllow),
		lit(ResourceGroup, "bar", "User:bob", Wildcard, OpDescribe, PermissionAllow),
		lit(ResourceGroup, "bar", "User:bob", Wildcard, OpAlterConfigs, PermissionDeny),
		lit(ResourceTopic, "baz", "User:alice", Wildcard, OpAll, PermissionDeny),
		lit(ResourceTopic, "baz", "User:alice", Wildcard, OpRead, PermissionAllow),
		lit(ResourceTopic, "baz", "User:*", Wildcard, OpDescribe, PermissionAllow),
		lit(ResourceTopic, "quux", "User:*", "10.0.0.1", OpAll, PermissionAllow),
	}
	ix := NewIndex(bindings, Settings{SuperUsers: []string{"User:superman"}})
	cases := []struct {
		principal, host string
		op              Operation
		rt              ResourceType
		name            string
		want            bool
	}{
		{"User:bob", "1.2.3.4", OpRead, ResourceTopic, "foo_", true},
		{"User:bob", "1.2.3.4", OpRead, ResourceTopic, "foo_bar", true},
		{"User:bob", "1.2.3.4", OpWrite, ResourceTopic, "foo_bar", true},
		{"User:bob", "1.2.3.4", OpDescribe, ResourceTopic, "foo_bar", true},
		{"User:bob", "1.2.3.4", OpDelete, ResourceTopic, "foo_bar", false},
		{"User:bob", "1.2.3.4", OpRead, ResourceTopic, "foo", false},
		{"User:alice", "1.2.3.4", OpRead, ResourceTopic, "foo_bar", false},
		{"User:bob", "1.2.3.4", OpDescribe, ResourceGroup, "bar", true},
		{"User:bob", "1.2.3.4", OpAlterConfigs, ResourceGroup, "bar", false},
		{"User:bob", "1.2.3.4", OpRead, ResourceGroup, "bar", false},
		{"User:alice", "1.2.3.4", OpRead, ResourceTopic, "baz", false},
		{"User:alice", "1.2.3.4", OpDescribe, ResourceTopic, "baz", false},
		{"User:bob", "1.2.3.4", OpDescribe, ResourceTopic, "baz", true},
		{"User:bob", "1.2.3.4", OpRead, ResourceTopic, "baz", false},
		{"User:bob", "10.0.0.1", OpDelete, ResourceTopic, "quux", true},
		{"User:bob", "10.0.0.2", OpDelete, ResourceTopic, "quux", false},
		{"User:superman", "1.2.3.4", OpAlter, ResourceCluster, ClusterName, true},
		{"User:superman", "1.2.3.4", OpRead, ResourceTopic, "baz", true},
		// A principal of another type is not matched by User:*.
		{"Group:eng", "10.0.0.1", OpRead, ResourceTopic, "quux", false},
		{"User:bob", "1.2.3.4", OpRead, ResourceType(99), "x", false},
	}
	for _, c := range cases {
		if got := ix.Authorize(c.principal, c.host, c.op, c.rt, c.name); got != c.want {
			t.Errorf("%s@%s %s %s %q: got %v, want %v", c.principal, c.host, c.op, c.rt, c.name, got, c.want)
		}
	}
}

func TestFilterMatches(t *testing.T) {
	name := func(s string) *string { return &s }
	literalFoo := lit(ResourceTopic, "foo", "User:a", Wildcard, OpRead, PermissionAllow)
	wildcard := lit(ResourceTopic, Wildcard, "User:a", Wildcard, OpRead, PermissionAllow)
	prefixFo := pre(ResourceTopic, "fo", "User:a", Wildcard, OpRead, PermissionAllow)
	prefixBar := pre(ResourceTopic, "bar", "User:a", Wildcard, OpRead, PermissionAllow)
	group := lit(ResourceGroup, "foo", "User:b", "1.1.1.1", OpDelete, PermissionDeny)
	all := []Binding{literalFoo, wildcard, prefixFo, prefixBar, group}
	cases := []struct {
		label  string
		filter Filter
		want   []Binding
	}{
		{"any", MatchAll, all},
		{"topic any name", Filter{ResourceTopic, nil, PatternAny, nil, nil, OpAny, PermissionAny}, all[:4]},
		{"literal foo", Filter{ResourceTopic, name("foo"), PatternLiteral, nil, nil, OpAny, PermissionAny}, []Binding{literalFoo}},
		{"any pattern foo", Filter{ResourceAny, name("foo"), PatternAny, nil, nil, OpAny, PermissionAny}, []Binding{literalFoo, group}},
		{"match foo", Filter{ResourceTopic, name("foo"), PatternMatch, nil, nil, OpAny, PermissionAny}, []Binding{literalFoo, wildcard, prefixFo}},
		{"prefixed fo", Filter{ResourceTopic, name("fo"), PatternPrefixed, nil, nil, OpAny, PermissionAny}, []Binding{prefixFo}},
		{"principal", Filter{ResourceAny, nil, PatternAny, name("User:b"), nil, OpAny, PermissionAny}, []Binding{group}},
		{"host", Filter{ResourceAny, nil, PatternAny, nil, name("1.1.1.1"), OpAny, PermissionAny}, []Binding{group}},
		{"operation", Filter{ResourceAny, nil, PatternAny, nil, nil, OpDelete, PermissionAny}, []Binding{group}},
		{"permission", Filter{ResourceAny, nil, PatternAny, nil, nil, OpAny, PermissionAllow}, all[:4]},
	}
	for _, c := range cases {
		var got []Binding
		for _, b := range all {
			if c.filter.Matches(b) {
				got = append(got, b)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.label, got, c.want)
		}
	}
	if !(Filter{ResourceUnknown, nil, PatternAny, nil, nil, OpAny, PermissionAny}).Unknown() || MatchAll.Unknown() {
		t.Error("Unknown is wrong")
	}
}

func TestValidate(t *testing.T) {
	good := lit(ResourceTopic, "foo", "User:a", Wildcard, OpRead, PermissionAllow)
	if msg := good.Validate(); msg != "" {
		t.Fatalf("valid binding refused: %s", msg)
	}
	bad := map[string]func(b *Binding){
		"unknown resource type": func(b *Binding) { b.ResourceType = 42 },
		"any resource type":     func(b *Binding) { b.ResourceType = ResourceAny },
		"match pattern":         func(b *Binding) { b.PatternType = PatternMatch },
		"any pattern":           func(b *Binding) { b.PatternType = PatternAny },
		"any operation":         func(b *Binding) { b.Operation = OpAny },
		"unknown operation":     func(b *Binding) { b.Operation = 77 },
		"any permission":        func(b *Binding) { b.Permission = PermissionAny },
		"empty name":            func(b *Binding) { b.ResourceName = "" },
		"empty principal":       func(b *Binding) { b.Principal = "" },
		"principal no colon":    func(b *Binding) { b.Principal = "alice" },
		"cluster name":          func(b *Binding) { b.ResourceType, b.ResourceName = ResourceCluster, "other" },
	}
	for label, mutate := range bad {
		b := good
		mutate(&b)
		if b.Validate() == "" {
			t.Errorf("%s: accepted %v", label, b)
		}
	}
}

func TestIndexDeduplicatesAndSkipsInvalid(t *testing.T) {
	b := lit(ResourceTopic, "foo", "User:a", Wildcard, OpRead, PermissionAllow)
	ix := NewIndex([]Binding{b, b, {ResourceType: 99, ResourceName: "x"}}, Settings{})
	if ix.Len() != 1 {
		t.Fatalf("Len = %d, want 1", ix.Len())
	}
}

// manyBindings is n ACLs spread over topics, groups and prefixes, for the
// benchmarks and the bench workload.
func manyBindings(n int) []Binding {
	out := make([]Binding, 0, n)
	for i := range n {
		principal := fmt.Sprintf("User:user-%d", i%500)
		switch i % 4 {
		case 0:
			out = append(out, lit(ResourceTopic, fmt.Sprintf("topic-%d", i), principal, Wildcard, OpRead, PermissionAllow))
		case 1:
			out = append(out, lit(ResourceGroup, fmt.Sprintf("group-%d", i), principal, Wildcard, OpRead, PermissionAllow))
		case 2:
			out = append(out, pre(ResourceTopic, fmt.Sprintf("team-%d-", i), principal, Wildcard, OpWrite, PermissionAllow))
		default:
			out = append(out, lit(ResourceTopic, fmt.Sprintf("topic-%d", i), principal, fmt.Sprintf("10.0.%d.%d", i/256%256, i%256), OpDescribe, PermissionDeny))
		}
	}
	return out
}

var sink bool

// BenchmarkAuthorize measures one check with no ACLs and with 10,000 ACLs,
// the allowed principal matched by a prefixed ACL among them.
func BenchmarkAuthorize(b *testing.B) {
	b.Run("acls=0", func(b *testing.B) {
		a := New(Settings{AllowEveryoneIfNoACLFound: true})
		for b.Loop() {
			sink = a.Authorize("User:bench", "10.1.2.3", OpWrite, ResourceTopic, "bench-orders")
		}
	})
	b.Run("acls=10000", func(b *testing.B) {
		a := New(Settings{})
		a.Replace(append(manyBindings(9999), pre(ResourceTopic, "bench-", "User:bench", Wildcard, OpWrite, PermissionAllow)))
		if !a.Authorize("User:bench", "10.1.2.3", OpWrite, ResourceTopic, "bench-orders") {
			b.Fatal("the benchmark principal is not allowed")
		}
		for b.Loop() {
			sink = a.Authorize("User:bench", "10.1.2.3", OpWrite, ResourceTopic, "bench-orders")
		}
	})
	b.Run("acls=10000/denied", func(b *testing.B) {
		a := New(Settings{})
		a.Replace(manyBindings(10000))
		for b.Loop() {
			sink = a.Authorize("User:user-7", "10.1.2.3", OpRead, ResourceTopic, "topic-4000")
		}
	})
}

// Checks run while the index is replaced see either the old or the new
// ACLs, never a mix, and take no lock (run with -race).
func TestAuthorizerReplaceWhileChecking(t *testing.T) {
	a := New(Settings{})
	grant := lit(ResourceTopic, "t", "User:a", Wildcard, OpRead, PermissionAllow)
	deny := grant
	deny.Permission = PermissionDeny
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			if i%2 == 0 {
				a.Replace([]Binding{grant})
			} else {
				a.Replace([]Binding{grant, deny})
			}
		}
	}()
	for {
		select {
		case <-done:
			a.Replace([]Binding{grant})
			if !a.Authorize("User:a", "h", OpRead, ResourceTopic, "t") {
				t.Fatal("the last index is not in use")
			}
			return
		default:
			ix := a.Index()
			want := ix.Len() == 1
			if got := ix.Authorize("User:a", "h", OpRead, ResourceTopic, "t"); got != want {
				t.Fatalf("index of %d ACLs answered %v", ix.Len(), got)
			}
		}
	}
}

// The registry's resource types: their codes, names, and what Validate
// accepts for them.
func TestRegistryResourceTypes(t *testing.T) {
	if ResourceRegistry != 100 || ResourceSubject != 101 {
		t.Fatalf("codes %d %d", ResourceRegistry, ResourceSubject)
	}
	for _, c := range []struct {
		rt   ResourceType
		name string
	}{{ResourceRegistry, "REGISTRY"}, {ResourceSubject, "SUBJECT"}, {ResourceUser, "USER"}} {
		if c.rt.String() != c.name || !c.rt.Known() {
			t.Errorf("%d: %s known=%v", c.rt, c.rt, c.rt.Known())
		}
		if parsed, ok := ParseResourceType(c.name); !ok || parsed != c.rt {
			t.Errorf("parse %s: %d %v", c.name, parsed, ok)
		}
	}
	for _, unknown := range []ResourceType{8, 42, 99, 102, -1} {
		if unknown.Known() || unknown.String() != fmt.Sprintf("UNKNOWN(%d)", unknown) {
			t.Errorf("%d: known=%v %s", unknown, unknown.Known(), unknown)
		}
	}
	if _, ok := ParseResourceType(""); ok {
		t.Error("the empty name parsed")
	}
	valid := func(b Binding) string { return b.Validate() }
	allow := func(rt ResourceType, name string, pattern PatternType) Binding {
		return Binding{rt, name, pattern, "User:alice", Wildcard, OpRead, PermissionAllow}
	}
	for _, c := range []struct {
		b    Binding
		want string
	}{
		{allow(ResourceSubject, "orders-value", PatternLiteral), ""},
		{allow(ResourceSubject, "orders-", PatternPrefixed), ""},
		{allow(ResourceSubject, Wildcard, PatternLiteral), ""},
		{allow(ResourceSubject, "", PatternLiteral), "Resource name should not be empty"},
		{allow(ResourceRegistry, RegistryName, PatternLiteral), ""},
		{allow(ResourceRegistry, "other", PatternLiteral), "The only valid name for the REGISTRY resource is schema-registry, LITERAL"},
		{allow(ResourceRegistry, RegistryName, PatternPrefixed), "The only valid name for the REGISTRY resource is schema-registry, LITERAL"},
		{allow(ResourceType(99), "x", PatternLiteral), "Invalid resourceType UNKNOWN"},
	} {
		if got := valid(c.b); got != c.want {
			t.Errorf("%v: %q, want %q", c.b, got, c.want)
		}
	}
	// An index keeps registry ACLs and decides on them; an ANY filter
	// leaves them out, a filter naming their type selects them.
	ix := NewIndex([]Binding{allow(ResourceSubject, "orders-", PatternPrefixed), allow(ResourceTopic, "orders-", PatternPrefixed)}, Settings{})
	if got := ix.Bindings(MatchAll); len(got) != 1 || got[0].ResourceType != ResourceTopic {
		t.Fatalf("ANY filter: %v", got)
	}
	if got := ix.Bindings(RegistryFilters[1]); len(got) != 1 || got[0].ResourceType != ResourceSubject {
		t.Fatalf("SUBJECT filter: %v", got)
	}
	if got := ix.Bindings(RegistryFilters[0]); len(got) != 0 {
		t.Fatalf("REGISTRY filter: %v", got)
	}
	ix = NewIndex([]Binding{allow(ResourceSubject, "orders-", PatternPrefixed)}, Settings{})
	if ix.Len() != 1 || !ix.Authorize("User:alice", "1.1.1.1", OpRead, ResourceSubject, "orders-value") ||
		ix.Authorize("User:alice", "1.1.1.1", OpRead, ResourceTopic, "orders-value") {
		t.Fatal("prefixed subject ACL")
	}
}
