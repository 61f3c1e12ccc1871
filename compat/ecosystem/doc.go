// Package ecosystem runs Kafka's own frameworks against real samsa nodes:
// a Kafka Streams 4.4 word count with exactly_once_v2, a state store with
// its changelog, a repartition topic and a standby replica, run as two
// instances while one instance and one samsa node are killed and
// restarted; the final counts must equal a count computed from the input.
// And Apache Kafka's KafkaShareConsumer (KIP-932, samsa.compat.ShareQueue)
// on a share group: every record accepted exactly once, a poison record
// archived at the delivery count limit.
//
// The application (compat/java, samsa.compat.WordCount) is built by Maven
// with the compat driver. The tests run only with SAMSA_ECOSYSTEM=1, which
// `make ecosystem` sets:
//
//	SAMSA_ECOSYSTEM=1 go test -count=1 ./compat/ecosystem/
package ecosystem
