package samsa.compat;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;


/**
 * The Java compat driver: runs one scenario of the compat suite
 * (compat/README.md) with Apache Kafka's Java client against a running broker
 * and prints the result as one JSON line on stdout. Progress goes to stderr.
 *
 * <pre>
 *   java -cp "$(cat compat/java/target/classpath.txt):compat/java/target/samsa-compat-java.jar" \
 *       samsa.compat.Main produce
 * </pre>
 *
 * It reads COMPAT_BOOTSTRAP, COMPAT_PREFIX, COMPAT_RECORDS and COMPAT_TIMEOUT
 * (seconds) like every other driver.
 */
public final class Main {
    private Main() {}

    /** The client has no API for the scenario. */
    static final class NotApplicable extends RuntimeException {
        NotApplicable(String reason) { super(reason); }
    }

    /** The scenario passed; the message is a note for the matrix. */
    static final class PassWith extends RuntimeException {
        PassWith(String detail) { super(detail); }
    }

    /** The scenario failed with a reason worth showing as is. */
    static final class Failed extends RuntimeException {
        Failed(String reason) { super(reason); }
        Failed(String reason, Throwable cause) { super(reason, cause); }
    }

    interface Scenario {
        void run(Env env) throws Exception;
    }

    static final Map<String, Scenario> SCENARIOS = Map.ofEntries(
            Map.entry("metadata", Produce::metadata),
            Map.entry("produce", Produce::produce),
            Map.entry("consume", Produce::consume),
            Map.entry("groups", Groups::groups),
            Map.entry("transactions", Transactions::transactions),
            Map.entry("admin", Admin::admin),
            Map.entry("errors", Errors::errors),
            Map.entry("scram-ssl", Security.scenario("scram-ssl")),
            Map.entry("plain-ssl", Security.scenario("plain-ssl")),
            Map.entry("mtls", Security.scenario("mtls")),
            Map.entry("oauth", Security.scenario("oauth")));

    public static void main(String[] args) {
        if (args.length != 1 || !SCENARIOS.containsKey(args[0])) {
            System.err.println("usage: samsa.compat.Main SCENARIO (one of " + SCENARIOS.keySet() + ")");
            System.exit(2);
        }
        // The JSON line must be the only thing on stdout.
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        String scenario = args[0];
        Env env = Env.fromEnvironment();
        long start = System.nanoTime();
        String status = "pass";
        String detail = "";
        try {
            SCENARIOS.get(scenario).run(env);
        } catch (PassWith p) {
            detail = p.getMessage();
        } catch (NotApplicable n) {
            status = "n/a";
            detail = n.getMessage();
        } catch (Throwable t) {
            status = "fail";
            detail = describe(t);
            if (env.expired()) {
                detail = "timed out after " + env.timeoutSeconds + "s: " + detail;
            }
            t.printStackTrace(System.err);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        out.println("{\"client\":\"java\",\"scenario\":" + json(scenario)
                + ",\"status\":" + json(status)
                + ",\"detail\":" + json(detail)
                + ",\"version\":" + json(clientVersion())
                + ",\"seconds\":" + json(String.format("%.1f", seconds)) + "}");
        out.flush();
        // Client threads (a consumer stuck in a poll) must not hold the JVM.
        Runtime.getRuntime().halt(0);
    }

    /** kafka-clients' version, from the properties file its jar carries. */
    static String clientVersion() {
        try (var in = org.apache.kafka.clients.producer.KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            java.util.Properties p = new java.util.Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (Exception e) {
            return "unknown";
        }
    }

    /** The message of t and its causes, one line. */
    static String describe(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (b.length() > 0) {
                b.append(": ");
            }
            if (!(c instanceof Failed)) {
                b.append(c.getClass().getSimpleName());
                if (c.getMessage() != null) {
                    b.append(" ");
                }
            }
            if (c.getMessage() != null) {
                b.append(c.getMessage());
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return b.toString();
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    static void log(String format, Object... args) {
        String now = DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneOffset.UTC).format(Instant.now());
        System.err.println("[java " + now + "] " + String.format(format, args));
    }
}
