package samsa.compat;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.TopicExistsException;

/** The metadata, produce and consume scenarios. */
final class Produce {
    private Produce() {}

    static void metadata(Env env) throws Exception {
        try (Admin admin = Clients.admin(env)) {
            Collection<Node> nodes = admin.describeCluster().nodes().get();
            List<String> addrs = new ArrayList<>();
            for (Node n : nodes) {
                addrs.add(n.host() + ":" + n.port());
            }
            if (!addrs.contains(env.bootstrap)) {
                throw new Main.Failed("metadata lists brokers " + addrs + ", none is the bootstrap " + env.bootstrap);
            }
            String topic = env.topic("metadata");
            Clients.createTopic(env, admin, topic, 3, null);
            try {
                admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get();
                throw new Main.Failed("creating the topic again succeeded");
            } catch (java.util.concurrent.ExecutionException ex) {
                if (!(ex.getCause() instanceof TopicExistsException)) {
                    throw new Main.Failed("create existing topic: got " + Main.describe(ex.getCause()) + ", want TopicExistsException");
                }
            }
        }
    }

    static void produce(Env env) throws Exception {
        try (Admin admin = Clients.admin(env)) {
            for (String codec : Data.CODECS) {
                String topic = env.topic("produce-" + codec);
                Clients.createTopic(env, admin, topic, 3, null);
                Map<Integer, List<Long>> all = new HashMap<>();
                for (String acks : List.of("all", "1")) {
                    int from = acks.equals("1") ? env.records : 0;
                    Clients.Acks got;
                    try (KafkaProducer<byte[], byte[]> p = Clients.producer(env, Map.of(
                            ProducerConfig.ACKS_CONFIG, acks,
                            ProducerConfig.COMPRESSION_TYPE_CONFIG, codec))) {
                        got = Clients.produceRange(p, topic, from, from + env.records, Data.tsBase());
                    } catch (RuntimeException ex) {
                        throw new Main.Failed(codec + " acks=" + acks, ex);
                    }
                    got.offsets.forEach((p, o) -> all.computeIfAbsent(p, k -> new ArrayList<>()).addAll(o));
                }
                Map<Integer, Long> counts = Data.checkDense(all);
                Clients.checkEndOffsets(env, topic, counts, 2L * env.records);
                Main.log("produce %s: %d records in %d partitions", codec, 2 * env.records, counts.size());
            }
            // acks=0: the producer learns no offsets; the records must all land.
            String topic = env.topic("produce-acks0");
            Clients.createTopic(env, admin, topic, 3, null);
            try (KafkaProducer<byte[], byte[]> p = Clients.producer(env, Map.of(ProducerConfig.ACKS_CONFIG, "0"))) {
                Clients.produceRange(p, topic, 0, env.records, Data.tsBase());
            }
            Data.waitFor(env, java.time.Duration.ofSeconds(15), "acks=0", () -> {
                List<Data.Rec> got = Clients.consumeN(env, topic, env.records, Map.of());
                Data.verify(got, new Data.Expectation(Data.range(0, env.records)));
                return null;
            });
        }
    }

    static void consume(Env env) throws Exception {
        String topic = env.topic("consume");
        try (Admin admin = Clients.admin(env)) {
            Clients.createTopic(env, admin, topic, 3, null);
        }
        long base = Data.tsBase();
        Map<Integer, Integer> parts = new HashMap<>();
        int chunk = env.records / Data.CODECS.size();
        for (int c = 0; c < Data.CODECS.size(); c++) {
            String codec = Data.CODECS.get(c);
            int to = c == Data.CODECS.size() - 1 ? env.records : (c + 1) * chunk;
            try (KafkaProducer<byte[], byte[]> p = Clients.producer(env, Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec))) {
                parts.putAll(Clients.produceRange(p, topic, c * chunk, to, base).partitions);
            } catch (RuntimeException ex) {
                throw new Main.Failed("produce (" + codec + ")", ex);
            }
        }
        List<Data.Rec> got = Clients.consumeN(env, topic, env.records, Map.of());
        Data.Expectation e = new Data.Expectation(Data.range(0, env.records));
        e.timestamp = i -> base + i;
        e.checkHeaders = true;
        e.partitions = parts;
        Data.verify(got, e);
    }
}
