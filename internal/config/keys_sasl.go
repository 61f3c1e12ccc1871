package config

// saslBrokerKeys are the broker keys of SASL: sasl.* keys, connection re-authentication (delegation tokens: keys_tokens.go).
//
// Each sasl.* key may also be set for one listener as
// listener.name.<listener>.<key>; the JAAS configuration is set per listener
// and mechanism as listener.name.<listener>.<mechanism>.sasl.jaas.config
// (listener_overrides.go), as Kafka brokers require.
var saslBrokerKeys = []Key{
	{Name: "sasl.enabled.mechanisms", Type: typeList, Default: "GSSAPI",
		Doc: "The list of SASL mechanisms enabled in the Kafka server. Samsa serves PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER; GSSAPI is refused at start."},
	{Name: "sasl.mechanism.inter.broker.protocol", Type: typeString, Default: "GSSAPI",
		Doc: "SASL mechanism used for inter-broker communication."},
	{Name: "sasl.mechanism.controller.protocol", Type: typeString, Default: "GSSAPI",
		Doc: "SASL mechanism used for communication with controllers."},
	{Name: "sasl.jaas.config", Type: typePassword, NoDefault: true, Sensitive: true,
		Doc: "JAAS login context parameters, set per listener and mechanism as listener.name.<listener>.<mechanism>.sasl.jaas.config."},
	{Name: "sasl.server.max.receive.size", Type: typeInt, Default: "524288", Check: atLeast(1),
		Doc: "The maximum receive size allowed before and during initial SASL authentication."},
	{Name: "connection.failed.authentication.delay.ms", Type: typeInt, Default: "100", Check: atLeast(0),
		Doc: "Connection close delay on failed authentication."},
	{Name: "connections.max.reauth.ms", Type: typeLong, Default: "0", Check: atLeast(0),
		Doc: "When positive, the maximum lifetime of an authenticated session before the client must re-authenticate (KIP-368); 0 disables re-authentication."},
	{Name: "samsa.sasl.plain.allow.plaintext", Type: typeBoolean, Default: "false",
		Doc: "Samsa: allow SASL PLAIN on SASL_PLAINTEXT listeners, where the password crosses the network unencrypted. Without it PLAIN is only served on SASL_SSL listeners."},
	{Name: "samsa.scram.bootstrap.users", Type: typePassword, NoDefault: true, Sensitive: true,
		Doc: "Samsa: SCRAM users written to the metadata log when the cluster is first formatted, like kafka-storage format --add-scram. A comma-separated list of MECHANISM=[name=<user>,password=<password>(,iterations=<n>)] entries."},
	{Name: "sasl.oauthbearer.jwks.endpoint.url", Type: typeString, NoDefault: true,
		Doc: "The OAuth/OIDC provider URL (https:// or file://) from which the provider's JWKS can be retrieved."},
	{Name: "sasl.oauthbearer.jwks.endpoint.refresh.ms", Type: typeLong, Default: "3600000", Check: atLeast(1),
		Doc: "The period between refreshes of the JWKS cache."},
	{Name: "sasl.oauthbearer.expected.audience", Type: typeList, NoDefault: true,
		Doc: "The comma-delimited audiences one of which the JWT's aud claim must name."},
	{Name: "sasl.oauthbearer.expected.issuer", Type: typeString, NoDefault: true,
		Doc: "The issuer the JWT's iss claim must name."},
	{Name: "sasl.oauthbearer.clock.skew.seconds", Type: typeInt, Default: "30", Check: atLeast(0),
		Doc: "The allowable clock difference in seconds between the OAuth/OIDC provider and the broker."},
	{Name: "sasl.oauthbearer.sub.claim.name", Type: typeString, Default: "sub",
		Doc: "The claim of the JWT that names the subject, the principal."},
	{Name: "sasl.oauthbearer.scope.claim.name", Type: typeString, Default: "scope",
		Doc: "The claim of the JWT that holds the scopes."},
}
