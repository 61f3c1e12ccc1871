package samsa.compat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntFunction;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * The data set every driver produces and the check every read runs; the same
 * as compat/go/data.go:
 *
 * <pre>
 *   key        "key-%03d" of i % 97
 *   value      "value-%06d-" + "samsa-compat-" x 8 + "ok" (119 bytes)
 *   headers    idx=&lt;i&gt;, client=java
 *   timestamp  base + i ms, base an hour before the run (CreateTime)
 * </pre>
 */
final class Data {
    private Data() {}

    static final int NUM_KEYS = 97;
    static final String PADDING = "samsa-compat-".repeat(8) + "ok";
    static final List<String> CODECS = List.of("none", "gzip", "snappy", "lz4", "zstd");
    static final String CLIENT = "java";

    static final int GROUP_PARTITIONS = 4;
    static final int GROUP_FIRST = 400;
    static final int GROUP_SECOND = 100;
    static final int IDEM_RECORDS = 1000;
    static final int TXN_RECORDS = 128;

    static String keyFor(int i) {
        return String.format("key-%03d", i % NUM_KEYS);
    }

    static String valueFor(int i) {
        return String.format("value-%06d-%s", i, PADDING);
    }

    static List<String[]> headersFor(int i) {
        return List.of(new String[] {"idx", Integer.toString(i)}, new String[] {"client", CLIENT});
    }

    /** The timestamp of record 0: an hour ago on a whole second. */
    static long tsBase() {
        long now = System.currentTimeMillis() - 3_600_000L;
        return now - now % 1000;
    }

    static int idxOf(String value) {
        if (value == null || !value.startsWith("value-") || value.length() < 12) {
            return -1;
        }
        try {
            return Integer.parseInt(value.substring(6, 12));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** One record as a consumer delivered it. */
    record Rec(int partition, long offset, String key, String value, List<String[]> headers, long timestamp) {
        static Rec of(ConsumerRecord<byte[], byte[]> r) {
            List<String[]> hs = new ArrayList<>();
            for (Header h : r.headers()) {
                hs.add(new String[] {h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8)});
            }
            return new Rec(r.partition(), r.offset(), str(r.key()), str(r.value()), hs, r.timestamp());
        }
    }

    static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    static List<Integer> range(int from, int to) {
        List<Integer> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(i);
        }
        return out;
    }

    /** What a consumer must get back; null fields are not checked. */
    static final class Expectation {
        List<Integer> idx;
        IntFunction<Long> timestamp; // expected timestamp of record i
        boolean checkHeaders;
        Map<Integer, Integer> partitions; // partition the delivery report named

        Expectation(List<Integer> idx) {
            this.idx = idx;
        }
    }

    /**
     * Checks got (in delivery order) against e: every expected record exactly
     * once and nothing else; key, value, headers and timestamp intact; per
     * partition, offsets and production order increasing; equal keys on one
     * partition.
     */
    static void verify(List<Rec> got, Expectation e) {
        Set<Integer> want = new HashSet<>(e.idx);
        List<String> problems = new ArrayList<>();
        Map<Integer, Rec> seen = new HashMap<>();
        Map<Integer, Rec> last = new HashMap<>();
        Map<String, Integer> keyPart = new HashMap<>();
        for (Rec r : got) {
            int i = idxOf(r.value());
            if (i < 0) {
                add(problems, "partition %d offset %d: unexpected value %s", r.partition(), r.offset(), trunc(r.value()));
                continue;
            }
            if (!want.contains(i)) {
                add(problems, "record %d (partition %d offset %d) was not expected here", i, r.partition(), r.offset());
                continue;
            }
            Rec prev = seen.get(i);
            if (prev != null) {
                add(problems, "record %d delivered twice (partition %d offsets %d and %d)", i, r.partition(), prev.offset(), r.offset());
                continue;
            }
            seen.put(i, r);
            if (!keyFor(i).equals(r.key())) {
                add(problems, "record %d: key %s, want %s", i, r.key(), keyFor(i));
            }
            if (!valueFor(i).equals(r.value())) {
                add(problems, "record %d: value %s, want %s", i, trunc(r.value()), trunc(valueFor(i)));
            }
            if (e.checkHeaders && !sameHeaders(r.headers(), headersFor(i))) {
                add(problems, "record %d: headers %s, want %s", i, show(r.headers()), show(headersFor(i)));
            }
            if (e.timestamp != null && r.timestamp() != e.timestamp.apply(i)) {
                add(problems, "record %d: timestamp %d, want %d", i, r.timestamp(), e.timestamp.apply(i));
            }
            if (e.partitions != null && e.partitions.containsKey(i) && e.partitions.get(i) != r.partition()) {
                add(problems, "record %d: consumed from partition %d, delivery report said %d", i, r.partition(), e.partitions.get(i));
            }
            Rec l = last.get(r.partition());
            if (l != null) {
                if (r.offset() <= l.offset()) {
                    add(problems, "partition %d: offset %d after %d", r.partition(), r.offset(), l.offset());
                }
                if (i < idxOf(l.value())) {
                    add(problems, "partition %d: record %d after record %d (production order lost)", r.partition(), i, idxOf(l.value()));
                }
            }
            last.put(r.partition(), r);
            Integer kp = keyPart.get(r.key());
            if (kp != null && kp != r.partition()) {
                add(problems, "key %s on partitions %d and %d", r.key(), kp, r.partition());
            }
            keyPart.put(r.key(), r.partition());
        }
        List<Integer> missing = new ArrayList<>();
        for (int i : e.idx) {
            if (!seen.containsKey(i)) {
                missing.add(i);
            }
        }
        if (!missing.isEmpty()) {
            add(problems, "%d of %d records missing (first: %s)", missing.size(), e.idx.size(), missing.subList(0, Math.min(5, missing.size())));
        }
        if (!problems.isEmpty()) {
            throw new Main.Failed(got.size() + " records consumed: " + String.join("; ", problems));
        }
    }

