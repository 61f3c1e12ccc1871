package config

// schemaValidationTopicKeys are Confluent Server's broker-side schema id
// validation: with one set, Produce refuses (INVALID_RECORD) a batch whose
// keys or values do not start with the schema registry's magic byte and
// the id of a schema registered under the topic's subject (TopicNameStrategy:
// <topic>-key, <topic>-value). Null keys and values (tombstones) pass.
var schemaValidationTopicKeys = []Key{
	{Name: "confluent.key.schema.validation", Type: typeBoolean, Default: "false",
		Doc:        "Confluent Server's schema id validation of record keys: each non-null key must carry the id of a schema registered under <topic>-key, else the batch is refused with INVALID_RECORD. See docs/http-proxy.md.",
		topicField: func(t *TopicConfig) any { return &t.KeySchemaValidation }},
	{Name: "confluent.value.schema.validation", Type: typeBoolean, Default: "false",
		Doc:        "Confluent Server's schema id validation of record values: each non-null value must carry the id of a schema registered under <topic>-value, else the batch is refused with INVALID_RECORD. See docs/http-proxy.md.",
		topicField: func(t *TopicConfig) any { return &t.ValueSchemaValidation }},
}

// schemaValidationBrokerKeys configure where the broker looks schema ids up.
var schemaValidationBrokerKeys = []Key{
	{Name: "confluent.schema.registry.url", Type: typeString, Default: "",
		Doc: "The schema registry schema id validation asks (Confluent Server's name); empty means this node's own schema registry listener."},
	{Name: "confluent.schema.registry.max.cache.size", Type: typeInt, Default: "10000", Check: atLeast(1),
		Doc: "How many (subject, schema id) pairs schema id validation remembers as registered (Confluent Server's name and default)."},
}
