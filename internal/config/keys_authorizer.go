package config

import "strings"

// StandardAuthorizerClass is Kafka's KRaft authorizer; setting
// authorizer.class.name to it, or to SamsaAuthorizer, switches Samsa's
// authorizer on.
const (
	StandardAuthorizerClass = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
	SamsaAuthorizer         = "samsa"
)

// authorizerBrokerKeys are the broker keys of the authorizer: authorizer.class.name, super.users and allow.everyone.if.no.acl.found.
var authorizerBrokerKeys = []Key{
	{Name: "authorizer.class.name", Type: typeString, Default: "",
		Check: oneOf("", StandardAuthorizerClass, SamsaAuthorizer),
		Doc: "The authorizer that checks every request against the ACLs of the metadata log: " +
			StandardAuthorizerClass + " (or its short name " + SamsaAuthorizer + "). Empty: no authorizer, every request is allowed."},
	{Name: "super.users", Type: typeString, Default: "",
		Doc: "Principals allowed every operation on every resource, separated by semicolons: User:admin;User:broker."},
	{Name: "allow.everyone.if.no.acl.found", Type: typeBoolean, Default: "false",
		Doc: "Whether a resource with no ACL at all is open to every principal. Kafka's default, false, denies it."},
}

// AuthorizerEnabled reports whether authorizer.class.name names the
// authorizer.
func (b *Broker) AuthorizerEnabled() bool {
	v, _ := b.Get("authorizer.class.name")
	return v == StandardAuthorizerClass || v == SamsaAuthorizer
}

// SuperUsers is super.users split at semicolons, each trimmed, empty
// entries dropped.
func (b *Broker) SuperUsers() []string {
	v, _ := b.Get("super.users")
	var out []string
	for _, p := range strings.Split(v, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// AllowEveryoneIfNoACLFound is allow.everyone.if.no.acl.found.
func (b *Broker) AllowEveryoneIfNoACLFound() bool {
	v, _ := b.Get("allow.everyone.if.no.acl.found")
	return v == "true"
}
