// Package bench generates Kafka load with franz-go and measures it: produce
// throughput (records/s, MB/s) and acknowledgement latency, consume
// throughput, and end-to-end latency from produce time to consume time.
// It is the engine behind "samsa bench" and the side-by-side comparison in
// bench/; it knows nothing of the broker it drives, so it works against
// Samsa, Apache Kafka or any other Kafka-compatible cluster.
//
// Units: MB is 10^6 bytes. Throughput counts payload bytes (key plus value)
// for produce, end-to-end and client consume, and whole record batches for
// raw fetches, which do not decode records.
//
// End-to-end records carry their send time in the first 8 bytes of the value
// (big-endian Unix nanoseconds), so producer and consumer must run in one
// process, or on hosts with closely synchronised clocks.
package bench
