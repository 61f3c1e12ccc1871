// Package interop checks package record against real Kafka clients: franz-go
// (kgo) and sarama produce to kfake, franz-go's in-process fake broker on the
// loopback interface, and the tests capture the record bytes of every produce
// request. Each batch must validate as Kafka would accept it and read back as
// what was produced.
//
// The tests live apart from package record so that its fuzz targets are not
// slowed by coverage instrumentation of these clients.
package interop
