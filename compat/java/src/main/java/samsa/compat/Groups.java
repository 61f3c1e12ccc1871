package samsa.compat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;

/**
 * The groups scenario, three times: the classic protocol with the eager
 * range assignor, the classic protocol with cooperative-sticky, and the
 * consumer protocol (KIP-848, group.protocol=consumer).
 */
final class Groups {
    private Groups() {}

    /** One way of running a group. */
    record Mode(String name, Map<String, String> config, GroupType type) {}

    static final List<Mode> MODES = List.of(
            new Mode("classic-eager", Map.of(
                    ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic",
                    ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, "org.apache.kafka.clients.consumer.RangeAssignor",
                    ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000",
                    ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500"), GroupType.CLASSIC),
            new Mode("classic-cooperative", Map.of(
                    ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic",
                    ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
                    ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000",
                    ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500"), GroupType.CLASSIC),
            new Mode("consumer", Map.of(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer"), GroupType.CONSUMER));

    static void groups(Env env) throws Exception {
        List<String> done = new ArrayList<>();
        for (Mode m : MODES) {
            try {
                runMode(env, m);
            } catch (Exception | Error ex) {
                throw new Main.Failed("group.protocol " + m.name + (done.isEmpty() ? "" : " (" + done + " passed)"), ex);
            }
            done.add(m.name);
        }
        throw new Main.PassWith("classic eager (range), classic cooperative-sticky and consumer (KIP-848) groups");
    }

    /**
     * A group member polling in its own thread (a KafkaConsumer is used by
     * one thread only): it records its assignment and records, commits when
     * asked, and closes (leaving the group) when stopped.
     */
    static final class Member implements Runnable {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final String topic;
        private final Set<Integer> assigned = new HashSet<>();
        private final List<Data.Rec> got = new ArrayList<>();
        private volatile boolean stop;
        private volatile CompletableFuture<Void> commitRequest;
        private volatile Throwable failure;
        private final Thread thread;

        Member(Env env, String topic, String group, Mode mode, String name) {
            Map<String, String> cfg = new HashMap<>(mode.config);
            cfg.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            cfg.put(ConsumerConfig.CLIENT_ID_CONFIG, "compat-java-" + name);
            this.consumer = Clients.consumer(env, cfg);
            this.topic = topic;
            this.thread = new Thread(this, name);
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void run() {
            try {
                consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> parts) {
                        synchronized (Member.this) {
                            parts.forEach(tp -> assigned.remove(tp.partition()));
                        }
                    }

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> parts) {
                        synchronized (Member.this) {
                            parts.forEach(tp -> assigned.add(tp.partition()));
                        }
                    }

                    @Override
                    public void onPartitionsLost(Collection<TopicPartition> parts) {
                        onPartitionsRevoked(parts);
                    }
                });
                while (!stop) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                        synchronized (this) {
                            got.add(Data.Rec.of(r));
                        }
                    }
                    CompletableFuture<Void> req = commitRequest;
                    if (req != null) {
                        commitRequest = null;
                        try {
                            consumer.commitSync(Duration.ofSeconds(15));
                            req.complete(null);
                        } catch (RuntimeException ex) {
                            req.completeExceptionally(ex);
                        }
                    }
                }
            } catch (Throwable t) {
                failure = t;
            } finally {
                consumer.close(Duration.ofSeconds(10));
            }
        }

        synchronized Set<Integer> parts() {
            return new HashSet<>(assigned);
        }

        synchronized List<Data.Rec> records() {
            return new ArrayList<>(got);
        }

        void commit() throws Exception {
            CompletableFuture<Void> req = new CompletableFuture<>();
            commitRequest = req;
            req.get(30, TimeUnit.SECONDS);
        }

        void close() throws InterruptedException {
            stop = true;
            thread.join(20_000);
        }

        void checkAlive() {
            if (failure != null) {
                throw new Main.Failed("member " + thread.getName(), failure);
            }
        }
    }

    static void runMode(Env env, Mode mode) throws Exception {
        String topic = env.topic("groups-" + mode.name);
        String group = env.topic("group-" + mode.name);
        try (Admin admin = Clients.admin(env);
                KafkaProducer<byte[], byte[]> producer = Clients.producer(env, Map.of())) {
            Clients.createTopic(env, admin, topic, Data.GROUP_PARTITIONS, null);
            Member a = new Member(env, topic, group, mode, mode.name + "-a");
            Member b = new Member(env, topic, group, mode, mode.name + "-b");
            try {
                Data.waitStableSplit(env, () -> {
                    a.checkAlive();
                    b.checkAlive();
                    return a.parts();
                }, b::parts);
                Set<Integer> pa = a.parts();
                Set<Integer> pb = b.parts();
                Main.log("%s: members hold %s and %s", mode.name, pa, pb);
                checkDescribed(admin, group, mode, 2);

                Clients.produceRange(producer, topic, 0, Data.GROUP_FIRST, 0);
                Data.waitFor(env, Duration.ofSeconds(30), "consuming", () -> {
                    a.checkAlive();
                    b.checkAlive();
                    int n = a.records().size() + b.records().size();
                    return n < Data.GROUP_FIRST ? "members consumed " + n + " of " + Data.GROUP_FIRST : null;
                });
                Thread.sleep(500); // anything extra would show up now
                Data.checkMemberRecords(a.records(), pa, b.records(), pb, 0, Data.GROUP_FIRST);
                a.commit();
                b.commit();
                Map<TopicPartition, OffsetAndMetadata> committed =
                        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                long sum = 0;
                for (Map.Entry<TopicPartition, OffsetAndMetadata> en : committed.entrySet()) {
                    if (en.getKey().topic().equals(topic) && en.getValue() != null) {
                        sum += en.getValue().offset();
                    }
                }
                if (sum != Data.GROUP_FIRST) {
                    throw new Main.Failed("committed offsets sum to " + sum + ", want " + Data.GROUP_FIRST);
                }
            } finally {
                a.close();
                b.close();
            }
            a.checkAlive();
            b.checkAlive();
            // Both left: the group is empty.
            Data.waitFor(env, Duration.ofSeconds(15), "group after both members left", () -> {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                return d.members().isEmpty() ? null : d.members().size() + " members still listed";
            });

            Clients.produceRange(producer, topic, Data.GROUP_FIRST, Data.GROUP_FIRST + Data.GROUP_SECOND, 0);
            Member c = new Member(env, topic, group, mode, mode.name + "-c");
            try {
                Data.waitFor(env, Duration.ofSeconds(30), "restarted member", () -> {
                    c.checkAlive();
                    int n = c.records().size();
                    return n < Data.GROUP_SECOND ? "restarted member consumed " + n + " of " + Data.GROUP_SECOND + " new records" : null;
                });
                Thread.sleep(500);
                Data.verify(c.records(), new Data.Expectation(Data.range(Data.GROUP_FIRST, Data.GROUP_FIRST + Data.GROUP_SECOND)));
            } finally {
                c.close();
            }
        }
    }

    /** Describe and list show the group with its type, protocol and members. */
    static void checkDescribed(Admin admin, String group, Mode mode, int members) throws Exception {
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        if (d.type() != mode.type) {
            throw new Main.Failed("describe group: type " + d.type() + ", want " + mode.type);
        }
        if (d.members().size() != members) {
            throw new Main.Failed("describe group: " + d.members().size() + " members, want " + members);
        }
        if (mode.type == GroupType.CLASSIC) {
            String want = mode.name.equals("classic-eager") ? "range" : "cooperative-sticky";
            if (!want.equals(d.partitionAssignor())) {
                throw new Main.Failed("describe group: assignor " + d.partitionAssignor() + ", want " + want);
            }
        }
        boolean listed = false;
        for (GroupListing g : admin.listGroups().all().get()) {
            if (g.groupId().equals(group)) {
                listed = true;
                if (g.type().isEmpty() || g.type().get() != mode.type) {
                    throw new Main.Failed("list groups: " + group + " has type " + g.type() + ", want " + mode.type);
                }
            }
        }
        if (!listed) {
            throw new Main.Failed("list groups does not list " + group);
        }
    }
}
