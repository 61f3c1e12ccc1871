package config

// protocolBrokerKeys are the broker keys that bound what one request of a
// Kafka API may ask for.
var protocolBrokerKeys = []Key{
	{Name: "max.request.partition.size.limit", Type: typeInt, Default: "2000", Check: atLeast(1),
		Doc:         "The maximum number of partitions that can be served in one request (DescribeTopicPartitions); a request asking for more is answered with a cursor to continue from.",
		brokerField: func(b *Broker) any { return &b.MaxRequestPartitionSizeLimit }},
}
