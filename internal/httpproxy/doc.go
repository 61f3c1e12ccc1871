// Package httpproxy is a REST proxy compatible with Confluent REST Proxy's
// v2 and v3 APIs, on franz-go clients inside the node. It imports only the
// shared HTTP layer (internal/httpserve); the node hands it the Kafka and
// schema registry addresses and, with SASL on, how to log in as the
// principal of each request.
//
// Routes (v2 answers application/vnd.kafka.v2+json, v3 application/json):
//
//	v2  GET  /topics, /topics/{t}, /topics/{t}/partitions[/{p}[/offsets]], /brokers
//	    POST /topics/{t}, /topics/{t}/partitions/{p}         produce, body type
//	         application/vnd.kafka.{binary,json,avro,jsonschema,protobuf}.v2+json
//	    POST /consumers/{g}                                   create an instance
//	    DELETE /consumers/{g}/instances/{i}
//	    POST|GET|DELETE .../subscription, POST|GET .../assignments,
//	    POST|GET .../offsets, POST .../positions[/beginning|/end],
//	    GET .../records?timeout=&max_bytes=                   Accept names the format
//	v3  GET /v3/clusters[/{c}], /v3/clusters/{c}/brokers[/{b}]
//	    GET|POST /v3/clusters/{c}/topics, GET|DELETE .../topics/{t}
//	    GET .../topics/{t}/partitions[/{p}]
//	    GET .../topics/{t}/configs[/{name}], PUT|DELETE .../configs/{name},
//	    POST .../configs:alter
//	    POST .../topics/{t}/records                           one record or a stream
//	    GET .../consumer-groups[/{g}[/consumers|/lags|/lag-summary]]
//	    GET|POST|DELETE .../acls
//
// Schema formats use the registry's wire format, drawn in schemas.go: a
// zero magic byte, the 4-byte big-endian schema id, for protobuf the
// message index path, then the Avro binary, JSON text or protobuf payload.
// Schemas in a produce request are registered under the TopicNameStrategy
// subject (<topic>-key, <topic>-value), as Confluent's proxy does.
//
// Identity: every request runs as an Identity the node computes. Its
// session (a producer client, an admin client over it, a registry client
// and a parsed-schema cache) is shared by the identity's requests, and a
// consumer instance answers only the identity that created it, so the
// broker authorizes each Kafka request as the HTTP caller's principal.
//
// Bounds, each with its key (Confluent's name after the http.proxy. prefix):
//
//	request body            http.proxy.max.request.bytes (64 MiB), also a v3 stream's total
//	records per v2 produce  maxProduceRecords (100000)
//	v3 stream in flight     maxInFlightV3 (1000 records)
//	consumer instances      http.proxy.consumer.max.instances (1000), 429 past it
//	idle instance expiry    http.proxy.consumer.instance.timeout.ms (300000)
//	records wait            http.proxy.consumer.request.timeout.ms (1000)
//	records answer bytes    http.proxy.consumer.request.max.bytes (64 MiB), also the
//	                        instance's fetch buffer
//	sessions                http.proxy.max.sessions (100), least recently used closed
//	parsed schemas          maxCachedSchemas (1000) per session
//
// Errors are Confluent's body {"error_code": n, "message": "..."}: 40401
// topic, 40402 partition, 40403 consumer instance not found, 40601 format
// mismatch, 40901-40903 consumer state conflicts, 42201/42202 key/value
// schema missing, 42203 data the schema does not admit, 42204 invalid
// consumer config, 42205 invalid schema, 400 malformed JSON, 413 body too
// large, 415 body type, 406 Accept, 40301 not authorized, 50002/50003 Kafka
// errors (retriable for 50003).
package httpproxy
