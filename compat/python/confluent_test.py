"""confluent-kafka-python (Debian python3-confluent-kafka, librdkafka) driving
one compat scenario; see common.py and compat/README.md."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import confluent_kafka  # noqa: E402
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic  # noqa: E402

from common import (CODECS, GROUP_FIRST, GROUP_PARTITIONS, GROUP_SECOND, IDEM_RECORDS,  # noqa: E402
                    TXN_RECORDS, Failed, PassWith, Record, check_dense, check_member_records,
                    headers_for, key_for, main, text, ts_base, value_for, verify, wait_for,
                    wait_stable_split)
import secure  # noqa: E402

CLIENT = "confluent-kafka-python"
VERSION = "%s (librdkafka %s)" % (confluent_kafka.version()[0], confluent_kafka.libversion()[0])


def admin(env):
    return AdminClient({"bootstrap.servers": env.bootstrap, "client.id": "compat-confluent"})


def create_topic(env, topic, partitions, config=None):
    a = admin(env)
    fs = a.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1, config=config or {})],
                         request_timeout=20)
    fs[topic].result(timeout=30)
    wait_partitions(env, a, topic, partitions)


def wait_partitions(env, a, topic, n):
    def cond():
        md = a.list_topics(topic=topic, timeout=10)
        t = md.topics.get(topic)
        if t is None:
            return "metadata has no topic %s" % topic
        if t.error is not None:
            return "metadata for %s: %s" % (topic, t.error)
        if len(t.partitions) != n:
            return "metadata shows %d partitions for %s, want %d" % (len(t.partitions), topic, n)
        for p in t.partitions.values():
            if p.error is not None or p.leader not in md.brokers:
                return "partition %d of %s: leader %d, error %s" % (p.id, topic, p.leader, p.error)
        return None
    wait_for(env, 15, cond)


def metadata(env):
    a = admin(env)
    md = a.list_topics(timeout=10)
    addrs = ["%s:%d" % (b.host, b.port) for b in md.brokers.values()]
    if env.bootstrap not in addrs:
        raise Failed("metadata lists brokers %r, none is the bootstrap %s" % (addrs, env.bootstrap))
    if not md.cluster_id:
        raise Failed("metadata has no cluster id")
    topic = env.topic("metadata")
    create_topic(env, topic, 3)
    fs = a.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)], request_timeout=20)
    try:
        fs[topic].result(timeout=30)
    except KafkaException as e:
        if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise Failed("create existing topic: got %s, want TOPIC_ALREADY_EXISTS" % e)
    else:
        raise Failed("creating an existing topic succeeded")


def producer(env, **conf):
    c = {"bootstrap.servers": env.bootstrap, "client.id": "compat-confluent", "linger.ms": 5}
    c.update({k.replace("_", "."): v for k, v in conf.items()})
    return Producer(c)


def produce_range(env, p, topic, lo, hi, base=None):
    """Produces records lo..hi-1; returns (index -> partition, partition ->
    offsets) from the delivery reports."""
    parts, offs, errors = {}, {}, []

    def report(i):
        def cb(err, msg):
            if err is not None:
                errors.append("record %d: %s" % (i, err))
            else:
                parts[i] = msg.partition()
                offs.setdefault(msg.partition(), []).append(msg.offset())
        return cb

    for i in range(lo, hi):
        kw = {"key": key_for(i), "value": value_for(i), "headers": headers_for(env.client, i), "on_delivery": report(i)}
        if base is not None:
            kw["timestamp"] = base + i
        while True:
            try:
                p.produce(topic, **kw)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    left = p.flush(max(1, env.left()))
    if left:
        raise Failed("%d records still unacknowledged at the deadline" % left)
    if errors:
        raise Failed("%d records failed, first: %s" % (len(errors), errors[0]))
    return parts, offs


def consumer(env, group, **conf):
    c = {"bootstrap.servers": env.bootstrap, "client.id": "compat-confluent", "group.id": group,
         "enable.auto.commit": False, "auto.offset.reset": "earliest"}
    c.update({k.replace("_", "."): v for k, v in conf.items()})
    return Consumer(c)


def record_of(m):
    return Record(m.partition(), m.offset(), text(m.key()), text(m.value()),
                  [(k, text(v)) for k, v in (m.headers() or [])], m.timestamp()[1])


def consume_n(env, topic, partitions, n, **conf):
    """Reads topic from the beginning with assign() (no group membership)
    until n records arrived, plus a second's grace for anything extra."""
    c = consumer(env, env.topic("reader"), **conf)
    try:
        c.assign([TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING) for p in range(partitions)])
        got = []
        grace = None
        while True:
            if len(got) >= n:
                grace = grace or time.monotonic() + 1
                if time.monotonic() > grace:
                    return got
            env.check_time("consumed %d of %d records" % (len(got), n))
            for m in c.consume(500, timeout=0.2):
                if m.error():
                    raise Failed("consume: %s" % m.error())
                got.append(record_of(m))
    finally:
        c.close()


