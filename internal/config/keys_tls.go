package config

// tlsBrokerKeys are the broker keys of TLS: ssl.* keys and their listener.name.<listener>. overrides.
var tlsBrokerKeys = []Key{}
