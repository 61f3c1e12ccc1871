package samsa.compat.connect;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/**
 * The task of {@link LineFileSourceConnector}. Only complete lines (ending
 * in a newline) are produced; a partial last line waits for its newline.
 */
public final class LineFileSourceTask extends SourceTask {
    static final String POSITION = "position";
    private static final int READ_BYTES = 64 * 1024;
    private static final int LINE_BYTES_MAX = 1 << 20;

    private String path;
    private String topic;
    private int batchLines;
    private Map<String, String> sourcePartition;
    private RandomAccessFile file;
    private long position;

    @Override
    public void start(Map<String, String> props) {
        AbstractConfig config = new AbstractConfig(LineFileSourceConnector.CONFIG, props);
        path = config.getString(LineFileSourceConnector.FILE);
        topic = config.getString(LineFileSourceConnector.TOPIC);
        batchLines = config.getInt(LineFileSourceConnector.BATCH_LINES);
        sourcePartition = Map.of(LineFileSourceConnector.FILE, path);
        Map<String, Object> offset = context.offsetStorageReader().offset(sourcePartition);
        position = offset == null ? 0 : ((Number) offset.get(POSITION)).longValue();
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        try {
            if (file == null) {
                if (!new java.io.File(path).exists()) {
                    Thread.sleep(200);
                    return null;
                }
                file = new RandomAccessFile(path, "r");
            }
            List<SourceRecord> records = readLines();
            if (records.isEmpty()) {
                Thread.sleep(100);
                return null;
            }
            return records;
        } catch (IOException e) {
            throw new ConnectException("reading " + path, e);
        }
    }

    /** Reads up to batchLines complete lines from position on. */
    private List<SourceRecord> readLines() throws IOException {
        List<SourceRecord> records = new ArrayList<>();
        byte[] buffer = new byte[READ_BYTES];
        int filled = 0;
        long start = position;
        file.seek(start);
        while (records.size() < batchLines) {
            if (filled == buffer.length) {
                if (buffer.length >= LINE_BYTES_MAX) {
                    throw new ConnectException(path + ": a line at byte " + start + " is longer than " + LINE_BYTES_MAX + " bytes");
                }
                buffer = java.util.Arrays.copyOf(buffer, buffer.length * 2);
            }
            int n = file.read(buffer, filled, buffer.length - filled);
            if (n <= 0) {
                break;
            }
            filled += n;
            int lineStart = 0;
            for (int i = 0; i < filled && records.size() < batchLines; i++) {
                if (buffer[i] != '\n') {
                    continue;
                }
                String line = new String(buffer, lineStart, i - lineStart, StandardCharsets.UTF_8);
                long next = start + i + 1;
                records.add(new SourceRecord(sourcePartition, Map.of(POSITION, next), topic, null, null, null, Schema.STRING_SCHEMA, line));
                lineStart = i + 1;
            }
            // Keep the partial line for the next read.
            System.arraycopy(buffer, lineStart, buffer, 0, filled - lineStart);
            filled -= lineStart;
            start += lineStart;
        }
        position = start;
        return records;
    }

    @Override
    public void stop() {
        if (file != null) {
            try {
                file.close();
            } catch (IOException e) {
                // Closing a file opened for reading loses nothing.
            }
        }
    }

    @Override
    public String version() {
        return "1";
    }
}
