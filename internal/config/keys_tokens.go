package config

// tokenBrokerKeys are the broker keys of delegation tokens (KIP-48). Every
// node of a cluster must have the same delegation.token.secret.key: the
// token HMACs (the passwords clients authenticate with) are derived from
// it and never stored.
var tokenBrokerKeys = []Key{
	{Name: "delegation.token.secret.key", Type: typePassword, NoDefault: true, Sensitive: true,
		Doc: "Secret key to generate and verify delegation tokens. The same key must be configured across all the brokers and controllers. Without it, delegation tokens are disabled (DELEGATION_TOKEN_AUTH_DISABLED)."},
	{Name: "delegation.token.max.lifetime.ms", Type: typeLong, Default: "604800000", Check: atLeast(1),
		Doc: "The token has a maximum lifetime beyond which it cannot be renewed anymore. Default value 7 days."},
	{Name: "delegation.token.expiry.time.ms", Type: typeLong, Default: "86400000", Check: atLeast(1),
		Doc: "The token validity time in milliseconds before the token needs to be renewed. Default value 1 day."},
	{Name: "delegation.token.expiry.check.interval.ms", Type: typeLong, Default: "3600000", Check: atLeast(1),
		Doc: "Scan interval to remove expired delegation tokens."},
}
