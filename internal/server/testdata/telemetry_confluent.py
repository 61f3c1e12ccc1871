"""Produces with confluent-kafka-python (librdkafka >= 2.5 pushes client
metrics, KIP-714) until stdin closes, so the broker sees its telemetry.

    python3 telemetry_confluent.py BOOTSTRAP TOPIC CLIENT_ID
"""
import sys
import threading

import confluent_kafka

bootstrap, topic, client_id = sys.argv[1:4]
major, minor = (int(x) for x in confluent_kafka.libversion()[0].split(".")[:2])
if (major, minor) < (2, 5):
    print("skip librdkafka %s has no KIP-714 telemetry" % confluent_kafka.libversion()[0], flush=True)
    sys.exit(0)

done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "client.id": client_id, "enable.metrics.push": True})
print("producing with librdkafka %s" % confluent_kafka.libversion()[0], flush=True)
i = 0
while not done.wait(0.05):
    p.produce(topic, value=b"telemetry-%d" % i)
    p.poll(0)
    i += 1
p.flush(10)
print("ok produced %d" % i, flush=True)
