"""Drives Samsa's REST proxy with Python's requests, as a service would:
v2 metadata, JSON and binary produce, a consumer instance that subscribes,
reads, commits and is deleted; v3 clusters, topic creation, a record and
the consumer group's lag. Usage: httpproxy_requests.py PROXY_URL TOPIC
Prints "ok <step>" per step; exits non-zero on any failure."""

import base64
import sys
import time

import requests

base, topic = sys.argv[1], sys.argv[2]
V2 = "application/vnd.kafka.v2+json"


def expect(response, status, step):
    if response.status_code != status:
        sys.exit(f"{step}: {response.status_code} {response.text}")
    print("ok", step)
    return response.json() if response.content else None


expect(requests.get(f"{base}/topics"), 200, "topics")
expect(requests.get(f"{base}/topics/{topic}"), 200, "topic")
expect(requests.get(f"{base}/brokers"), 200, "brokers")
answer = expect(requests.post(f"{base}/topics/{topic}", headers={"Content-Type": "application/vnd.kafka.json.v2+json"},
                              json={"records": [{"key": "py-1", "value": {"from": "python", "n": 1}}]}), 200, "produce json")
assert answer["offsets"][0]["error_code"] is None, answer
binary = base64.b64encode(b"python bytes").decode()
expect(requests.post(f"{base}/topics/{topic}/partitions/0", headers={"Content-Type": "application/vnd.kafka.binary.v2+json"},
                     json={"records": [{"key": base64.b64encode(b"py-2").decode(), "value": binary}]}), 200, "produce binary")

created = expect(requests.post(f"{base}/consumers/py-group", headers={"Content-Type": V2},
                               json={"name": "py", "format": "binary", "auto.offset.reset": "earliest", "auto.commit.enable": "false"}),
                 200, "create consumer")
instance = created["base_uri"]
expect(requests.post(f"{instance}/subscription", headers={"Content-Type": V2}, json={"topics": [topic]}), 204, "subscribe")
records, deadline = [], time.time() + 30
while len(records) < 2:
    if time.time() > deadline:
        sys.exit(f"read {len(records)} records")
    response = requests.get(f"{instance}/records", params={"timeout": 500}, headers={"Accept": "application/vnd.kafka.binary.v2+json"})
    if response.status_code != 200:
        sys.exit(f"records: {response.status_code} {response.text}")
    records += response.json()
values = sorted(base64.b64decode(r["value"]) for r in records)
assert values == [b"python bytes", b'{"from":"python","n":1}'], values
print("ok records")
expect(requests.post(f"{instance}/offsets", headers={"Content-Type": V2}), 200, "commit")
expect(requests.delete(instance, headers={"Content-Type": V2}), 204, "delete consumer")

clusters = expect(requests.get(f"{base}/v3/clusters"), 200, "clusters")
cluster = f"{base}/v3/clusters/{clusters['data'][0]['cluster_id']}"
expect(requests.post(f"{cluster}/topics", json={"topic_name": topic + "-v3", "partitions_count": 1}), 201, "create topic")
answer = expect(requests.post(f"{cluster}/topics/{topic}/records", json={"key": {"type": "STRING", "data": "py-3"}, "value": {"type": "JSON", "data": {"v3": True}}}),
                200, "produce v3")
assert answer["error_code"] == 200, answer
lag = expect(requests.get(f"{cluster}/consumer-groups/py-group/lag-summary"), 200, "lag summary")
assert lag["total_lag"] == 1, lag
