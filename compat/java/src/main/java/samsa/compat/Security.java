package samsa.compat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The security scenarios (compat/README.md, "Security"; mirrors
 * compat/go/secure.go): SECURE_RECORDS records produced over one secured
 * listener with the Java client's security.protocol, sasl.* and ssl.*
 * properties (PKCS12 stores; Kafka's unsecured OAUTHBEARER login), read
 * back from the start of the topic's one partition and checked in order;
 * scram-ssl also checks that a wrong password is refused with an
 * authentication error.
 */
final class Security {
    private Security() {}

    static final int SECURE_RECORDS = 200;
    private static final Pattern AUTH_ERROR = Pattern.compile("(?i)authenticat|SASL|credentials");

    static Main.Scenario scenario(String name) {
        return env -> run(env, name);
    }

    /** The client properties of scenario name, with password as the SASL password. */
    static Map<String, String> properties(String name, String password) {
        String user = getenv("COMPAT_SASL_USER");
        Map<String, String> p = new HashMap<>();
        String bootstrap;
        switch (name) {
            case "scram-ssl", "plain-ssl" -> {
                bootstrap = getenv("COMPAT_SASL_SSL_BOOTSTRAP");
                p.put("security.protocol", "SASL_SSL");
                boolean scram = name.equals("scram-ssl");
                p.put("sasl.mechanism", scram ? "SCRAM-SHA-512" : "PLAIN");
                String module = scram ? "org.apache.kafka.common.security.scram.ScramLoginModule"
                        : "org.apache.kafka.common.security.plain.PlainLoginModule";
                p.put("sasl.jaas.config", module + " required username=\"" + user + "\" password=\"" + password + "\";");
            }
            case "mtls" -> {
                bootstrap = getenv("COMPAT_SSL_BOOTSTRAP");
                p.put("security.protocol", "SSL");
                p.put("ssl.keystore.type", "PKCS12");
                p.put("ssl.keystore.location", getenv("COMPAT_SSL_KEYSTORE"));
                p.put("ssl.keystore.password", getenv("COMPAT_SSL_STORE_PASSWORD"));
            }
            case "oauth" -> {
                bootstrap = getenv("COMPAT_SASL_PLAINTEXT_BOOTSTRAP");
                p.put("security.protocol", "SASL_PLAINTEXT");
                p.put("sasl.mechanism", "OAUTHBEARER");
                // Kafka's default login callback handler for OAUTHBEARER
                // makes unsecured tokens (KIP-255) from these options.
                p.put("sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required"
                        + " unsecuredLoginStringClaim_sub=\"" + user + "\";");
            }
            default -> throw new Main.Failed("unknown security scenario " + name);
        }
        if (p.get("security.protocol").endsWith("SSL")) {
            p.put("ssl.truststore.type", "PKCS12");
            p.put("ssl.truststore.location", getenv("COMPAT_SSL_TRUSTSTORE"));
            p.put("ssl.truststore.password", getenv("COMPAT_SSL_STORE_PASSWORD"));
        }
        p.put("bootstrap.servers", bootstrap);
        return p;
    }

    private static String getenv(String key) {
        String v = System.getenv(key);
        if (v == null || v.isEmpty()) {
            throw new Main.Failed("the security scenarios need the runner's " + key);
        }
        return v;
    }

    private static Properties props(Map<String, String> security, String clientId) {
        Properties p = new Properties();
        p.put("client.id", "compat-java-" + clientId);
        p.putAll(security);
        return p;
    }

    static void run(Env env, String name) throws Exception {
        Map<String, String> security = properties(name, System.getenv("COMPAT_SASL_PASSWORD"));
        String topic = env.topic(name);
        List<String> values = new ArrayList<>();
        for (int i = 0; i < SECURE_RECORDS; i++) {
            values.add(name + "-" + i);
        }
        System.err.println("[java] " + name + ": producing " + SECURE_RECORDS + " records over " + security.get("security.protocol"));
        Properties pp = props(security, "producer");
        pp.put("acks", "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
            for (String v : values) {
                producer.send(new ProducerRecord<>(topic, 0, null, v));
            }
            producer.flush();
            // A failed send surfaces on its future; the last one covers the
            // order of all (same partition, no retries past it).
            producer.send(new ProducerRecord<>(topic, 0, null, values.get(values.size() - 1) + "-end")).get();
        }
        Properties cp = props(security, "consumer");
        cp.put("enable.auto.commit", "false");
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            while (got.size() < SECURE_RECORDS + 1 && !env.expired()) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    got.add(r.value());
                }
            }
        }
        List<String> want = new ArrayList<>(values);
        want.add(values.get(values.size() - 1) + "-end");
        if (!got.equals(want)) {
            throw new Main.Failed("read " + got.size() + " records back, not the " + want.size() + " produced in order");
        }
        if (!name.equals("scram-ssl")) {
            return;
        }
        Properties wrong = props(properties(name, "not-" + System.getenv("COMPAT_SASL_PASSWORD")), "wrong-password");
        wrong.put("default.api.timeout.ms", "15000");
        wrong.put("request.timeout.ms", "10000");
        try (Admin admin = Admin.create(wrong)) {
            admin.listTopics().names().get();
        } catch (Exception e) {
            String reason = Main.describe(e);
            if (!AUTH_ERROR.matcher(reason).find()) {
                throw new Main.Failed("a wrong SCRAM password failed without an authentication error: " + reason);
            }
            throw new Main.PassWith("wrong password refused: " + (reason.length() > 120 ? reason.substring(0, 120) : reason));
        }
        throw new Main.Failed("a wrong SCRAM password was accepted");
    }
}
