package config

// consoleBrokerKeys are the keys of the web console served by the node.
var consoleBrokerKeys = []Key{
	{Name: "console.listener", Type: typeList, Default: "",
		Doc: "Samsa: comma-separated http://host:port listeners of the web console; empty disables it. samsa server with no configuration serves http://127.0.0.1:8080."},
	{Name: "console.read.only", Type: typeBoolean, Default: "false",
		Doc: "Samsa: when true the console shows the cluster but refuses every change (creating or deleting topics, configs, offset resets, users, ACLs)."},
	{Name: "console.records.max", Type: typeInt, Default: "500", Check: between(1, 10000),
		Doc: "Samsa: the most records one page of the console's records browser shows."},
	{Name: "console.records.max.bytes", Type: typeInt, Default: "4194304", Check: atLeast(1024),
		Doc: "Samsa: the most record bytes one records scan of the console reads before it stops and says so."},
	{Name: "console.records.timeout.ms", Type: typeLong, Default: "5000", Check: atLeast(1),
		Doc: "Samsa: the longest one records scan of the console runs before it stops and says so."},
	{Name: "console.tail.max.ms", Type: typeLong, Default: "600000", Check: atLeast(1000),
		Doc: "Samsa: the longest one live tail of the console streams before it ends; the browser can start another."},
	{Name: "console.sessions.max", Type: typeInt, Default: "32", Check: between(1, 10000),
		Doc: "Samsa: the most Kafka clients the console keeps, one per logged-in user; the oldest is closed to make room."},
	{Name: "console.metrics.sample.interval.ms", Type: typeLong, Default: "5000", Check: between(100, 3600000),
		Doc: "Samsa: how often the console samples the node's metrics for its plots; it keeps the last hour."},
}
