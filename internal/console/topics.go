package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

type topicRow struct {
	Name              string
	Partitions        int
	ReplicationFactor int
	SizeBytes         int64
	RemoteBytes       int64
	RetentionMs       string
	CleanupPolicy     string
	Internal          bool
}

type partitionRow struct {
	Partition   int32
	Leader      int32
	LeaderEpoch int32
	Replicas    []int32
	ISR         []int32
	StartOffset int64
	EndOffset   int64
	SizeBytes   int64
	RemoteBytes int64
	Error       string
}

type configRow struct {
	Name, Value, Source string
	Sensitive           bool
}

type topicData struct {
	Topic      topicRow
	Partitions []partitionRow
	Configs    []configRow
}

// configValue returns a topic config's value, or "".
func configValue(rc kadm.ResourceConfig, key string) string {
	for _, config := range rc.Configs {
		if config.Key == key && config.Value != nil {
			return *config.Value
		}
	}
	return ""
}

// topicSizes sums the log dir sizes of every partition replica, by topic
// and partition (the leader's copy).
func topicSizes(all kadm.DescribedAllLogDirs) map[string]map[int32]int64 {
	out := map[string]map[int32]int64{}
	all.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if out[p.Topic] == nil {
				out[p.Topic] = map[int32]int64{}
			}
			out[p.Topic][p.Partition] = max(out[p.Topic][p.Partition], p.Size)
		})
	})
	return out
}

// remoteSizes reads the bytes in remote storage of each partition this
// node leads from its samsa_remote_log_size_bytes gauge (Kafka's
// RemoteLogSizeBytes): the Kafka protocol has no request that reports them.
func (c *Console) remoteSizes() map[string]map[int32]int64 {
	out := map[string]map[int32]int64{}
	if c.config.Gatherer == nil {
		return out
	}
	families, _ := c.config.Gatherer.Gather()
	for _, family := range families {
		if family.GetName() != "samsa_remote_log_size_bytes" {
			continue
		}
		for _, m := range family.GetMetric() {
			topic, partition := "", int64(-1)
			for _, label := range m.GetLabel() {
				switch label.GetName() {
				case "topic":
					topic = label.GetValue()
				case "partition":
					partition, _ = strconv.ParseInt(label.GetValue(), 10, 32)
				}
			}
			if topic == "" || partition < 0 {
				continue
			}
			if out[topic] == nil {
				out[topic] = map[int32]int64{}
			}
			out[topic][int32(partition)] = int64(m.GetGauge().GetValue())
		}
	}
	return out
}

func (c *Console) topicsPage(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	topics, err := s.admin.ListTopicsWithInternal(ctx)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, fmt.Errorf("list topics: %w", err))
		return
	}
	names := topics.Names()
	configs, _ := s.admin.DescribeTopicConfigs(ctx, names...)
	configsByTopic := map[string]kadm.ResourceConfig{}
	for _, rc := range configs {
		configsByTopic[rc.Name] = rc
	}
	logDirs, _ := s.admin.DescribeAllLogDirs(ctx, nil)
	sizes := topicSizes(logDirs)
	remote := c.remoteSizes()
	var rows []topicRow
	for _, t := range topics.Sorted() {
		row := topicRow{Name: t.Topic, Partitions: len(t.Partitions), ReplicationFactor: t.Partitions.NumReplicas(), Internal: t.IsInternal,
			RetentionMs: configValue(configsByTopic[t.Topic], "retention.ms"), CleanupPolicy: configValue(configsByTopic[t.Topic], "cleanup.policy")}
		for _, size := range sizes[t.Topic] {
			row.SizeBytes += size
		}
		for _, size := range remote[t.Topic] {
			row.RemoteBytes += size
		}
		rows = append(rows, row)
	}
	c.render(w, r, http.StatusOK, "topics", page{Title: "Topics", Nav: "topics", Data: rows})
}

