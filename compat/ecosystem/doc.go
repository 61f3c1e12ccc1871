// Package ecosystem runs Kafka's own frameworks against real samsa nodes:
// a Kafka Streams 4.4 word count with exactly_once_v2, a state store with
// its changelog, a repartition topic and a standby replica, run as two
// instances while one instance and one samsa node are killed and
// restarted; the final counts must equal a count computed from the input.
// And Kafka Connect 4.4 in distributed mode: two workers with exactly-once
// source support run a file source and a file sink connector that move
// 100,000 lines file → topic → files while the sink is paused and resumed,
// the source restarted through the REST API and one worker SIGKILLed; every
// line must arrive exactly once, in the topic and in the files.
//
// The applications (compat/java: samsa.compat.WordCount, and the
// connectors in samsa.compat.connect, written against connect-api) are
// built by Maven with the compat driver. The tests run only with SAMSA_ECOSYSTEM=1, which
// `make ecosystem` sets:
//
//	SAMSA_ECOSYSTEM=1 go test -count=1 ./compat/ecosystem/
package ecosystem
