package samsa.compat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;

/** The transactions scenario: idempotent producer, then transactions with read_committed. */
final class Transactions {
    private Transactions() {}

    static final Map<String, String> READ_COMMITTED = Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    static final Map<String, String> READ_UNCOMMITTED = Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");

    static void transactions(Env env) throws Exception {
        String topic = env.topic("idempotent");
        String txnTopic = env.topic("txn");
        try (Admin admin = Clients.admin(env)) {
            Clients.createTopic(env, admin, topic, 3, null);
            Clients.createTopic(env, admin, txnTopic, 3, null);
        }
        Clients.Acks acks;
        try (KafkaProducer<byte[], byte[]> p = Clients.producer(env, Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true", ProducerConfig.ACKS_CONFIG, "all"))) {
            acks = Clients.produceRange(p, topic, 0, Data.IDEM_RECORDS, 0);
        }
        Data.checkDense(acks.offsets);
        Data.Expectation idem = new Data.Expectation(Data.range(0, Data.IDEM_RECORDS));
        idem.partitions = acks.partitions;
        try {
            Data.verify(Clients.consumeN(env, topic, Data.IDEM_RECORDS, Map.of()), idem);
        } catch (Main.Failed f) {
            throw new Main.Failed("idempotent", f);
        }

        int a = 0;
        int b = Data.TXN_RECORDS;
        int c = 2 * Data.TXN_RECORDS;
        try (KafkaProducer<byte[], byte[]> tx = Clients.producer(env, Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, env.topic("txid"),
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000"))) {
            tx.initTransactions();
            tx.beginTransaction();
            Clients.produceRange(tx, txnTopic, a, a + Data.TXN_RECORDS, 0);
            tx.commitTransaction();
            tx.beginTransaction();
            Clients.produceRange(tx, txnTopic, b, b + Data.TXN_RECORDS, 0);
            tx.abortTransaction();
            tx.beginTransaction();
            Clients.produceRange(tx, txnTopic, c, c + Data.TXN_RECORDS, 0);
            // With C open, read_committed stops at the last stable offset: A only.
            try {
                Data.verify(Clients.consumeN(env, txnTopic, Data.TXN_RECORDS, READ_COMMITTED),
                        new Data.Expectation(Data.range(a, a + Data.TXN_RECORDS)));
            } catch (Main.Failed f) {
                throw new Main.Failed("read_committed while a transaction is open (want only the committed one)", f);
            }
            tx.commitTransaction();
        }
        List<Integer> committed = new ArrayList<>(Data.range(a, a + Data.TXN_RECORDS));
        committed.addAll(Data.range(c, c + Data.TXN_RECORDS));
        try {
            Data.verify(Clients.consumeN(env, txnTopic, 2 * Data.TXN_RECORDS, READ_COMMITTED), new Data.Expectation(committed));
        } catch (Main.Failed f) {
            throw new Main.Failed("read_committed (want the two committed transactions)", f);
        }
        try {
            Data.verify(Clients.consumeN(env, txnTopic, 3 * Data.TXN_RECORDS, READ_UNCOMMITTED),
                    new Data.Expectation(Data.range(0, 3 * Data.TXN_RECORDS)));
        } catch (Main.Failed f) {
            throw new Main.Failed("read_uncommitted (want all three transactions)", f);
        }
        consumeTransformProduce(env, txnTopic);
    }

    /**
     * A transaction that consumes and produces (sendOffsetsToTransaction): the
     * group's offsets commit with the transaction, and an aborted one commits
     * none.
     */
    static void consumeTransformProduce(Env env, String source) throws Exception {
        String out = env.topic("txn-out");
        String group = env.topic("txn-group");
        try (Admin admin = Clients.admin(env)) {
            Clients.createTopic(env, admin, out, 1, null);
        }
        var tp = new org.apache.kafka.common.TopicPartition(source, 0);
        try (KafkaProducer<byte[], byte[]> tx = Clients.producer(env, Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, env.topic("txid-ctp"),
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true"));
                var consumer = Clients.consumer(env, Map.of(ConsumerConfig.GROUP_ID_CONFIG, group,
                        ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
            tx.initTransactions();
            consumer.subscribe(List.of(source));
            int seen = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> positions = new java.util.HashMap<>();
            while (seen < 2 * Data.TXN_RECORDS && System.nanoTime() < deadline) {
                for (var r : consumer.poll(Duration.ofMillis(200))) {
                    seen++;
                    positions.put(new org.apache.kafka.common.TopicPartition(r.topic(), r.partition()),
                            new org.apache.kafka.clients.consumer.OffsetAndMetadata(r.offset() + 1));
                }
            }
            if (seen != 2 * Data.TXN_RECORDS) {
                throw new Main.Failed("consume-transform-produce: read " + seen + " committed records, want " + 2 * Data.TXN_RECORDS);
            }
            tx.beginTransaction();
            Clients.produceRange(tx, out, 0, 10, 0);
            tx.sendOffsetsToTransaction(positions, consumer.groupMetadata());
            tx.abortTransaction();
            try (Admin admin = Clients.admin(env)) {
                var after = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                if (after.values().stream().anyMatch(o -> o != null)) {
                    throw new Main.Failed("aborted transaction committed offsets " + after);
                }
                tx.beginTransaction();
                Clients.produceRange(tx, out, 10, 20, 0);
                tx.sendOffsetsToTransaction(positions, consumer.groupMetadata());
                tx.commitTransaction();
                after = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                if (!positions.equals(withoutNulls(after))) {
                    throw new Main.Failed("committed transaction: group offsets " + after + ", want " + positions);
                }
            }
        }
        Data.verify(Clients.consumeN(env, out, 10, READ_COMMITTED), new Data.Expectation(Data.range(10, 20)));
    }

    private static <K, V> Map<K, V> withoutNulls(Map<K, V> m) {
        Map<K, V> out = new java.util.HashMap<>();
        m.forEach((k, v) -> {
            if (v != null) {
                out.put(k, v);
            }
        });
        return out;
    }
}
