// Produces with Apache Kafka's Java client (which pushes client metrics,
// KIP-714, when the broker offers them) until stdin closes. Run as a
// single-file program on Kafka's classpath:
//
//   java -cp KAFKA_CLASSPATH TelemetryProducer.java BOOTSTRAP TOPIC CLIENT_ID
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class TelemetryProducer {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("client.id", args[2]);
        props.put("enable.metrics.push", "true");
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        AtomicBoolean done = new AtomicBoolean();
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() >= 0) { }
            } catch (Exception e) { }
            done.set(true);
        });
        stdin.setDaemon(true);
        stdin.start();
        int i = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            System.out.println("producing");
            while (!done.get()) {
                producer.send(new ProducerRecord<>(args[1], "telemetry-" + i++));
                Thread.sleep(50);
            }
            producer.flush();
        }
        System.out.println("ok produced " + i);
    }
}
