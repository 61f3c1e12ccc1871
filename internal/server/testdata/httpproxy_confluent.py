"""confluent-kafka-python against Samsa's REST proxy: reads with its
AvroDeserializer and JSONDeserializer the records the REST proxy produced
(through the schema registry), and produces one Avro record with its
AvroSerializer for the proxy to read back.
Usage: httpproxy_confluent.py BOOTSTRAP REGISTRY_URL AVRO_TOPIC JSON_TOPIC PRODUCE_TOPIC
Prints each record read as "avro <json>" / "json <json>", then "ok read"
and "ok produced"; exits non-zero on any failure."""

import json
import sys
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

bootstrap, registry_url, avro_topic, json_topic, produce_topic = sys.argv[1:6]
registry = SchemaRegistryClient({"url": registry_url})


def read(topic, deserializer, want):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "py-" + topic,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    values, deadline = [], time.time() + 60
    while len(values) < want:
        if time.time() > deadline:
            sys.exit(f"read {len(values)} of {want} records of {topic}")
        message = consumer.poll(1.0)
        if message is None:
            continue
        if message.error():
            sys.exit(f"consume {topic}: {message.error()}")
        values.append(deserializer(message.value(), SerializationContext(topic, MessageField.VALUE)))
    consumer.close()
    return values


# The JSON Schema deserializer takes the schema the proxy registered.
json_schema = registry.get_latest_version(json_topic + "-value").schema.schema_str
for value in read(avro_topic, AvroDeserializer(registry), 2):
    print("avro", json.dumps(value, sort_keys=True))
for value in read(json_topic, JSONDeserializer(json_schema), 1):
    print("json", json.dumps(value, sort_keys=True))
print("ok read")

schema = '{"type":"record","name":"FromPython","namespace":"py","fields":[{"name":"word","type":"string"},{"name":"count","type":"long"}]}'
serializer = AvroSerializer(registry, schema)
producer = Producer({"bootstrap.servers": bootstrap})
producer.produce(produce_topic, serializer({"word": "python", "count": 7}, SerializationContext(produce_topic, MessageField.VALUE)))
if producer.flush(30) != 0:
    sys.exit("produce did not complete")
print("ok produced")
