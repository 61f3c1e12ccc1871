package config

// metricsAuthBrokerKeys decide who may read the metrics listener
// (metrics.listener): /metrics, and /healthz and /readyz. Nothing served
// there changes the cluster (every method but GET and HEAD answers 405), so
// reads are what these keys open or close.
var metricsAuthBrokerKeys = []Key{
	{Name: "metrics.authentication.method", Type: typeString, Default: "NONE", Check: oneOf("NONE", "BASIC"),
		Doc: "Samsa: who may read /metrics on metrics.listener. NONE: anyone who reaches the port. BASIC: HTTP basic auth with the name and password of a SASL user of the node (a PLAIN JAAS user_<name> of a SASL listener, or a SCRAM user); needs a SASL_PLAINTEXT or SASL_SSL client listener. With the authorizer on, the user also needs DESCRIBE on the cluster resource (or to be a super user)."},
	{Name: "metrics.health.authentication.method", Type: typeString, Default: "NONE", Check: oneOf("NONE", "BASIC"),
		Doc: "Samsa: who may read /healthz and /readyz on metrics.listener, with the values of metrics.authentication.method. NONE keeps liveness and readiness probes working without credentials."},
}
