"""confluent-kafka-python's SchemaRegistryClient and its Avro, JSON Schema
and Protobuf serializers against a Samsa node: each produces a record through
Samsa with its serializer (registering the schema) and a consumer reads it
back and deserializes it. Usage: registry_confluent.py BOOTSTRAP REGISTRY_URL [FORMATS [USER:PASSWORD]],
FORMATS a comma-separated subset of avro,json,protobuf (Debian's package has
no fastavro, so its run leaves Avro out); USER:PASSWORD, when given, is sent
as HTTP basic auth (basic.auth.user.info).
Prints one "ok <format>" line per format; exits non-zero on any failure."""

import sys
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

bootstrap, registry_url = sys.argv[1], sys.argv[2]
wanted = sys.argv[3].split(",") if len(sys.argv) > 3 else ["avro", "json", "protobuf"]
registry_config = {"url": registry_url}
if len(sys.argv) > 4:
    registry_config["basic.auth.user.info"] = sys.argv[4]
registry = SchemaRegistryClient(registry_config)

AVRO = '{"type":"record","name":"Reading","namespace":"py","fields":[{"name":"sensor","type":"string"},{"name":"value","type":"double"}]}'
JSON = '{"type":"object","title":"Reading","properties":{"sensor":{"type":"string"},"value":{"type":"number"}},"required":["sensor"]}'


def protobuf_class():
    """A message class built from a FileDescriptorProto, as protoc would."""
    file_proto = descriptor_pb2.FileDescriptorProto(name="py_reading.proto", package="py", syntax="proto3")
    message = file_proto.message_type.add(name="Reading")
    message.field.add(name="sensor", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    message.field.add(name="value", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    descriptor = pool.FindMessageTypeByName("py.Reading")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # protobuf < 4.21


Reading = protobuf_class()

# 1.7 (Debian) predates use.deprecated.format; 1.8 to 2.x want it set.
from confluent_kafka import version as client_version
protobuf_conf = {} if client_version()[0] < "1.8" else {"use.deprecated.format": False}
formats = {}
if "avro" in wanted:
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    formats["avro"] = (AvroSerializer(registry, AVRO), AvroDeserializer(registry, AVRO),
                       {"sensor": "s-avro", "value": 1.5})
formats.update({
    "json": (JSONSerializer(JSON, registry), JSONDeserializer(JSON),
             {"sensor": "s-json", "value": 2.5}),
    "protobuf": (ProtobufSerializer(Reading, registry, dict(protobuf_conf)),
                 ProtobufDeserializer(Reading, dict(protobuf_conf)) if protobuf_conf else ProtobufDeserializer(Reading),
                 Reading(sensor="s-protobuf", value=3.5)),
})
formats = {name: formats[name] for name in wanted}

admin = AdminClient({"bootstrap.servers": bootstrap})
futures = admin.create_topics([NewTopic("py-" + name, 1, 1) for name in formats])
for future in futures.values():
    future.result(30)

for name, (serializer, deserializer, value) in formats.items():
    topic = "py-" + name
    producer = Producer({"bootstrap.servers": bootstrap})
    payload = serializer(value, SerializationContext(topic, MessageField.VALUE))
    producer.produce(topic, value=payload)
    if producer.flush(30) != 0:
        sys.exit(f"{name}: produce did not complete")

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "py-" + name,
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    deadline = time.monotonic() + 30
    message = None
    while message is None and time.monotonic() < deadline:
        candidate = consumer.poll(1.0)
        if candidate is not None and candidate.error() is None:
            message = candidate
    consumer.close()
    if message is None:
        sys.exit(f"{name}: nothing consumed")
    decoded = deserializer(message.value(), SerializationContext(topic, MessageField.VALUE))
    if name == "protobuf":
        decoded = {"sensor": decoded.sensor, "value": decoded.value}
        value = {"sensor": value.sensor, "value": value.value}
    if decoded != value:
        sys.exit(f"{name}: decoded {decoded!r}, want {value!r}")
    registered = registry.get_latest_version(topic + "-value")
    print(f"ok {name} id={registered.schema_id} type={registered.schema.schema_type}")

# The client's own calls beyond the serializers.
subjects = registry.get_subjects()
if sorted(subjects) != sorted("py-" + name + "-value" for name in formats):
    sys.exit(f"subjects {subjects}")
if not registry.test_compatibility("py-json-value", Schema(JSON, "JSON")):
    sys.exit("the registered JSON schema is not compatible with itself")
registry.set_compatibility("py-json-value", "FULL")
if registry.get_compatibility("py-json-value") != "FULL":
    sys.exit("compatibility level not set")
print("ok client")
