package samsa.compat.connect;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * A source connector that produces each line of one file as a record (a
 * string value, no key) and follows the file as it grows. Its source
 * offset is the byte position after the last line produced, so a task
 * restarted anywhere resumes where the committed offsets say; with
 * exactly.once.source.support=enabled the records and those offsets are
 * written in one transaction.
 *
 * <pre>
 *   file         the file to read (required)
 *   topic        the topic to produce to (required)
 *   batch.lines  most lines returned by one poll (default 500)
 * </pre>
 */
public final class LineFileSourceConnector extends SourceConnector {
    static final String FILE = "file";
    static final String TOPIC = "topic";
    static final String BATCH_LINES = "batch.lines";

    static final ConfigDef CONFIG = new ConfigDef()
        .define(FILE, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.HIGH, "The file whose lines are produced.")
        .define(TOPIC, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.HIGH, "The topic the lines are produced to.")
        .define(BATCH_LINES, ConfigDef.Type.INT, 500, ConfigDef.Range.between(1, 100_000), ConfigDef.Importance.LOW, "The most lines one poll returns.");

    private Map<String, String> settings;

    @Override
    public void start(Map<String, String> props) {
        CONFIG.parse(props);
        settings = new HashMap<>(props);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return LineFileSourceTask.class;
    }

    /** One file is one ordered stream, so there is one task whatever tasks.max says. */
    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        return List.of(settings);
    }

    @Override
    public void stop() {}

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> props) {
        return ExactlyOnceSupport.SUPPORTED;
    }

    @Override
    public String version() {
        return "1";
    }
}