def end_offsets(env, topic, partitions):
    c = consumer(env, env.topic("watermarks"))
    try:
        out = {}
        for p in range(partitions):
            lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            out[p] = hi
        return out
    finally:
        c.close()


def produce(env):
    for codec in CODECS:
        topic = env.topic("produce-" + codec)
        create_topic(env, topic, 3)
        all_offs = {}
        for acks, lo in (("all", 0), ("1", env.records)):
            p = producer(env, acks=acks, compression_type=codec)
            _, offs = produce_range(env, p, topic, lo, lo + env.records, ts_base())
            for part, o in offs.items():
                all_offs.setdefault(part, []).extend(o)
        counts = check_dense(all_offs)
        ends = end_offsets(env, topic, 3)
        for part, end in ends.items():
            if end != counts.get(part, 0):
                raise Failed("%s: partition %d end offset %d, %d records acknowledged" % (codec, part, end, counts.get(part, 0)))
        if sum(ends.values()) != 2 * env.records:
            raise Failed("%s: end offsets sum to %d, want %d" % (codec, sum(ends.values()), 2 * env.records))
        env.log("produce %s: %d records, end offsets %r" % (codec, 2 * env.records, ends))


def consume(env):
    topic = env.topic("consume")
    create_topic(env, topic, 3)
    base = ts_base()
    chunk = env.records // len(CODECS)
    parts = {}
    for c, codec in enumerate(CODECS):
        hi = env.records if c == len(CODECS) - 1 else (c + 1) * chunk
        p = producer(env, acks="all", compression_type=codec)
        got_parts, _ = produce_range(env, p, topic, c * chunk, hi, base)
        parts.update(got_parts)
    got = consume_n(env, topic, 3, env.records)
    verify(got, list(range(env.records)), want_headers=lambda i: headers_for(env.client, i),
           want_ts=lambda i: base + i, partitions=parts)


class Member:
    def __init__(self, env, topic, group):
        self.held = set()
        self.got = []
        self.c = consumer(env, group, session_timeout_ms=10000, heartbeat_interval_ms=500)
        self.c.subscribe([topic], on_assign=self.on_assign, on_revoke=self.on_revoke)

    def on_assign(self, c, parts):
        self.held |= {p.partition for p in parts}

    def on_revoke(self, c, parts):
        self.held -= {p.partition for p in parts}

    def poll(self):
        for m in self.c.consume(500, timeout=0.05):
            if m.error():
                raise Failed("consume: %s" % m.error())
            self.got.append(record_of(m))


def groups(env):
    topic, group = env.topic("groups"), env.topic("group")
    create_topic(env, topic, GROUP_PARTITIONS)
    a, b = Member(env, topic, group), Member(env, topic, group)

    def poll_both():
        a.poll()
        b.poll()
    pa, pb = wait_stable_split(env, lambda: a.held, lambda: b.held, poll_both)
    env.log("members hold %r and %r" % (pa, pb))
    produce_range(env, producer(env, acks="all"), topic, 0, GROUP_FIRST)

    def consumed():
        poll_both()
        n = len(a.got) + len(b.got)
        return None if n >= GROUP_FIRST else "members consumed %d of %d records" % (n, GROUP_FIRST)
    wait_for(env, 30, consumed)
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        poll_both()
    check_member_records(a.got, set(pa), b.got, set(pb), 0, GROUP_FIRST)
    for m in (a, b):
        m.c.commit(asynchronous=False)
    committed = a.c.committed([TopicPartition(topic, p) for p in range(GROUP_PARTITIONS)], timeout=10)
    total = sum(tp.offset for tp in committed if tp.offset >= 0)
    if total != GROUP_FIRST:
        raise Failed("committed offsets sum to %d, want %d" % (total, GROUP_FIRST))
    a.c.close()
    b.c.close()
    produce_range(env, producer(env, acks="all"), topic, GROUP_FIRST, GROUP_FIRST + GROUP_SECOND)
    c = Member(env, topic, group)

    def resumed():
        c.poll()
        return None if len(c.got) >= GROUP_SECOND else "restarted member consumed %d of %d new records" % (len(c.got), GROUP_SECOND)
    wait_for(env, 30, resumed)
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        c.poll()
    c.c.close()
    try:
        verify(c.got, list(range(GROUP_FIRST, GROUP_FIRST + GROUP_SECOND)))
    except Failed as e:
        raise Failed("after restart (should resume at the committed offsets): %s" % e)


