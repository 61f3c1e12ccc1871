package samsa.compat;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * The errors scenario: producing to a missing topic with auto-create off,
 * then the admin requests Kafka refuses, each of which must fail with the
 * exception the Java client maps Kafka's error code to.
 */
final class Errors {
    private Errors() {}

    static void errors(Env env) throws Exception {
        String topic = env.topic("missing");
        long start = System.nanoTime();
        Throwable err;
        // The producer waits max.block.ms (60 s) for the topic's metadata;
        // 10 s keeps the suite short.
        try (KafkaProducer<byte[], byte[]> p = Clients.producer(env, Map.of(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000"))) {
            Future<RecordMetadata> f = p.send(new ProducerRecord<>(topic, "x".getBytes()));
            f.get();
            throw new Main.Failed("produce to a topic that does not exist succeeded");
        } catch (ExecutionException ex) {
            err = ex.getCause();
        } catch (TimeoutException ex) {
            err = ex;
        }
        double took = (System.nanoTime() - start) / 1e9;
        if (!(err instanceof TimeoutException) && !(err instanceof UnknownTopicOrPartitionException)) {
            throw new Main.Failed(String.format("after %.1fs: got %s, want an unknown topic error", took, Main.describe(err)));
        }
        try (Admin admin = Clients.admin(env)) {
            // The Java producer reports a missing topic as a metadata timeout;
            // the broker must have answered that the topic is unknown.
            expect("describe the missing topic", admin.describeTopics(List.of(topic)).allTopicNames(), UnknownTopicOrPartitionException.class);
            if (Clients.listTopics(admin).contains(topic)) {
                throw new Main.Failed("topic " + topic + " exists after the failed produce: the broker auto-created it");
            }
            adminErrors(env, admin);
        }
        throw new Main.PassWith(String.format("%s after %.1fs (metadata: UNKNOWN_TOPIC_OR_PARTITION); admin errors as Kafka",
                err.getClass().getSimpleName(), took));
    }

    /** Requests Kafka refuses, and the exception each must give. */
    static void adminErrors(Env env, Admin admin) throws Exception {
        String missing = env.topic("missing");
        expect("create a topic with 0 partitions",
                admin.createTopics(List.of(new NewTopic(env.topic("zero"), 0, (short) 1))).all(), InvalidPartitionsException.class);
        expect("create a topic with replication factor 3 on one broker",
                admin.createTopics(List.of(new NewTopic(env.topic("rf3"), 1, (short) 3))).all(), InvalidReplicationFactorException.class);
        expect("create a topic named ..",
                admin.createTopics(List.of(new NewTopic("..", 1, (short) 1))).all(), InvalidTopicException.class);
        expect("create a topic with retention.ms=forever",
                admin.createTopics(List.of(new NewTopic(env.topic("badcfg"), 1, (short) 1)
                        .configs(Map.of("retention.ms", "forever")))).all(), InvalidConfigurationException.class);
        expect("delete a missing topic", admin.deleteTopics(List.of(missing)).all(), UnknownTopicOrPartitionException.class);
        expect("create partitions of a missing topic",
                admin.createPartitions(Map.of(missing, NewPartitions.increaseTo(4))).all(), UnknownTopicOrPartitionException.class);

        String topic = env.topic("errors");
        Clients.createTopic(env, admin, topic, 2, null);
        expect("shrink partitions 2 -> 1",
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(1))).all(), InvalidPartitionsException.class);
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        expect("set retention.ms=forever",
                admin.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                        new ConfigEntry("retention.ms", "forever"), AlterConfigOp.OpType.SET)))).all(),
                InvalidConfigurationException.class);
        expect("delete records past the high watermark",
                admin.deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(100))).all(),
                OffsetOutOfRangeException.class);
        expect("describe configs of a missing topic",
                admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, missing))).all(),
                UnknownTopicOrPartitionException.class);
        expect("delete a missing group",
                admin.deleteConsumerGroups(List.of(env.topic("no-such-group"))).all(), GroupIdNotFoundException.class);
    }

    static void expect(String what, KafkaFuture<?> f, Class<? extends Throwable> want) throws InterruptedException {
        try {
            f.get();
        } catch (ExecutionException ex) {
            if (want.isInstance(ex.getCause())) {
                return;
            }
            throw new Main.Failed(what + ": got " + Main.describe(ex.getCause()) + ", want " + want.getSimpleName());
        }
        throw new Main.Failed(what + ": succeeded, want " + want.getSimpleName());
    }
}
