"""kafka-python (Debian python3-kafka, pure Python) driving one compat
scenario; see common.py and compat/README.md. Its compression codecs come
from Debian's python3-snappy, python3-lz4 and python3-zstandard."""

import logging
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kafka  # noqa: E402
import kafka.errors as Errors  # noqa: E402
from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import (ConfigResource, ConfigResourceType, KafkaAdminClient,  # noqa: E402
                         NewPartitions, NewTopic)
from kafka.oauth.abstract import AbstractTokenProvider  # noqa: E402

from common import (CODECS, GROUP_FIRST, GROUP_PARTITIONS, GROUP_SECOND, Failed,  # noqa: E402
                    NotApplicable, PassWith, Record, check_dense, check_member_records,
                    headers_for, key_for, main, text, ts_base, value_for, verify, wait_for,
                    wait_stable_split)
import secure  # noqa: E402

CLIENT = "kafka-python"
VERSION = kafka.__version__


def admin(env):
    return KafkaAdminClient(bootstrap_servers=env.bootstrap, client_id="compat-kafka-python",
                            request_timeout_ms=20000)


def create_topic(env, topic, partitions, configs=None):
    a = admin(env)
    try:
        a.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1,
                                  topic_configs=configs or {})], timeout_ms=20000)
        wait_partitions(env, a, topic, partitions)
    finally:
        a.close()


def wait_partitions(env, a, topic, n):
    def cond():
        ts = [t for t in a.describe_topics([topic]) if t["topic"] == topic]
        if not ts:
            return "metadata has no topic %s" % topic
        t = ts[0]
        if t["error_code"] != 0:
            return "metadata for %s: error %d" % (topic, t["error_code"])
        if len(t["partitions"]) != n:
            return "metadata shows %d partitions for %s, want %d" % (len(t["partitions"]), topic, n)
        for p in t["partitions"]:
            if p["error_code"] != 0 or p["leader"] < 0:
                return "partition %d of %s: leader %d, error %d" % (p["partition"], topic, p["leader"], p["error_code"])
        return None
    wait_for(env, 15, cond)


def metadata(env):
    a = admin(env)
    try:
        cl = a.describe_cluster()
        addrs = ["%s:%d" % (b["host"], b["port"]) for b in cl["brokers"]]
        if env.bootstrap not in addrs:
            raise Failed("metadata lists brokers %r, none is the bootstrap %s" % (addrs, env.bootstrap))
        topic = env.topic("metadata")
        create_topic(env, topic, 3)
        try:
            a.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)], timeout_ms=20000)
        except Errors.TopicAlreadyExistsError:
            pass
        else:
            raise Failed("creating an existing topic succeeded")
    finally:
        a.close()


def codec_arg(codec):
    return None if codec == "none" else codec


def producer(env, **conf):
    c = dict(bootstrap_servers=env.bootstrap, client_id="compat-kafka-python", linger_ms=5,
             batch_size=65536, request_timeout_ms=30000)
    c.update(conf)
    return KafkaProducer(**c)


def produce_range(env, p, topic, lo, hi, base=None):
    """Produces records lo..hi-1; returns (index -> partition, partition ->
    offsets) from the acknowledgements."""
    futures = []
    for i in range(lo, hi):
        kw = dict(key=key_for(i).encode(), value=value_for(i).encode(),
                  headers=[(k, v.encode()) for k, v in headers_for(env.client, i)])
        if base is not None:
            kw["timestamp_ms"] = base + i
        futures.append((i, p.send(topic, **kw)))
    p.flush(timeout=max(1, env.left()))
    parts, offs = {}, {}
    for i, f in futures:
        md = f.get(timeout=max(1, env.left()))
        parts[i] = md.partition
        offs.setdefault(md.partition, []).append(md.offset)
    return parts, offs


def record_of(m):
    return Record(m.partition, m.offset, text(m.key), text(m.value),
                  [(k, text(v)) for k, v in (m.headers or [])], m.timestamp)


def consume_n(env, topic, partitions, n):
    """Reads topic from the beginning with assign() (no group) until n
    records arrived, plus a second's grace for anything extra."""
    c = KafkaConsumer(bootstrap_servers=env.bootstrap, client_id="compat-kafka-python", group_id=None,
                      enable_auto_commit=False, auto_offset_reset="earliest")
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        c.assign(tps)
        c.seek_to_beginning(*tps)
        got = []
        grace = None
        while True:
            if len(got) >= n:
                grace = grace or time.monotonic() + 1
                if time.monotonic() > grace:
                    return got
            env.check_time("consumed %d of %d records" % (len(got), n))
            for _, ms in c.poll(timeout_ms=200).items():
                got.extend(record_of(m) for m in ms)
    finally:
        c.close()


def end_offsets(env, topic, partitions):
    c = KafkaConsumer(bootstrap_servers=env.bootstrap, client_id="compat-kafka-python", group_id=None)
    try:
        ends = c.end_offsets([TopicPartition(topic, p) for p in range(partitions)])
        return {tp.partition: o for tp, o in ends.items()}
    finally:
        c.close()


