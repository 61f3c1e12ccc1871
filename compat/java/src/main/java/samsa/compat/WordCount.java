package samsa.compat;

import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A Kafka Streams word count run against Samsa by compat/ecosystem: lines
 * from an input topic are split into words, re-keyed by word (a repartition
 * topic), counted in a state store (a changelog topic, one standby replica)
 * and the counts written to an output topic, with
 * processing.guarantee=exactly_once_v2.
 *
 * <pre>
 *   WordCount BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR REPLICATION_FACTOR [GROUP_PROTOCOL]
 * </pre>
 *
 * GROUP_PROTOCOL is Kafka Streams' group.protocol: "classic" (the default)
 * or "streams" (KIP-1071, the broker assigns the tasks).
 *
 * It prints "state RUNNING" (and every other state change) on stdout, and
 * runs until killed or SIGTERM.
 */
public final class WordCount {
    private WordCount() {}

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 6 && args.length != 7) {
            System.err.println("usage: WordCount BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR REPLICATION_FACTOR [GROUP_PROTOCOL]");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        p.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, args[5]);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, "1");
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        if (args.length == 7) {
            p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, args[6]);
        }

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(args[2], Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
                .filter((key, word) -> !word.isEmpty())
                .groupBy((key, word) -> word)
                .count(Materialized.as("counts"))
                .toStream()
                .to(args[3], Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), p);
        CountDownLatch done = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println("state " + now);
            System.out.flush();
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                done.countDown();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            done.countDown();
        }));
        streams.start();
        done.await();
    }
}
