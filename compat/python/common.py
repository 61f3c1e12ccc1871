"""Shared pieces of the Python compat drivers: the data set, the checks and
the result line. Mirrors compat/go/data.go; compat/README.md describes both.

A driver runs one scenario per process:

    /usr/bin/python3 compat/python/confluent_test.py produce

and prints one JSON line {"client", "scenario", "status", "detail", ...} on
stdout. Progress goes to stderr.
"""

import json
import os
import sys
import time
import traceback

SECURITY_SCENARIOS = ["scram-ssl", "plain-ssl", "mtls", "oauth"]
SCENARIOS = ["metadata", "produce", "consume", "groups", "transactions", "admin", "errors"] + SECURITY_SCENARIOS
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
NUM_KEYS = 97
# Makes values compressible, and a kcat input line exactly 128 bytes.
PADDING = "samsa-compat-" * 8 + "ok"

GROUP_PARTITIONS = 4
GROUP_FIRST = 400
GROUP_SECOND = 100
IDEM_RECORDS = 1000
TXN_RECORDS = 128


class NotApplicable(Exception):
    """The client has no API for the scenario."""


class PassWith(Exception):
    """The scenario passed; the message is a note for the matrix."""


class Failed(Exception):
    pass


def key_for(i):
    return "key-%03d" % (i % NUM_KEYS)


def value_for(i):
    return "value-%06d-%s" % (i, PADDING)


def headers_for(client, i):
    return [("idx", str(i)), ("client", client)]


def ts_base():
    """Timestamp of record 0: an hour ago, on a whole second."""
    return (int(time.time()) - 3600) * 1000


def idx_of(value):
    if not value.startswith("value-") or len(value) < 12:
        return None
    try:
        return int(value[6:12])
    except ValueError:
        return None


class Record:
    __slots__ = ("partition", "offset", "key", "value", "headers", "timestamp")

    def __init__(self, partition, offset, key, value, headers, timestamp):
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp


def text(b):
    if b is None:
        return ""
    if isinstance(b, (bytes, bytearray)):
        return b.decode("utf-8", "replace")
    return str(b)


def verify(got, idx, want_headers=None, want_ts=None, partitions=None):
    """Checks got (in delivery order) holds each index in idx exactly once and
    nothing else; keys, values, headers (want_headers(i)) and timestamps
    (want_ts(i)) intact; per partition, offsets and production order
    increasing; equal keys on one partition; partitions as delivery reports
    said (partitions: index -> partition)."""
    want = set(idx)
    problems = []

    def add(msg):
        if len(problems) < 8:
            problems.append(msg)

    seen = {}
    last = {}
    key_part = {}
    for r in got:
        i = idx_of(r.value)
        if i is None:
            add("partition %d offset %d: unexpected value %r" % (r.partition, r.offset, r.value[:40]))
            continue
        if i not in want:
            add("record %d (partition %d offset %d) was not expected here" % (i, r.partition, r.offset))
            continue
        if i in seen:
            add("record %d delivered twice (partition %d offsets %d and %d)" % (i, r.partition, seen[i].offset, r.offset))
            continue
        seen[i] = r
        if r.key != key_for(i):
            add("record %d: key %r, want %r" % (i, r.key, key_for(i)))
        if r.value != value_for(i):
            add("record %d: value %r, want %r" % (i, r.value[:40], value_for(i)[:40]))
        if want_headers is not None and list(r.headers) != list(want_headers(i)):
            add("record %d: headers %r, want %r" % (i, r.headers, want_headers(i)))
        if want_ts is not None and r.timestamp != want_ts(i):
            add("record %d: timestamp %r, want %r" % (i, r.timestamp, want_ts(i)))
        if partitions is not None and i in partitions and partitions[i] != r.partition:
            add("record %d: consumed from partition %d, delivery report said %d" % (i, r.partition, partitions[i]))
        prev = last.get(r.partition)
        if prev is not None:
            if r.offset <= prev.offset:
                add("partition %d: offset %d after %d" % (r.partition, r.offset, prev.offset))
            pi = idx_of(prev.value)
            if i < pi:
                add("partition %d: record %d after record %d (production order lost)" % (r.partition, i, pi))
        last[r.partition] = r
        p = key_part.get(r.key)
        if p is not None and p != r.partition:
            add("key %r on partitions %d and %d" % (r.key, p, r.partition))
        key_part[r.key] = r.partition
    missing = [i for i in idx if i not in seen]
    if missing:
        add("%d of %d records missing (first: %r)" % (len(missing), len(idx), missing[:5]))
    if problems:
        raise Failed("%d records consumed: %s" % (len(got), "; ".join(problems)))


