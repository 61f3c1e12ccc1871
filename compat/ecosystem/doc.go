// Package ecosystem runs Kafka's own frameworks against real samsa nodes:
// a Kafka Streams 4.4 word count with exactly_once_v2, a state store with
// its changelog, a repartition topic and a standby replica, run as two
// instances while one instance and one samsa node are killed and
// restarted; the final counts must equal a count computed from the input.
// The same word count also runs with group.protocol=streams, the broker
// assigning its tasks (KIP-1071 streams groups), while an instance joins
// and leaves.
//
// The application (compat/java, samsa.compat.WordCount) is built by Maven
// with the compat driver. The tests run only with SAMSA_ECOSYSTEM=1, which
// `make ecosystem` sets:
//
//	SAMSA_ECOSYSTEM=1 go test -count=1 ./compat/ecosystem/
package ecosystem
