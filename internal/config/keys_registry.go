package config

// registryBrokerKeys are the keys of the schema registry served by the node.
var registryBrokerKeys = []Key{
	{Name: "schema.registry.listeners", Type: typeList, Default: "",
		Doc: "Samsa: comma-separated http://host:port listeners of the Confluent-compatible schema registry; empty disables it. samsa server with no configuration serves http://127.0.0.1:8081."},
	{Name: "schema.registry.max.request.bytes", Type: typeInt, Default: "16777216", Check: atLeast(1024),
		Doc: "Samsa: the largest request body the schema registry reads; larger bodies answer 413."},
	{Name: "schema.registry.timeout.ms", Type: typeInt, Default: "10000", Check: atLeast(1),
		Doc: "Samsa: how long a schema registry request waits for the _schemas topic (Confluent's kafkastore.timeout.ms)."},
	{Name: "schema.registry.topic.replication.factor", Type: typeShort, Default: "3", Check: atLeast(1),
		Doc: "Samsa: replication factor of _schemas when the registry creates it, capped at the number of brokers (Confluent's kafkastore.topic.replication.factor)."},
}
