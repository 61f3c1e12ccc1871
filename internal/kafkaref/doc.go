// Package kafkaref runs Apache Kafka itself, the behaviour reference, as a
// single-node KRaft cluster (process.roles=broker,controller) started from
// the jars Maven resolves, and runs Kafka's own command-line tools from the
// same jars. The benchmarks use it as a peer and the API differential as
// the node every answer of Samsa's is compared with.
//
// The jars come from bench/kafka/pom.xml: `mvn generate-resources` there
// writes target/classpath.txt, one line of jar paths joined by ':'.
// Classpath runs Maven when that file is missing or older than the pom.
//
// A node's directory holds what the start scripts of a Kafka distribution
// would have made:
//
//	<dir>/server.properties   generated: Kafka's defaults, with the overrides
//	                          of Kafka's own single-node config/server.properties
//	                          (replication factors of 1, no initial rebalance
//	                          delay) and listeners on free loopback ports
//	<dir>/data/               log.dirs, formatted by kafka.tools.StorageTool
//	                          (`kafka-storage format`) before the first start
//
// The JVM is started as kafka-server-start.sh starts it: a 1 GiB heap
// (-Xmx1G -Xms1G) and kafka-run-class.sh's G1 options. Logging stays at
// Log4j 2's built-in default (errors to the console), which this package
// keeps the last 64 KiB of for error messages.
package kafkaref