def transactions(env):
    topic = env.topic("idempotent")
    create_topic(env, topic, 3)
    parts, _ = produce_range(env, producer(env, enable_idempotence=True, acks="all"), topic, 0, IDEM_RECORDS)
    try:
        verify(consume_n(env, topic, 3, IDEM_RECORDS), list(range(IDEM_RECORDS)), partitions=parts)
    except Failed as e:
        raise Failed("idempotent: %s" % e)

    topic = env.topic("txn")
    create_topic(env, topic, 3)
    tp = producer(env, transactional_id=env.topic("txid"), transaction_timeout_ms=60000)
    tp.init_transactions(30)
    A, B, C = 0, TXN_RECORDS, 2 * TXN_RECORDS
    for lo, commit in ((A, True), (B, False)):
        tp.begin_transaction()
        produce_range(env, tp, topic, lo, lo + TXN_RECORDS)
        if commit:
            tp.commit_transaction(30)
        else:
            tp.abort_transaction(30)
    tp.begin_transaction()
    produce_range(env, tp, topic, C, C + TXN_RECORDS)
    rc = {"isolation_level": "read_committed"}
    try:
        verify(consume_n(env, topic, 3, TXN_RECORDS, **rc), list(range(A, A + TXN_RECORDS)))
    except Failed as e:
        raise Failed("read_committed while a transaction is open (want only the committed one): %s" % e)
    tp.commit_transaction(30)
    try:
        verify(consume_n(env, topic, 3, 2 * TXN_RECORDS, **rc),
               list(range(A, A + TXN_RECORDS)) + list(range(C, C + TXN_RECORDS)))
    except Failed as e:
        raise Failed("read_committed (want the two committed transactions): %s" % e)
    try:
        verify(consume_n(env, topic, 3, 3 * TXN_RECORDS, isolation_level="read_uncommitted"),
               list(range(3 * TXN_RECORDS)))
    except Failed as e:
        raise Failed("read_uncommitted (want all three transactions): %s" % e)


def describe(a, resource):
    fs = a.describe_configs([resource], request_timeout=20)
    entries = list(fs.values())[0].result(timeout=30)
    return {name: e.value for name, e in entries.items()}


def admin_scenario(env):
    a = admin(env)
    topic = env.topic("admin")
    create_topic(env, topic, 2, {"retention.ms": "3600000"})
    cfg = describe(a, ConfigResource(ConfigResource.Type.TOPIC, topic))
    if cfg.get("retention.ms") != "3600000":
        raise Failed("describe configs: retention.ms = %r, want the 3600000 set at creation" % cfg.get("retention.ms"))
    if cfg.get("cleanup.policy") != "delete":
        raise Failed("describe configs: cleanup.policy = %r, want the default delete" % cfg.get("cleanup.policy"))
    broker = sorted(a.list_topics(timeout=10).brokers)[0]
    bcfg = describe(a, ConfigResource(ConfigResource.Type.BROKER, str(broker)))
    if bcfg.get("auto.create.topics.enable") != "false":
        raise Failed("describe broker configs: auto.create.topics.enable = %r, want false" % bcfg.get("auto.create.topics.enable"))
    a.create_partitions([NewPartitions(topic, 4)], request_timeout=20)[topic].result(timeout=30)
    wait_partitions(env, a, topic, 4)
    a.delete_topics([topic], request_timeout=20)[topic].result(timeout=30)

    def gone():
        t = a.list_topics(timeout=10).topics
        return "deleted topic still listed" if topic in t else None
    wait_for(env, 15, gone)


