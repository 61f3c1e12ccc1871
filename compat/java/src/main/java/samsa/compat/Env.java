package samsa.compat;

import java.time.Duration;
import java.util.Properties;

import org.apache.kafka.clients.CommonClientConfigs;

/** What a scenario needs to know about its run (compat/README.md). */
final class Env {
    final String bootstrap;
    final String prefix; // topics, groups and transactional ids start with it
    final int records; // records per produce/consume run
    final int timeoutSeconds;
    private final long deadlineNanos;

    private Env(String bootstrap, String prefix, int records, int timeoutSeconds) {
        this.bootstrap = bootstrap;
        this.prefix = prefix;
        this.records = records;
        this.timeoutSeconds = timeoutSeconds;
        // Leave the runner a margin so a scenario reports its own timeout.
        int own = timeoutSeconds > 10 ? timeoutSeconds - 5 : timeoutSeconds;
        this.deadlineNanos = System.nanoTime() + Duration.ofSeconds(own).toNanos();
    }

    static Env fromEnvironment() {
        return new Env(
                getenv("COMPAT_BOOTSTRAP", "127.0.0.1:9092"),
                getenv("COMPAT_PREFIX", "compat-java"),
                Integer.parseInt(getenv("COMPAT_RECORDS", "10000")),
                Integer.parseInt(getenv("COMPAT_TIMEOUT", "120")));
    }

    String topic(String name) {
        return prefix + "-" + name;
    }

    boolean expired() {
        return System.nanoTime() > deadlineNanos;
    }

    /** Time left before the scenario's deadline (never negative). */
    Duration left() {
        return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
    }

    /** The properties every client of this run starts from. */
    Properties base(String clientId) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(CommonClientConfigs.CLIENT_ID_CONFIG, "compat-java-" + clientId);
        return p;
    }

    private static String getenv(String key, String fallback) {
        String v = System.getenv(key);
        return v == null || v.isEmpty() ? fallback : v;
    }
}