func (c *Console) topicPage(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	name := r.PathValue("topic")
	ctx, cancel := requestContext(r)
	defer cancel()
	topics, err := s.admin.ListTopicsWithInternal(ctx, name)
	if err == nil {
		err = topics.Error()
	}
	if err != nil {
		c.fail(w, r, http.StatusNotFound, fmt.Errorf("topic %s: %w", name, err))
		return
	}
	t := topics[name]
	data := topicData{Topic: topicRow{Name: name, Partitions: len(t.Partitions), ReplicationFactor: t.Partitions.NumReplicas(), Internal: t.IsInternal}}
	starts, _ := s.admin.ListStartOffsets(ctx, name)
	ends, _ := s.admin.ListEndOffsets(ctx, name)
	logDirs, _ := s.admin.DescribeAllLogDirs(ctx, kadm.TopicsSet{name: {}})
	sizes := topicSizes(logDirs)[name]
	remote := c.remoteSizes()[name]
	for _, p := range t.Partitions.Sorted() {
		row := partitionRow{Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, Replicas: p.Replicas, ISR: p.ISR,
			SizeBytes: sizes[p.Partition], RemoteBytes: remote[p.Partition]}
		if p.Err != nil {
			row.Error = p.Err.Error()
		}
		if o, ok := starts.Lookup(name, p.Partition); ok {
			row.StartOffset = o.Offset
		}
		if o, ok := ends.Lookup(name, p.Partition); ok {
			row.EndOffset = o.Offset
		}
		data.Topic.SizeBytes += row.SizeBytes
		data.Topic.RemoteBytes += row.RemoteBytes
		data.Partitions = append(data.Partitions, row)
	}
	configs, err := s.admin.DescribeTopicConfigs(ctx, name)
	if err == nil && len(configs) == 1 {
		for _, config := range configs[0].Configs {
			row := configRow{Name: config.Key, Source: config.Source.String(), Sensitive: config.Sensitive}
			if config.Value != nil && !config.Sensitive {
				row.Value = *config.Value
			}
			data.Configs = append(data.Configs, row)
		}
		slices.SortFunc(data.Configs, func(a, b configRow) int { return strings.Compare(a.Name, b.Name) })
		data.Topic.RetentionMs = configValue(configs[0], "retention.ms")
		data.Topic.CleanupPolicy = configValue(configs[0], "cleanup.policy")
	}
	c.render(w, r, http.StatusOK, "topic", page{Title: "Topic " + name, Nav: "topics", Data: data})
}

// formInt reads a form field as an integer in [low, high].
func formInt(r *http.Request, field string, low, high int64) (int64, error) {
	value := strings.TrimSpace(r.PostFormValue(field))
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || n < low || n > high {
		return 0, fmt.Errorf("%s: %q is not a whole number in %d..%d", field, value, low, high)
	}
	return n, nil
}

func (c *Console) createTopic(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	partitions, err := formInt(r, "partitions", -1, 1_000_000)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err)
		return
	}
	replication, err := formInt(r, "replication_factor", -1, 32767)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err)
		return
	}
	configs := map[string]*string{}
	for _, line := range strings.Split(r.PostFormValue("configs"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			c.fail(w, r, http.StatusBadRequest, fmt.Errorf("config %q: expected key=value", line))
			return
		}
		value = strings.TrimSpace(value)
		configs[strings.TrimSpace(key)] = &value
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	response, err := s.admin.CreateTopic(ctx, int32(partitions), int16(replication), configs, name)
	if err == nil {
		err = response.Err
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, fmt.Errorf("create topic %q: %w", name, err))
		return
	}
	redirect(w, r, "/topics/"+url.PathEscape(name), "created topic "+name)
}

func (c *Console) deleteTopic(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	name := r.PathValue("topic")
	if r.PostFormValue("confirm") != name {
		c.fail(w, r, http.StatusBadRequest, errors.New("type the topic's name to confirm its deletion"))
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	response, err := s.admin.DeleteTopic(ctx, name)
	if err == nil {
		err = response.Err
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, fmt.Errorf("delete topic %q: %w", name, err))
		return
	}
	redirect(w, r, "/topics", "deleted topic "+name)
}

func (c *Console) alterTopicConfigs(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	name := r.PathValue("topic")
	key := strings.TrimSpace(r.PostFormValue("key"))
	if key == "" {
		c.fail(w, r, http.StatusBadRequest, errors.New("config name is empty"))
		return
	}
	alter := kadm.AlterConfig{Op: kadm.SetConfig, Name: key}
	if r.PostFormValue("op") == "delete" {
		alter.Op = kadm.DeleteConfig
	} else {
		value := r.PostFormValue("value")
		alter.Value = &value
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	responses, err := s.admin.AlterTopicConfigs(ctx, []kadm.AlterConfig{alter}, name)
	if err == nil {
		for _, response := range responses {
			if response.Err != nil {
				err = fmt.Errorf("%w: %s", response.Err, response.ErrMessage)
			}
		}
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, fmt.Errorf("alter config %s of %q: %w", key, name, err))
		return
	}
	redirect(w, r, "/topics/"+url.PathEscape(name), "updated "+key)
}

func (c *Console) addPartitions(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	name := r.PathValue("topic")
	count, err := formInt(r, "count", 1, 1_000_000)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	responses, err := s.admin.CreatePartitions(ctx, int(count), name)
	if err == nil {
		for _, response := range responses {
			if response.Err != nil {
				err = fmt.Errorf("%w: %s", response.Err, response.ErrMessage)
			}
		}
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, fmt.Errorf("add partitions to %q: %w", name, err))
		return
	}
	redirect(w, r, "/topics/"+url.PathEscape(name), fmt.Sprintf("added %d partitions", count))
}