    /** Checks the offsets acknowledged per partition are exactly 0..n-1; returns the counts. */
    static Map<Integer, Long> checkDense(Map<Integer, List<Long>> offsets) {
        Map<Integer, Long> counts = new HashMap<>();
        for (Map.Entry<Integer, List<Long>> en : offsets.entrySet()) {
            Long[] offs = en.getValue().toArray(new Long[0]);
            Arrays.sort(offs);
            for (int j = 0; j < offs.length; j++) {
                if (offs[j] != j) {
                    throw new Main.Failed(String.format("partition %d: acknowledged offsets not 0..%d (position %d has %d)",
                            en.getKey(), offs.length - 1, j, offs[j]));
                }
            }
            counts.put(en.getKey(), (long) offs.length);
        }
        return counts;
    }

    /** A condition polled by waitFor: null when it holds, else why not. */
    interface Condition {
        String check() throws Exception;
    }

    /** Polls cond every 200 ms until it holds; past limit (or the scenario's deadline) fails with its last answer. */
    static void waitFor(Env env, Duration limit, String what, Condition cond) throws Exception {
        long end = System.nanoTime() + Math.min(limit.toNanos(), env.left().toNanos());
        String last;
        while (true) {
            try {
                last = cond.check();
            } catch (Exception ex) {
                last = Main.describe(ex);
            }
            if (last == null) {
                return;
            }
            if (System.nanoTime() > end) {
                throw new Main.Failed(what + ": " + last);
            }
            Thread.sleep(200);
        }
    }

    /** Null when two members' partitions are disjoint, both non-empty and cover 0..n-1. */
    static String assignmentSplit(Set<Integer> a, Set<Integer> b, int n) {
        if (a.isEmpty() || b.isEmpty()) {
            return "members hold " + a + " and " + b + ": not split yet";
        }
        Set<Integer> all = new HashSet<>(a);
        for (int p : b) {
            if (!all.add(p)) {
                return "members hold " + a + " and " + b + ": partition " + p + " twice";
            }
        }
        if (all.size() != n) {
            return "members hold " + a + " and " + b + ": " + all.size() + " of " + n + " partitions";
        }
        return null;
    }

    /** Waits until two members split the partitions and hold the split for a second. */
    static void waitStableSplit(Env env, Supplier<Set<Integer>> a, Supplier<Set<Integer>> b) throws Exception {
        long[] since = {0};
        String[] lastSplit = {""};
        waitFor(env, Duration.ofSeconds(45), "two members never split the partitions", () -> {
            Set<Integer> pa = new TreeSet<>(a.get());
            Set<Integer> pb = new TreeSet<>(b.get());
            String bad = assignmentSplit(pa, pb, GROUP_PARTITIONS);
            if (bad != null) {
                since[0] = 0;
                return bad;
            }
            String cur = pa + " " + pb;
            if (!cur.equals(lastSplit[0]) || since[0] == 0) {
                lastSplit[0] = cur;
                since[0] = System.nanoTime();
            }
            if (System.nanoTime() - since[0] < Duration.ofSeconds(1).toNanos()) {
                return "members hold " + pa + " and " + pb + ", waiting for it to settle";
            }
            return null;
        });
    }

    /** The two members together got from..to-1 exactly once, each only from partitions it held, both some. */
    static void checkMemberRecords(List<Rec> ga, Set<Integer> pa, List<Rec> gb, Set<Integer> pb, int from, int to) {
        Object[][] members = {{"first", ga, pa}, {"second", gb, pb}};
        for (Object[] m : members) {
            @SuppressWarnings("unchecked") List<Rec> got = (List<Rec>) m[1];
            @SuppressWarnings("unchecked") Set<Integer> parts = (Set<Integer>) m[2];
            for (Rec r : got) {
                if (!parts.contains(r.partition())) {
                    throw new Main.Failed(m[0] + " member got a record from partition " + r.partition() + ", it holds " + parts);
                }
            }
            if (got.isEmpty()) {
                throw new Main.Failed(m[0] + " member got no records");
            }
        }
        List<Rec> all = new ArrayList<>(ga);
        all.addAll(gb);
        verify(all, new Expectation(range(from, to)));
    }

    private static boolean sameHeaders(List<String[]> a, List<String[]> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!Arrays.equals(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }

    private static String show(List<String[]> hs) {
        StringBuilder b = new StringBuilder("[");
        for (String[] h : hs) {
            b.append(h[0]).append('=').append(h[1]).append(' ');
        }
        return b.append(']').toString();
    }

    private static void add(List<String> problems, String format, Object... args) {
        if (problems.size() < 8) {
            problems.add(String.format(format, args));
        }
    }

    static String trunc(String s) {
        if (s == null) {
            return "null";
        }
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }
}
