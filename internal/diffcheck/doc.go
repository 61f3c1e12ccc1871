// Package diffcheck is the API differential against Apache Kafka: it sends
// the same sequence of requests, built with kmsg at one pinned version
// each, to a real Kafka node and to a Samsa node, decodes both answers and
// compares them field by field, and renders the outcome as the table in
// docs/compatibility.md ("API differential against Apache Kafka").
//
// Requests go over a plain connection of this package's own, not a
// client, so each is sent at exactly the version asked for and nothing is
// retried or rewritten. A response frame is
//
//	int32 size | int32 correlation id | [tagged fields, flexible versions
//	except ApiVersions] | body (kmsg's encoding of the response version)
//
// Comparison (Compare) walks both decoded kmsg structs with reflection:
// error codes and every other scalar must be equal, slices must have the
// same length, and pointers the same nullness, except for the fields
// allowListed names, which must differ between any two clusters (node
// ids, cluster and topic ids, hosts, ports, timestamps, throttle times,
// generated member ids, error message texts).
//
// The test TestDifferential (run with SAMSA_DIFFCHECK=1, or
// SAMSA_DIFFCHECK=short for the oldest and newest common version of each
// API only) starts both nodes, runs every case and, with
// SAMSA_DIFFCHECK_WRITE=1, rewrites the table.
package diffcheck
