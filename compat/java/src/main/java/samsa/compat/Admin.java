package samsa.compat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

/**
 * The admin scenario with the Java Admin client: topics (create, describe,
 * list, delete), configs (describe, incremental alter, broker), partitions,
 * offsets (list, delete records), consumer groups (list, describe, offsets:
 * list, alter, delete), log dirs, the cluster, the quorum and features.
 */
final class Admin {
    private Admin() {}

    static void admin(Env env) throws Exception {
        try (org.apache.kafka.clients.admin.Admin admin = Clients.admin(env)) {
            String topic = env.topic("admin");
            Clients.createTopic(env, admin, topic, 2, Map.of("retention.ms", "3600000"));
            TopicDescription td = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            if (td.topicId() == null || td.topicId().equals(org.apache.kafka.common.Uuid.ZERO_UUID)) {
                throw new Main.Failed("describe topic: no topic id");
            }
            if (!Clients.listTopics(admin).contains(topic)) {
                throw new Main.Failed("list topics does not list " + topic);
            }

            ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Map<String, String> cfg = configs(admin, res);
            want("describe configs", cfg, "retention.ms", "3600000");
            want("describe configs", cfg, "cleanup.policy", "delete");
            admin.incrementalAlterConfigs(Map.of(res, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", "2000000"), AlterConfigOp.OpType.SET)))).all().get();
            cfg = configs(admin, res);
            want("after incremental alter", cfg, "retention.ms", "7200000");
            want("after incremental alter", cfg, "max.message.bytes", "2000000");
            admin.incrementalAlterConfigs(Map.of(res, List.of(
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", ""), AlterConfigOp.OpType.DELETE)))).all().get();
            cfg = configs(admin, res);
            want("after deleting the max.message.bytes override", cfg, "max.message.bytes", "1048588");

            DescribeClusterResult cluster = admin.describeCluster();
            List<Node> nodes = List.copyOf(cluster.nodes().get());
            if (nodes.isEmpty() || cluster.clusterId().get() == null || cluster.controller().get() == null) {
                throw new Main.Failed("describe cluster: nodes " + nodes + ", cluster id " + cluster.clusterId().get()
                        + ", controller " + cluster.controller().get());
            }
            String broker = Integer.toString(nodes.get(0).id());
            Map<String, String> bcfg = configs(admin, new ConfigResource(ConfigResource.Type.BROKER, broker));
            want("describe broker configs", bcfg, "auto.create.topics.enable", "false");

            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all().get();
            Clients.waitPartitions(env, admin, topic, 4);

            // Offsets: 40 records, 10 a partition; list, then delete records.
            try (KafkaProducer<byte[], byte[]> p = Clients.producer(env, Map.of())) {
                for (int i = 0; i < 40; i++) {
                    p.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, i % 4, null,
                            Data.valueFor(i).getBytes()));
                }
                p.flush();
            }
            TopicPartition p0 = new TopicPartition(topic, 0);
            long latest = offset(admin, p0, OffsetSpec.latest());
            long earliest = offset(admin, p0, OffsetSpec.earliest());
            if (latest != 10 || earliest != 0) {
                throw new Main.Failed("list offsets of partition 0: earliest " + earliest + " latest " + latest + ", want 0 and 10");
            }
            long low = admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(4))).lowWatermarks().get(p0).get().lowWatermark();
            if (low != 4 || offset(admin, p0, OffsetSpec.earliest()) != 4) {
                throw new Main.Failed("delete records before 4: low watermark " + low + ", earliest " + offset(admin, p0, OffsetSpec.earliest()));
            }
            long maxTs = offset(admin, p0, OffsetSpec.maxTimestamp());
            if (maxTs < 4 || maxTs > 9) {
                throw new Main.Failed("list offsets max timestamp: " + maxTs + ", want an offset in 4..9");
            }

            groups(env, admin, topic);

            Map<Integer, Map<String, LogDirDescription>> dirs = admin.describeLogDirs(List.of(nodes.get(0).id())).allDescriptions().get();
            boolean found = false;
            for (LogDirDescription d : dirs.getOrDefault(nodes.get(0).id(), Map.of()).values()) {
                if (d.error() != null) {
                    throw new Main.Failed("describe log dirs: " + d.error());
                }
                var info = d.replicaInfos().get(p0);
                if (info != null) {
                    found = true;
                    if (info.size() <= 0) {
                        throw new Main.Failed("describe log dirs: " + p0 + " has size " + info.size());
                    }
                }
            }
            if (!found) {
                throw new Main.Failed("describe log dirs does not list " + p0 + ": " + dirs);
            }

            QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get();
            if (q.leaderId() < 0 || q.voters().isEmpty() || q.voters().stream().noneMatch(v -> v.replicaId() == q.leaderId())) {
                throw new Main.Failed("describe quorum: leader " + q.leaderId() + ", voters " + q.voters());
            }
            FeatureMetadata f = admin.describeFeatures().featureMetadata().get();
            if (!f.finalizedFeatures().containsKey("metadata.version")) {
                throw new Main.Failed("describe features: no metadata.version among " + f.finalizedFeatures().keySet());
            }

            admin.deleteTopics(List.of(topic)).all().get();
            Data.waitFor(env, Duration.ofSeconds(15), "deleted topic", () ->
                    Clients.listTopics(admin).contains(topic) ? "still listed" : null);
        }
        throw new Main.PassWith("topics, configs, partitions, offsets, records, groups, log dirs, cluster, quorum, features");
    }

    /** Consumer group admin: offsets committed by a consumer, listed, altered, deleted; the group deleted. */
    static void groups(Env env, org.apache.kafka.clients.admin.Admin admin, String topic) throws Exception {
        String group = env.topic("admin-group");
        TopicPartition p1 = new TopicPartition(topic, 1);
        TopicPartition p2 = new TopicPartition(topic, 2);
        try (KafkaConsumer<byte[], byte[]> c = Clients.consumer(env, Map.of("group.id", group))) {
            c.assign(List.of(p1, p2));
            c.commitSync(Map.of(p1, new OffsetAndMetadata(3, "m"), p2, new OffsetAndMetadata(5)));
        }
        Map<TopicPartition, OffsetAndMetadata> got = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        if (got.get(p1) == null || got.get(p1).offset() != 3 || !"m".equals(got.get(p1).metadata()) || got.get(p2) == null || got.get(p2).offset() != 5) {
            throw new Main.Failed("list group offsets: " + got + ", want " + p1 + "=3 (metadata m), " + p2 + "=5");
        }
        boolean listed = admin.listGroups().all().get().stream().anyMatch(g -> g.groupId().equals(group));
        if (!listed) {
            throw new Main.Failed("list groups does not list " + group);
        }
        var desc = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        if (!desc.members().isEmpty() || desc.groupState() != org.apache.kafka.common.GroupState.EMPTY) {
            throw new Main.Failed("describe group: state " + desc.groupState() + ", " + desc.members().size() + " members, want Empty and none");
        }
        admin.alterConsumerGroupOffsets(group, Map.of(p1, new OffsetAndMetadata(7))).all().get();
        admin.deleteConsumerGroupOffsets(group, Set.of(p2)).all().get();
        got = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        if (got.get(p1) == null || got.get(p1).offset() != 7 || got.get(p2) != null) {
            throw new Main.Failed("after alter and delete offsets: " + got + ", want " + p1 + "=7 and no " + p2);
        }
        admin.deleteConsumerGroups(List.of(group)).all().get();
        if (admin.listGroups().all().get().stream().anyMatch(g -> g.groupId().equals(group))) {
            throw new Main.Failed("deleted group still listed");
        }
    }

    static long offset(org.apache.kafka.clients.admin.Admin admin, TopicPartition tp, OffsetSpec spec) throws Exception {
        ListOffsetsResult.ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get();
        return info.offset();
    }

    static Map<String, String> configs(org.apache.kafka.clients.admin.Admin admin, ConfigResource res) throws Exception {
        Config c = admin.describeConfigs(List.of(res)).all().get().get(res);
        Map<String, String> out = new java.util.HashMap<>();
        for (ConfigEntry e : c.entries()) {
            if (e.value() != null) {
                out.put(e.name(), e.value());
            }
        }
        return out;
    }

    static void want(String what, Map<String, String> cfg, String key, String value) {
        if (!value.equals(cfg.get(key))) {
            throw new Main.Failed(what + ": " + key + " = " + cfg.get(key) + ", want " + value);
        }
    }
}
