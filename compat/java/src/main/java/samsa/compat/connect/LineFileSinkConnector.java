package samsa.compat.connect;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;

/**
 * A sink connector that appends each record's value, as a line, to one
 * file per topic partition in a directory, exactly once: beside each data
 * file a small commit file names the next offset and the data file's
 * length at that offset, written (atomically, after the data is synced)
 * before the offset is committed to the group. A task that opens a
 * partition cuts its data file back to the committed length and rewinds
 * the consumer to the committed offset, so nothing is written twice and
 * nothing is skipped, whichever worker the task died on.
 *
 * <pre>
 *   directory/TOPIC-PARTITION.txt        the values, one per line
 *   directory/TOPIC-PARTITION.committed  "NEXT_OFFSET LENGTH\n"
 * </pre>
 */
public final class LineFileSinkConnector extends SinkConnector {
    static final String DIRECTORY = "directory";

    static final ConfigDef CONFIG = new ConfigDef()
        .define(DIRECTORY, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.HIGH, "The directory of the output files.");

    private Map<String, String> settings;

    @Override
    public void start(Map<String, String> props) {
        CONFIG.parse(props);
        settings = new HashMap<>(props);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return LineFileSinkTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> configs = new ArrayList<>();
        for (int i = 0; i < maxTasks; i++) {
            configs.add(settings);
        }
        return configs;
    }

    @Override
    public void stop() {}

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public String version() {
        return "1";
    }
}
