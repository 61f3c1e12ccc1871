// Package quota decides client quotas as Apache Kafka does: which quota
// applies to a request (entity resolution), how fast a client is going (rates
// over sampled windows), and how long it must wait when it goes too fast
// (throttle time). It is pure and deterministic: time enters as milliseconds
// in every call, nothing here starts a goroutine, reads a clock or touches a
// socket. The network layer mutes a throttled connection and the api layer
// writes throttle_time_ms; both only carry out what this package decides.
//
// # Entities
//
// A quota entity names one or more of a user (the authenticated principal's
// name, "ANONYMOUS" on unauthenticated listeners), a client id and an IP,
// each either by name or as the default of its type. A request's user and
// client-id quotas are looked up in Kafka's order, and the first entity in
// it that has a quota of the kind asked for applies:
//
//	user=<user>,    client-id=<client-id>
//	user=<user>,    client-id=<default>
//	user=<user>
//	user=<default>, client-id=<client-id>
//	user=<default>, client-id=<default>
//	user=<default>
//	client-id=<client-id>
//	client-id=<default>
//
// The entity that applies also decides who shares the measured rate: a quota
// set for user=alice is shared by all of alice's client ids, a default
// client-id quota is measured for each client id apart. Clients with no
// quota share one unlimited bucket, as in Kafka.
//
// IP entities carry connection_creation_rate only (KIP-612) and are looked up
// as ip=<ip>, then ip=<default>.
//
// # Measurement
//
// A Rate is Kafka's SampledStat/Rate: quota.window.num samples, each
// quota.window.size.seconds long. The rate is the sum of the retained
// samples divided by the time they span, where a young stat is assumed to
// span at least quota.window.num - 1 whole windows so its first requests do
// not read as a burst. A client whose rate, including the request just
// recorded, exceeds its bound Q is throttled for
//
//	throttleMs = round((rate - Q) / Q * windowMs)
//
// where windowMs is the span the rate was measured over: the time, with no
// more traffic, until the average falls back to Q (KIP-219). Request time
// quotas bound that by one window; the controller mutation quota (KIP-599)
// is a token bucket whose throttle time is the time to refill to zero.
package quota
