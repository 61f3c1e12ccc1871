package config

// httpProxyBrokerKeys are the keys of the HTTP (REST) proxy served by the
// node. Where Confluent's REST Proxy has a key for the same bound, the name
// after the http.proxy. prefix is Confluent's and so is the default.
var httpProxyBrokerKeys = []Key{
	{Name: "http.proxy.listeners", Type: typeList, Default: "",
		Doc: "Samsa: comma-separated http://host:port (or https://) listeners of the Confluent-compatible REST proxy (v2 and v3 APIs); empty disables it (Confluent's listeners). samsa server with no configuration serves http://127.0.0.1:8082."},
	{Name: "http.proxy.max.request.bytes", Type: typeInt, Default: "67108864", Check: atLeast(1024),
		Doc: "Samsa: the largest request body the REST proxy reads; larger bodies answer 413."},
	{Name: "http.proxy.schema.registry.url", Type: typeString, Default: "",
		Doc: "Samsa: the schema registry the REST proxy's avro, jsonschema and protobuf formats use (Confluent's schema.registry.url); empty means this node's own schema registry listener."},
	{Name: "http.proxy.consumer.instance.timeout.ms", Type: typeInt, Default: "300000", Check: atLeast(1),
		Doc: "Samsa: how long a REST proxy consumer instance may sit unused before it is closed and leaves its group (Confluent's consumer.instance.timeout.ms)."},
	{Name: "http.proxy.consumer.request.timeout.ms", Type: typeInt, Default: "1000", Check: atLeast(1),
		Doc: "Samsa: the longest a records request of a REST proxy consumer waits for data when it names no timeout (Confluent's consumer.request.timeout.ms)."},
	{Name: "http.proxy.consumer.request.max.bytes", Type: typeInt, Default: "67108864", Check: atLeast(1),
		Doc: "Samsa: the most record bytes one records request of a REST proxy consumer answers, and what it buffers per instance (Confluent's consumer.request.max.bytes)."},
	{Name: "http.proxy.consumer.max.instances", Type: typeInt, Default: "1000", Check: atLeast(1),
		Doc: "Samsa: the most REST proxy consumer instances the node holds at once; creating one more answers 429."},
	{Name: "http.proxy.max.sessions", Type: typeInt, Default: "100", Check: atLeast(1),
		Doc: "Samsa: with SASL on, the most principals the REST proxy keeps Kafka clients open for; the least recently used is closed first."},
}