def check_dense(offsets):
    """offsets: partition -> acknowledged offsets; each must be 0..n-1.
    Returns partition -> count."""
    counts = {}
    for p, offs in offsets.items():
        offs = sorted(offs)
        if offs != list(range(len(offs))):
            raise Failed("partition %d: acknowledged offsets are not 0..%d" % (p, len(offs) - 1))
        counts[p] = len(offs)
    return counts


def assignment_split(a, b, n):
    """None when two members' partitions are disjoint, non-empty, and cover
    0..n-1, else what is wrong."""
    if not a or not b:
        return "members hold %r and %r: not split yet" % (sorted(a), sorted(b))
    if set(a) & set(b):
        return "members hold %r and %r: a partition twice" % (sorted(a), sorted(b))
    if len(set(a) | set(b)) != n:
        return "members hold %r and %r: not all %d partitions" % (sorted(a), sorted(b), n)
    return None


def check_member_records(ga, pa, gb, pb, lo, hi):
    for name, got, parts in (("first", ga, pa), ("second", gb, pb)):
        for r in got:
            if r.partition not in parts:
                raise Failed("%s member got a record from partition %d, it holds %r" % (name, r.partition, sorted(parts)))
        if not got:
            raise Failed("%s member got no records" % name)
    verify(list(ga) + list(gb), list(range(lo, hi)))


class Env:
    def __init__(self, client):
        self.client = client
        self.bootstrap = os.environ.get("COMPAT_BOOTSTRAP", "127.0.0.1:9092")
        self.prefix = os.environ.get("COMPAT_PREFIX", "compat-" + client)
        self.records = int(os.environ.get("COMPAT_RECORDS", "10000"))
        timeout = int(os.environ.get("COMPAT_TIMEOUT", "120"))
        if timeout > 10:
            timeout -= 5
        self.deadline = time.monotonic() + timeout

    def topic(self, name):
        return self.prefix + "-" + name

    def left(self):
        return self.deadline - time.monotonic()

    def check_time(self, what):
        if self.left() <= 0:
            raise Failed("timed out: " + what)

    def log(self, msg):
        sys.stderr.write("[%s %s] %s\n" % (self.client, time.strftime("%H:%M:%S"), msg))
        sys.stderr.flush()


def wait_for(env, limit, cond):
    """Polls cond() (None when satisfied, else a reason) until it holds, limit
    seconds pass, or the scenario's deadline. Raises Failed with the reason."""
    end = min(time.monotonic() + limit, env.deadline)
    while True:
        why = cond()
        if why is None:
            return
        if time.monotonic() >= end:
            raise Failed(why)
        time.sleep(0.2)


def wait_stable_split(env, parts_a, parts_b, poll=None):
    """Waits until two members split the partitions and keep it a second.
    poll() (if given) is called in between, for clients whose callbacks
    run inside poll."""
    end = min(time.monotonic() + 45, env.deadline)
    since = None
    last = None
    while True:
        if poll:
            poll()
        a, b = parts_a(), parts_b()
        why = assignment_split(a, b, GROUP_PARTITIONS)
        if why is None:
            cur = (tuple(sorted(a)), tuple(sorted(b)))
            if cur != last:
                last, since = cur, time.monotonic()
            if time.monotonic() - since >= 1.0:
                return sorted(a), sorted(b)
            why = "members hold %r and %r, waiting for it to settle" % cur
        else:
            since = None
        if time.monotonic() >= end:
            raise Failed("two members never split the partitions: " + why)
        if not poll:
            time.sleep(0.2)


def main(client, version, scenarios):
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        sys.stderr.write("usage: %s SCENARIO (one of %s)\n" % (sys.argv[0], ", ".join(SCENARIOS)))
        sys.exit(2)
    name = sys.argv[1]
    env = Env(client)
    start = time.monotonic()
    res = {"client": client, "scenario": name, "version": version, "detail": ""}
    try:
        fn = scenarios.get(name)
        if fn is None:
            raise NotApplicable("no such scenario for this client")
        fn(env)
        res["status"] = "pass"
    except PassWith as e:
        res["status"], res["detail"] = "pass", str(e)
    except NotApplicable as e:
        res["status"], res["detail"] = "n/a", str(e)
    except Failed as e:
        res["status"], res["detail"] = "fail", str(e)
    except Exception as e:  # the client raised: report it as it is
        traceback.print_exc()
        res["status"], res["detail"] = "fail", "%s: %s" % (type(e).__name__, e)
    res["seconds"] = "%.1f" % (time.monotonic() - start)
    sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()
    # Client libraries may leave threads behind; the result is out.
    os._exit(0)
