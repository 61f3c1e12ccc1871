package config

// authorizerBrokerKeys are the broker keys of the authorizer: authorizer.class.name, super.users and allow.everyone.if.no.acl.found.
var authorizerBrokerKeys = []Key{}
