package samsa.compat.connect;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/** The task of {@link LineFileSinkConnector}; see there for the files. */
public final class LineFileSinkTask extends SinkTask {
    private Path directory;
    private final Map<TopicPartition, Output> outputs = new HashMap<>();

    /** One partition's data file and the next offset it expects. */
    private static final class Output {
        final FileChannel data;
        long nextOffset;

        Output(FileChannel data, long nextOffset) {
            this.data = data;
            this.nextOffset = nextOffset;
        }
    }

    @Override
    public void start(Map<String, String> props) {
        AbstractConfig config = new AbstractConfig(LineFileSinkConnector.CONFIG, props);
        directory = Path.of(config.getString(LineFileSinkConnector.DIRECTORY));
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new ConnectException("creating " + directory, e);
        }
    }

    private Path dataPath(TopicPartition tp) {
        return directory.resolve(tp.topic() + "-" + tp.partition() + ".txt");
    }

    private Path commitPath(TopicPartition tp) {
        return directory.resolve(tp.topic() + "-" + tp.partition() + ".committed");
    }

    @Override
    public void open(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            try {
                long nextOffset = 0;
                long length = 0;
                Path commit = commitPath(tp);
                if (Files.exists(commit)) {
                    String[] fields = Files.readString(commit, StandardCharsets.UTF_8).trim().split(" ");
                    nextOffset = Long.parseLong(fields[0]);
                    length = Long.parseLong(fields[1]);
                }
                FileChannel data = FileChannel.open(dataPath(tp), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                data.truncate(length);
                data.position(length);
                outputs.put(tp, new Output(data, nextOffset));
                context.offset(tp, nextOffset);
            } catch (IOException e) {
                throw new ConnectException("opening the output of " + tp, e);
            }
        }
    }

    @Override
    public void put(Collection<SinkRecord> records) {
        for (SinkRecord record : records) {
            TopicPartition tp = new TopicPartition(record.topic(), record.kafkaPartition());
            Output output = outputs.get(tp);
            if (output == null) {
                throw new ConnectException("a record of " + tp + ", which this task has not opened");
            }
            // Records before the rewind point arrive when the consumer had
            // fetched ahead of an offset reset; they are already written.
            if (record.kafkaOffset() < output.nextOffset) {
                continue;
            }
            byte[] line = (String.valueOf(record.value()) + "\n").getBytes(StandardCharsets.UTF_8);
            try {
                ByteBuffer buffer = ByteBuffer.wrap(line);
                while (buffer.hasRemaining()) {
                    output.data.write(buffer);
                }
            } catch (IOException e) {
                throw new ConnectException("writing the output of " + tp, e);
            }
            output.nextOffset = record.kafkaOffset() + 1;
        }
    }

    /** Syncs every data file and records its commit point, then lets exactly those offsets be committed. */
    @Override
    public Map<TopicPartition, OffsetAndMetadata> preCommit(Map<TopicPartition, OffsetAndMetadata> currentOffsets) {
        Map<TopicPartition, OffsetAndMetadata> committable = new HashMap<>();
        for (Map.Entry<TopicPartition, Output> entry : outputs.entrySet()) {
            TopicPartition tp = entry.getKey();
            Output output = entry.getValue();
            try {
                output.data.force(true);
                Path commit = commitPath(tp);
                Path temporary = commit.resolveSibling(commit.getFileName() + ".tmp");
                Files.writeString(temporary, output.nextOffset + " " + output.data.position() + "\n", StandardCharsets.UTF_8);
                try (FileChannel sync = FileChannel.open(temporary, StandardOpenOption.WRITE)) {
                    sync.force(true);
                }
                Files.move(temporary, commit, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                throw new ConnectException("committing the output of " + tp, e);
            }
            committable.put(tp, new OffsetAndMetadata(output.nextOffset));
        }
        return committable;
    }

    @Override
    public void close(Collection<TopicPartition> partitions) {
        preCommit(Map.of());
        for (TopicPartition tp : partitions) {
            Output output = outputs.remove(tp);
            if (output == null) {
                continue;
            }
            try {
                output.data.close();
            } catch (IOException e) {
                throw new ConnectException("closing the output of " + tp, e);
            }
        }
    }

    @Override
    public void stop() {
        close(Map.copyOf(outputs).keySet());
    }

    @Override
    public String version() {
        return "1";
    }
}