def produce(env):
    for codec in CODECS:
        topic = env.topic("produce-" + codec)
        create_topic(env, topic, 3)
        all_offs = {}
        for acks, lo in (("all", 0), (1, env.records)):
            p = producer(env, acks=acks, compression_type=codec_arg(codec))
            try:
                _, offs = produce_range(env, p, topic, lo, lo + env.records, ts_base())
            finally:
                p.close()
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
        p = producer(env, acks="all", compression_type=codec_arg(codec))
        try:
            got_parts, _ = produce_range(env, p, topic, c * chunk, hi, base)
        finally:
            p.close()
        parts.update(got_parts)
    got = consume_n(env, topic, 3, env.records)
    verify(got, list(range(env.records)), want_headers=lambda i: headers_for(env.client, i),
           want_ts=lambda i: base + i, partitions=parts)


class Member:
    """A group member polling in its own thread: kafka-python's poll()
    blocks until the member has (re)joined the group, so two members in one
    thread would wait on each other. The consumer is used only from that
    thread; commit() and close() are handed to it."""

    def __init__(self, env, topic, group):
        self.got = []
        self.assigned = set()
        self.error = None
        self.lock = threading.Lock()
        self.commit_req = threading.Event()
        self.committed = threading.Event()
        self.stop_req = threading.Event()
        self.c = KafkaConsumer(bootstrap_servers=env.bootstrap, client_id="compat-kafka-python", group_id=group,
                               enable_auto_commit=False, auto_offset_reset="earliest",
                               session_timeout_ms=10000, heartbeat_interval_ms=500)
        self.c.subscribe([topic])
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            while not self.stop_req.is_set():
                recs = self.c.poll(timeout_ms=100)
                with self.lock:
                    for _, ms in recs.items():
                        self.got.extend(record_of(m) for m in ms)
                    self.assigned = {tp.partition for tp in self.c.assignment()}
                if self.commit_req.is_set():
                    self.c.commit()
                    self.commit_req.clear()
                    self.committed.set()
        except Exception as e:  # reported by the scenario
            self.error = e
        finally:
            self.c.close()

    def held(self):
        if self.error:
            raise self.error
        with self.lock:
            return set(self.assigned)

    def records(self):
        if self.error:
            raise self.error
        with self.lock:
            return list(self.got)

    def commit(self, env):
        self.commit_req.set()
        if not self.committed.wait(max(1, env.left())):
            raise Failed("commit did not finish")
        if self.error:
            raise self.error

    def close(self):
        self.stop_req.set()
        self.thread.join(30)


def groups(env):
    topic, group = env.topic("groups"), env.topic("group")
    create_topic(env, topic, GROUP_PARTITIONS)
    a, b = Member(env, topic, group), Member(env, topic, group)
    pa, pb = wait_stable_split(env, a.held, b.held)
    env.log("members hold %r and %r" % (pa, pb))
    p = producer(env, acks="all")
    produce_range(env, p, topic, 0, GROUP_FIRST)

    def consumed():
        n = len(a.records()) + len(b.records())
        return None if n >= GROUP_FIRST else "members consumed %d of %d records" % (n, GROUP_FIRST)
    wait_for(env, 30, consumed)
    time.sleep(0.5)
    check_member_records(a.records(), set(pa), b.records(), set(pb), 0, GROUP_FIRST)
    for m in (a, b):
        m.commit(env)
    a.close()
    b.close()
    c = KafkaConsumer(bootstrap_servers=env.bootstrap, client_id="compat-kafka-python", group_id=group,
                      enable_auto_commit=False)
    total = sum(c.committed(TopicPartition(topic, part)) or 0 for part in range(GROUP_PARTITIONS))
    c.close()
    if total != GROUP_FIRST:
        raise Failed("committed offsets sum to %d, want %d" % (total, GROUP_FIRST))
    produce_range(env, p, topic, GROUP_FIRST, GROUP_FIRST + GROUP_SECOND)
    p.close()
    c = Member(env, topic, group)

    def resumed():
        n = len(c.records())
        return None if n >= GROUP_SECOND else "restarted member consumed %d of %d new records" % (n, GROUP_SECOND)
    wait_for(env, 30, resumed)
    time.sleep(0.5)
    c.close()
    try:
        verify(c.records(), list(range(GROUP_FIRST, GROUP_FIRST + GROUP_SECOND)))
    except Failed as e:
        raise Failed("after restart (should resume at the committed offsets): %s" % e)


def transactions(env):
    if "enable_idempotence" not in KafkaProducer.DEFAULT_CONFIG:
        raise NotApplicable("kafka-python %s has no idempotent or transactional producer and no "
                            "read_committed consumer" % VERSION)
    raise Failed("kafka-python %s has an idempotent producer: the compat driver needs a "
                 "transactions scenario for it" % VERSION)


def config_map(response):
    """{resource name: {config name: value}} from DescribeConfigsResponses."""
    out = {}
    for r in response:
        for res in r.resources:
            err, msg, _rtype, name, entries = res[:5]
            if err != 0:
                raise Failed("describe configs of %s: error %d %s" % (name, err, msg))
            out[name] = {e[0]: e[1] for e in entries}
    return out


