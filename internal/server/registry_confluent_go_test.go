package server

import (
	"context"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/jsonschema"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// registryOrder is the value the Avro and JSON Schema serde write: the
// serializers derive each schema from the Go type and register it.
type registryOrder struct {
	ID       int64   `avro:"id" json:"id"`
	Customer string  `avro:"customer" json:"customer"`
	Total    float64 `avro:"total" json:"total"`
}

const registryOrderProto = `syntax = "proto3";
package shop;

message Order {
  int64 id = 1;
  string customer = 2;
  double total = 3;
}
`

// TestRegistryConfluentGoSerde runs confluent-kafka-go's schemaregistry
// client and its Avro (avrov2), JSON Schema and Protobuf serde against a
// real node: each serializer registers its schema on first use and frames
// the value with the id Samsa's registry gave it, franz-go produces and
// consumes the bytes through the node, and the matching deserializer,
// looking the id up again, gives back the value.
func TestRegistryConfluentGoSerde(t *testing.T) {
	tn := startTestNode(t, "schema.registry.listeners=http://127.0.0.1:0")
	client, err := schemaregistry.NewClient(schemaregistry.NewConfig(registryURL(tn)))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	producer := tn.client()
	adm := tn.admin()
	for _, topic := range []string{"orders-avro", "orders-json", "orders-proto"} {
		mustCreateTopic(t, adm, topic, 1, nil)
	}
	order := registryOrder{ID: 42, Customer: "alice", Total: 12.5}

	// roundTrip produces payload to topic, consumes it back and checks that
	// it is the framed value: magic byte 0, then the id Samsa registered
	// for the topic's value subject.
	roundTrip := func(t *testing.T, topic string, payload []byte) []byte {
		t.Helper()
		if err := producer.ProduceSync(testContext(t), &kgo.Record{Topic: topic, Value: payload}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		got := consumeAll(t, tn, topic, 1)[0].Value
		meta, err := client.GetLatestSchemaMetadata(topic + "-value")
		if err != nil {
			t.Fatalf("latest %s-value: %v", topic, err)
		}
		if len(got) < 5 || got[0] != 0 || int(got[1])<<24|int(got[2])<<16|int(got[3])<<8|int(got[4]) != meta.ID {
			t.Fatalf("record value % x does not start with magic 0 and id %d", got[:min(len(got), 5)], meta.ID)
		}
		return got
	}

	t.Run("avro", func(t *testing.T) {
		ser, err := avrov2.NewSerializer(client, serde.ValueSerde, avrov2.NewSerializerConfig())
		if err != nil {
			t.Fatal(err)
		}
		payload, err := ser.Serialize("orders-avro", &order)
		if err != nil {
			t.Fatalf("serialize: %v", err)
		}
		got := roundTrip(t, "orders-avro", payload)
		deser, err := avrov2.NewDeserializer(client, serde.ValueSerde, avrov2.NewDeserializerConfig())
		if err != nil {
			t.Fatal(err)
		}
		var back registryOrder
		if err := deser.DeserializeInto("orders-avro", got, &back); err != nil {
			t.Fatalf("deserialize: %v", err)
		}
		if back != order {
			t.Fatalf("got %+v, want %+v", back, order)
		}
	})

	t.Run("json", func(t *testing.T) {
		conf := jsonschema.NewSerializerConfig()
		conf.EnableValidation = true
		ser, err := jsonschema.NewSerializer(client, serde.ValueSerde, conf)
		if err != nil {
			t.Fatal(err)
		}
		payload, err := ser.Serialize("orders-json", &order)
		if err != nil {
			t.Fatalf("serialize: %v", err)
		}
		got := roundTrip(t, "orders-json", payload)
		// The serializer validated the value against the schema it
		// registered; the deserializer's validation takes only generic
		// JSON values, not a struct to decode into.
		deser, err := jsonschema.NewDeserializer(client, serde.ValueSerde, jsonschema.NewDeserializerConfig())
		if err != nil {
			t.Fatal(err)
		}
		var back registryOrder
		if err := deser.DeserializeInto("orders-json", got, &back); err != nil {
			t.Fatalf("deserialize: %v", err)
		}
		if back != order {
			t.Fatalf("got %+v, want %+v", back, order)
		}
		schema, err := client.GetLatestSchemaMetadata("orders-json-value")
		if err != nil || schema.SchemaType != "JSON" {
			t.Fatalf("orders-json-value: type %q, %v", schema.SchemaType, err)
		}
	})

	t.Run("protobuf", func(t *testing.T) {
		md := compileOrderProto(t)
		msg := dynamicpb.NewMessage(md)
		msg.Set(md.Fields().ByName("id"), protoreflect.ValueOfInt64(order.ID))
		msg.Set(md.Fields().ByName("customer"), protoreflect.ValueOfString(order.Customer))
		msg.Set(md.Fields().ByName("total"), protoreflect.ValueOfFloat64(order.Total))
		ser, err := protobuf.NewSerializer(client, serde.ValueSerde, protobuf.NewSerializerConfig())
		if err != nil {
			t.Fatal(err)
		}
		payload, err := ser.Serialize("orders-proto", msg)
		if err != nil {
			t.Fatalf("serialize: %v", err)
		}
		got := roundTrip(t, "orders-proto", payload)
		deser, err := protobuf.NewDeserializer(client, serde.ValueSerde, protobuf.NewDeserializerConfig())
		if err != nil {
			t.Fatal(err)
		}
		if err := deser.ProtoRegistry.RegisterMessage(dynamicpb.NewMessageType(md)); err != nil {
			t.Fatal(err)
		}
		back, err := deser.Deserialize("orders-proto", got)
		if err != nil {
			t.Fatalf("deserialize: %v", err)
		}
		if !proto.Equal(back.(proto.Message), msg) {
			t.Fatalf("got %v, want %v", back, msg)
		}
		schema, err := client.GetLatestSchemaMetadata("orders-proto-value")
		if err != nil || schema.SchemaType != "PROTOBUF" {
			t.Fatalf("orders-proto-value: type %q, %v", schema.SchemaType, err)
		}
	})
}

// compileOrderProto compiles registryOrderProto and returns shop.Order.
func compileOrderProto(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	compiler := protocompile.Compiler{Resolver: &protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"shop/order.proto": registryOrderProto}),
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	files, err := compiler.Compile(ctx, "shop/order.proto")
	if err != nil {
		t.Fatal(err)
	}
	return files[0].Messages().ByName("Order")
}
