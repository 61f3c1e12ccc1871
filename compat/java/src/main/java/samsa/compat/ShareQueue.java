package samsa.compat;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Apache Kafka's KafkaShareConsumer (KIP-932) on one share group: CONSUMERS
 * consumers in threads read TOPIC until every one of EXPECTED distinct keys
 * was accepted, acknowledging each record explicitly (ACCEPT), except the
 * key "poison", which is released every time it comes, and until it came
 * POISON_DELIVERIES times (the broker then archives it). Prints one line:
 * "accepted N twice T redelivered R poison P" (P the deliveries of the
 * poison record) and exits 0, or 1 on a timeout.
 *
 * <pre>
 *   java -cp ... samsa.compat.ShareQueue BOOTSTRAP TOPIC GROUP CONSUMERS EXPECTED POISON_DELIVERIES TIMEOUT_SECONDS
 * </pre>
 */
public final class ShareQueue {
    private ShareQueue() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2];
        int consumers = Integer.parseInt(args[3]), expected = Integer.parseInt(args[4]);
        int poisonDeliveries = Integer.parseInt(args[5]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[6]) * 1000;
        Map<String, Integer> accepted = new ConcurrentHashMap<>();
        AtomicInteger redelivered = new AtomicInteger(), poison = new AtomicInteger();
        Thread[] threads = new Thread[consumers];
        for (int i = 0; i < consumers; i++) {
            threads[i] = new Thread(() -> {
                Properties p = new Properties();
                p.put("bootstrap.servers", bootstrap);
                p.put("group.id", group);
                p.put("share.acknowledgement.mode", "explicit");
                try (KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
                    c.subscribe(List.of(topic));
                    while ((accepted.size() < expected || poison.get() < poisonDeliveries) && System.currentTimeMillis() < deadline) {
                        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                            if (r.deliveryCount().orElse((short) 1) > 1) {
                                redelivered.incrementAndGet();
                            }
                            if ("poison".equals(r.key())) {
                                poison.incrementAndGet();
                                c.acknowledge(r, AcknowledgeType.RELEASE);
                                continue;
                            }
                            accepted.merge(r.key(), 1, Integer::sum);
                            c.acknowledge(r, AcknowledgeType.ACCEPT);
                        }
                        c.commitSync();
                    }
                }
            });
            threads[i].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        int twice = 0;
        for (int n : new HashMap<>(accepted).values()) {
            if (n > 1) twice++;
        }
        System.out.println("accepted " + accepted.size() + " twice " + twice + " redelivered " + redelivered.get() + " poison " + poison.get());
        System.exit(accepted.size() == expected && poison.get() >= poisonDeliveries ? 0 : 1);
    }
}
