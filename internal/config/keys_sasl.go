package config

// saslBrokerKeys are the broker keys of SASL: sasl.* keys, connection re-authentication and delegation tokens.
var saslBrokerKeys = []Key{}