def admin_scenario(env):
    a = admin(env)
    try:
        topic = env.topic("admin")
        create_topic(env, topic, 2, {"retention.ms": "3600000"})
        broker = sorted(b["node_id"] for b in a.describe_cluster()["brokers"])[0]
        cfgs = config_map(a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic),
                                              ConfigResource(ConfigResourceType.BROKER, str(broker))]))
        cfg = cfgs.get(topic, {})
        if cfg.get("retention.ms") != "3600000":
            raise Failed("describe configs: retention.ms = %r, want the 3600000 set at creation" % cfg.get("retention.ms"))
        if cfg.get("cleanup.policy") != "delete":
            raise Failed("describe configs: cleanup.policy = %r, want the default delete" % cfg.get("cleanup.policy"))
        bcfg = cfgs.get(str(broker), {})
        if bcfg.get("auto.create.topics.enable") != "false":
            raise Failed("describe broker configs: auto.create.topics.enable = %r, want false" % bcfg.get("auto.create.topics.enable"))
        a.create_partitions({topic: NewPartitions(total_count=4)}, timeout_ms=20000)
        wait_partitions(env, a, topic, 4)
        a.delete_topics([topic], timeout_ms=20000)

        def gone():
            return "deleted topic still listed" if topic in a.list_topics() else None
        wait_for(env, 15, gone)
    finally:
        a.close()


def errors(env):
    topic = env.topic("missing")
    # kafka-python waits max_block_ms (60 s by default) for metadata of the
    # topic; 10 s keeps the suite short.
    p = producer(env, max_block_ms=10000)
    start = time.monotonic()
    try:
        f = p.send(topic, value=b"x")
        f.get(timeout=max(1, env.left()))
    except Errors.KafkaTimeoutError as e:
        err = e
    except Errors.KafkaError as e:
        err = e
    else:
        raise Failed("produce to a topic that does not exist succeeded")
    finally:
        p.close(timeout=5)
    took = time.monotonic() - start
    if not isinstance(err, (Errors.KafkaTimeoutError, Errors.UnknownTopicOrPartitionError)):
        raise Failed("after %.1fs: got %r, want an unknown topic error" % (took, err))
    # kafka-python 2.0 reports a missing topic only as a metadata timeout;
    # the broker must have answered that the topic is unknown.
    a = admin(env)
    try:
        ts = [t for t in a.describe_topics([topic]) if t["topic"] == topic]
    finally:
        a.close()
    if not ts or ts[0]["error_code"] != Errors.UnknownTopicOrPartitionError.errno:
        raise Failed("after %r: metadata for the missing topic answered %r, want UNKNOWN_TOPIC_OR_PARTITION" % (err, ts))
    raise PassWith("%s: %s after %.1fs (metadata: UNKNOWN_TOPIC_OR_PARTITION)" % (type(err).__name__, err, took))


# The security scenarios (secure.py): kafka-python's security_protocol,
# ssl_* and sasl_* arguments, with a token provider for OAUTHBEARER.
class UnsecuredTokens(AbstractTokenProvider):
    def __init__(self, user):
        super().__init__()
        self.user = user

    def token(self):
        return secure.unsecured_token(self.user)


def secure_conf(s):
    conf = dict(bootstrap_servers=s.bootstrap, security_protocol=s.protocol, client_id="compat-kafka-python")
    if s.tls():
        conf["ssl_cafile"] = s.ca
    if s.mechanism is None:
        conf.update(ssl_certfile=s.cert, ssl_keyfile=s.key)
    elif s.mechanism == "OAUTHBEARER":
        conf.update(sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=UnsecuredTokens(s.user))
    else:
        conf.update(sasl_mechanism=s.mechanism, sasl_plain_username=s.user, sasl_plain_password=s.password)
    return conf


def secure_produce(env, s, topic, values):
    p = KafkaProducer(acks="all", **secure_conf(s))
    try:
        futures = [p.send(topic, value=v.encode(), partition=0) for v in values]
        for f in futures:
            f.get(timeout=max(1, env.left()))
    finally:
        p.close(timeout=5)


def secure_consume(env, s, topic, n):
    c = KafkaConsumer(enable_auto_commit=False, **secure_conf(s))
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got = []
    try:
        while len(got) < n and env.left() > 0:
            for records in c.poll(timeout_ms=1000).values():
                got.extend(r.value.decode() for r in records)
    finally:
        c.close()
    return got


def secure_refused(env, s, topic):
    """kafka-python's constructors report a refused authentication as
    NoBrokersAvailable; the reason is in what it logs, which is where its
    users see it."""
    seen = []

    class Collect(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    handler = Collect(level=logging.WARNING)
    logging.getLogger("kafka").addHandler(handler)
    try:
        KafkaProducer(**secure_conf(s)).close(timeout=1)
    except Errors.KafkaError as e:
        reasons = [m for m in seen if secure.AUTH_ERROR.search(m)]
        return "%s: %s" % (type(e).__name__, reasons[0] if reasons else e)
    finally:
        logging.getLogger("kafka").removeHandler(handler)
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
        **secure.scenarios(secure_produce, secure_consume, secure_refused),
    })