def errors(env):
    topic = env.topic("missing")
    # librdkafka waits topic.metadata.propagation.max.ms (30 s by default)
    # before it believes a topic is missing; 5 s keeps the suite short.
    p = producer(env, topic_metadata_propagation_max_ms=5000, message_timeout_ms=60000)
    got = []
    start = time.monotonic()
    try:
        p.produce(topic, value=b"x", on_delivery=lambda err, msg: got.append(err))
    except KafkaException as e:
        got.append(e.args[0])
    p.flush(max(1, env.left()))
    took = time.monotonic() - start
    if not got:
        raise Failed("no delivery report after %.1fs" % took)
    err = got[0]
    if err is None:
        raise Failed("produce to a topic that does not exist succeeded")
    if err.code() not in (KafkaError._UNKNOWN_TOPIC, KafkaError.UNKNOWN_TOPIC_OR_PART):
        raise Failed("after %.1fs: got %s, want an unknown topic error" % (took, err))
    if topic in admin(env).list_topics(timeout=10).topics:
        raise Failed("topic %s exists after the failed produce: the broker auto-created it" % topic)
    raise PassWith("%s after %.1fs" % (err, took))


# The security scenarios (secure.py): librdkafka's security.protocol, sasl.*
# and ssl.* properties, with its built-in unsecured OAUTHBEARER tokens.
def secure_conf(s):
    conf = {"bootstrap.servers": s.bootstrap, "security.protocol": s.protocol, "client.id": "compat-confluent"}
    if s.tls():
        conf["ssl.ca.location"] = s.ca
    if s.mechanism is None:
        conf.update({"ssl.certificate.location": s.cert, "ssl.key.location": s.key})
    elif s.mechanism == "OAUTHBEARER":
        conf.update({"sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
                     "sasl.oauthbearer.config": "principal=" + s.user})
    else:
        conf.update({"sasl.mechanism": s.mechanism, "sasl.username": s.user, "sasl.password": s.password})
    return conf


def secure_produce(env, s, topic, values):
    p = Producer(dict(secure_conf(s), acks="all"))
    reports = []
    for v in values:
        p.produce(topic, value=v.encode(), partition=0, on_delivery=lambda err, msg: reports.append(err))
    p.flush(max(1, env.left()))
    errs = [e for e in reports if e is not None]
    if len(reports) != len(values) or errs:
        raise Failed("%d of %d delivered; errors: %s" % (len(reports) - len(errs), len(values), errs[:3]))


def secure_consume(env, s, topic, n):
    c = Consumer(dict(secure_conf(s), **{"group.id": env.topic("secure-reader"), "enable.auto.commit": False}))
    c.assign([TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
    got = []
    try:
        while len(got) < n and env.left() > 0:
            m = c.poll(1.0)
            if m is None:
                continue
            if m.error():
                raise Failed("consume: %s" % m.error())
            got.append(m.value().decode())
    finally:
        c.close()
    return got


def secure_refused(env, s, topic):
    errors = []
    p = Producer(dict(secure_conf(s), error_cb=lambda e: errors.append(e)))
    try:
        p.list_topics(timeout=10)
    except KafkaException as e:
        # The reason reaches error_cb, which only poll serves.
        p.poll(1)
        reasons = [err for err in errors if secure.AUTH_ERROR.search(str(err))]
        return reasons[0] if reasons else e
    return None


def secure_skip(scenario):
    if scenario == "scram-ssl" and confluent_kafka.libversion()[1] < 0x020601ff:
        return ("librdkafka %s: librdkafka before 2.6.1 repeats its client nonce in the SCRAM client-final-message "
                "(confluentinc/librdkafka#4895), which Kafka 4.x refuses too" % confluent_kafka.libversion()[0])
    return None


if __name__ == "__main__":
    main(CLIENT, VERSION, {
        "metadata": metadata,
        "produce": produce,
        "consume": consume,
        "groups": groups,
        "transactions": transactions,
        "admin": admin_scenario,
        "errors": errors,
        **secure.scenarios(secure_produce, secure_consume, secure_refused, secure_skip),
    })
