package samsa.compat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Client construction and the produce/consume/topic steps the scenarios share. */
final class Clients {
    private Clients() {}

    static Admin admin(Env env) {
        Properties p = env.base("admin");
        p.put("request.timeout.ms", "15000");
        p.put("default.api.timeout.ms", "30000");
        return Admin.create(p);
    }

    /** A producer; extra overrides the defaults (idempotence is off unless asked for). */
    static KafkaProducer<byte[], byte[]> producer(Env env, Map<String, String> extra) {
        Properties p = env.base("producer");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.putAll(extra);
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    static KafkaConsumer<byte[], byte[]> consumer(Env env, Map<String, String> extra) {
        Properties p = env.base("consumer");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.putAll(extra);
        return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    static ProducerRecord<byte[], byte[]> record(String topic, int i, long base) {
        List<org.apache.kafka.common.header.Header> hs = new ArrayList<>();
        for (String[] h : Data.headersFor(i)) {
            hs.add(new RecordHeader(h[0], h[1].getBytes(StandardCharsets.UTF_8)));
        }
        Long ts = base == 0 ? null : base + i;
        return new ProducerRecord<>(topic, null, ts, Data.keyFor(i).getBytes(StandardCharsets.UTF_8),
                Data.valueFor(i).getBytes(StandardCharsets.UTF_8), hs);
    }

    /** What a produce run got acknowledged: partition per index, offsets per partition. */
    static final class Acks {
        final Map<Integer, Integer> partitions = new HashMap<>();
        final Map<Integer, List<Long>> offsets = new HashMap<>();
    }

    /** Produces records from..to-1, flushes, and fails on the first unacknowledged one. */
    static Acks produceRange(KafkaProducer<byte[], byte[]> producer, String topic, int from, int to, long base) {
        Acks acks = new Acks();
        AtomicReference<Exception> first = new AtomicReference<>();
        for (int i = from; i < to; i++) {
            int idx = i;
            producer.send(record(topic, i, base), (RecordMetadata md, Exception ex) -> {
                synchronized (acks) {
                    if (ex != null) {
                        first.compareAndSet(null, new Main.Failed("record " + idx, ex));
                        return;
                    }
                    acks.partitions.put(idx, md.partition());
                    acks.offsets.computeIfAbsent(md.partition(), k -> new ArrayList<>()).add(md.offset());
                }
            });
        }
        producer.flush();
        if (first.get() != null) {
            throw new Main.Failed("produce", first.get());
        }
        return acks;
    }

    /** Creates topic and waits until metadata shows its partitions, each with a listed leader. */
    static void createTopic(Env env, Admin admin, String topic, int partitions, Map<String, String> configs) throws Exception {
        NewTopic nt = new NewTopic(topic, partitions, (short) 1);
        if (configs != null) {
            nt.configs(configs);
        }
        admin.createTopics(List.of(nt)).all().get();
        waitPartitions(env, admin, topic, partitions);
    }

    static void waitPartitions(Env env, Admin admin, String topic, int n) throws Exception {
        Data.waitFor(env, Duration.ofSeconds(15), "topic " + topic, () -> {
            Collection<Node> nodes = admin.describeCluster().nodes().get();
            TopicDescription td = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            if (td.partitions().size() != n) {
                return "metadata shows " + td.partitions().size() + " partitions, want " + n;
            }
            for (TopicPartitionInfo p : td.partitions()) {
                if (p.leader() == null || !nodes.contains(p.leader())) {
                    return "partition " + p.partition() + " has leader " + p.leader() + ", not among " + nodes;
                }
            }
            return null;
        });
    }

    /** Unwraps the cause of a failed admin future. */
    static Throwable cause(Throwable t) {
        return t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
    }

    /**
     * Reads topic from the start with assign() (no group) until n records
     * arrived, then a second more for anything extra.
     */
    static List<Data.Rec> consumeN(Env env, String topic, int n, Map<String, String> extra) throws Exception {
        List<Data.Rec> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = consumer(env, extra)) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(topic, env.left()).forEach(pi -> tps.add(new TopicPartition(topic, pi.partition())));
            c.assign(tps);
            c.seekToBeginning(tps);
            long grace = 0;
            while (true) {
                if (got.size() >= n) {
                    if (grace == 0) {
                        grace = System.nanoTime() + Duration.ofSeconds(1).toNanos();
                    }
                    if (System.nanoTime() > grace) {
                        return got;
                    }
                }
                if (env.expired()) {
                    throw new Main.Failed("consumed " + got.size() + " of " + n + " records before the deadline");
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    got.add(Data.Rec.of(r));
                }
            }
        }
    }

    /** Checks the end offsets of topic equal the acknowledged counts and add up to total. */
    static void checkEndOffsets(Env env, String topic, Map<Integer, Long> counts, long total) {
        try (KafkaConsumer<byte[], byte[]> c = consumer(env, Map.of())) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(topic, env.left()).forEach(pi -> tps.add(new TopicPartition(topic, pi.partition())));
            Map<TopicPartition, Long> ends = c.endOffsets(tps, env.left());
            long sum = 0;
            for (Map.Entry<TopicPartition, Long> en : ends.entrySet()) {
                long want = counts.getOrDefault(en.getKey().partition(), 0L);
                if (en.getValue() != want) {
                    throw new Main.Failed("partition " + en.getKey().partition() + ": end offset " + en.getValue()
                            + ", " + want + " records acknowledged");
                }
                sum += en.getValue();
            }
            if (sum != total) {
                throw new Main.Failed("end offsets sum to " + sum + ", want " + total);
            }
        }
    }

    static Set<String> listTopics(Admin admin) throws Exception {
        return admin.listTopics().names().get();
    }
}
