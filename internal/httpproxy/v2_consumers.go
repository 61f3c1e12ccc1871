package httpproxy

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// createConsumerRequest is the body of POST /consumers/{group}; Confluent
// names the Kafka settings with their consumer config keys.
type createConsumerRequest struct {
	Name             string  `json:"name"`
	Format           string  `json:"format"`
	AutoOffsetReset  string  `json:"auto.offset.reset"`
	AutoCommitEnable *string `json:"auto.commit.enable"`
	FetchMinBytes    *string `json:"fetch.min.bytes"`
	RequestTimeoutMs *string `json:"consumer.request.timeout.ms"`
}

// maxInstanceNameLength bounds instance names.
const maxInstanceNameLength = 255

// POST /consumers/{group}.
func (p *Proxy) createConsumer(r *request) (int, any, error) {
	var body createConsumerRequest
	if err := readBody(r, &body, true); err != nil {
		return 0, nil, err
	}
	settings, name, err := p.consumerSettingsOf(body)
	if err != nil {
		return 0, nil, err
	}
	group := r.PathValue("group")
	// The instance's own admin client (commits and committed offsets of
	// assigned partitions) outlives the session that created it.
	adminClient, err := kgo.NewClient(r.session.kafkaOpts(kgo.ClientID(name))...)
	if err != nil {
		return 0, nil, errKafka(err)
	}
	admin := kadm.NewClient(adminClient)
	admin.SetTimeoutMillis(int32(p.config.RequestTimeoutMs))
	instance := &consumerInstance{
		group: group, name: name, ownerKey: r.session.identity.Key,
		kafkaOpts: r.session.kafkaOpts(), admin: admin, adminClient: adminClient,
		settings: settings, maxBytes: p.config.ConsumerRequestMaxBytes,
	}
	if err := p.consumers.add(instance); err != nil {
		adminClient.Close()
		return 0, nil, err
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	baseURI := scheme + "://" + r.Host + "/consumers/" + group + "/instances/" + name
	return http.StatusOK, map[string]string{"instance_id": name, "base_uri": baseURI}, nil
}

// consumerSettingsOf validates a create request as Confluent's proxy
// does, answering 42204 for a bad setting, and names the instance.
func (p *Proxy) consumerSettingsOf(body createConsumerRequest) (consumerSettings, string, error) {
	settings := consumerSettings{format: formatBinary, autoOffsetReset: "latest", autoCommit: true, requestTimeoutMs: p.config.ConsumerRequestTimeoutMs}
	if body.Format != "" {
		f, ok := parseFormat(body.Format)
		if !ok {
			return consumerSettings{}, "", errInvalidConsumerConfig("unknown format %q, expected binary, json, avro, jsonschema or protobuf", body.Format)
		}
		settings.format = f
	}
	switch reset := strings.ToLower(body.AutoOffsetReset); reset {
	case "":
	case "earliest", "latest", "none":
		settings.autoOffsetReset = reset
	case "smallest":
		settings.autoOffsetReset = "earliest"
	case "largest":
		settings.autoOffsetReset = "latest"
	default:
		return consumerSettings{}, "", errInvalidConsumerConfig("Invalid value %s for configuration auto.offset.reset: String must be one of: latest, earliest, none", body.AutoOffsetReset)
	}
	if body.AutoCommitEnable != nil {
		enabled, err := strconv.ParseBool(*body.AutoCommitEnable)
		if err != nil {
			return consumerSettings{}, "", errInvalidConsumerConfig("Invalid value %s for configuration auto.commit.enable: Expected value to be either true or false", *body.AutoCommitEnable)
		}
		settings.autoCommit = enabled
	}
	if body.FetchMinBytes != nil {
		n, err := strconv.ParseInt(*body.FetchMinBytes, 10, 32)
		if err != nil || n < 0 {
			return consumerSettings{}, "", errInvalidConsumerConfig("Invalid value %s for configuration fetch.min.bytes", *body.FetchMinBytes)
		}
		settings.fetchMinBytes = int32(n)
	}
	if body.RequestTimeoutMs != nil {
		n, err := strconv.ParseInt(*body.RequestTimeoutMs, 10, 64)
		if err != nil || n < 0 {
			return consumerSettings{}, "", errInvalidConsumerConfig("Invalid value %s for configuration consumer.request.timeout.ms", *body.RequestTimeoutMs)
		}
		settings.requestTimeoutMs = min(n, p.config.RequestTimeoutMs)
	}
	name := body.Name
	if name == "" {
		name = newInstanceName()
	}
	if len(name) > maxInstanceNameLength || strings.ContainsAny(name, "/?#") {
		return consumerSettings{}, "", errInvalidConsumerConfig("invalid instance name %q", name)
	}
	return settings, name, nil
}

// withInstance runs fn on the path's instance, locked.
func (p *Proxy) withInstance(r *request, fn func(c *consumerInstance) (int, any, error)) (int, any, error) {
	instance, err := p.consumers.get(r.PathValue("group"), r.PathValue("instance"), r.session.identity.Key)
	if err != nil {
		return 0, nil, err
	}
	defer func() {
		// Idle time counts from the end of the last request.
		instance.mu.lastUsed = p.config.Now()
		instance.mu.Unlock()
	}()
	return fn(instance)
}

// DELETE /consumers/{group}/instances/{instance}.
func (p *Proxy) deleteConsumer(r *request) (int, any, error) {
	return p.withInstance(r, func(c *consumerInstance) (int, any, error) {
		p.consumers.removeLocked(c)
		return http.StatusNoContent, nil, nil
	})
}

// maxSubscriptionTopics bounds the topics and partitions one request names.
const maxSubscriptionTopics = 10000

// POST .../subscription: {"topics": [...]} or {"topic_pattern": "..."}.
func (p *Proxy) subscribe(r *request) (int, any, error) {
	var body struct {
		Topics       []string `json:"topics"`
		TopicPattern string   `json:"topic_pattern"`
	}
	if err := readBody(r, &body, false); err != nil {
		return 0, nil, err
	}
	if (len(body.Topics) == 0) == (body.TopicPattern == "") {
		return 0, nil, errUnprocessable("exactly one of topics and topic_pattern must be given")
	}
	if len(body.Topics) > maxSubscriptionTopics {
		return 0, nil, errUnprocessable("at most %d topics", maxSubscriptionTopics)
	}
	return p.withInstance(r, func(c *consumerInstance) (int, any, error) {
		if err := c.subscribeLocked(body.Topics, body.TopicPattern); err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, nil
	})
}

// GET .../subscription.
func (p *Proxy) getSubscription(r *request) (int, any, error) {
	return p.withInstance(r, func(c *consumerInstance) (int, any, error) {
		topics := c.mu.topics
		if c.mu.pattern != "" && c.mu.client != nil {
			topics = c.mu.client.GetConsumeTopics()
		}
		if topics == nil {
			topics = []string{}
		}
		return http.StatusOK, map[string][]string{"topics": topics}, nil
	})
}

// DELETE .../subscription.
func (p *Proxy) unsubscribe(r *request) (int, any, error) {
	return p.withInstance(r, func(c *consumerInstance) (int, any, error) {
		c.unsubscribeLocked()
		return http.StatusNoContent, nil, nil
	})
}

type partitionsBody struct {
	Partitions []topicPartition `json:"partitions"`
}

func readPartitions(r *request, allowEmpty bool) ([]topicPartition, error) {
	var body partitionsBody
	if err := readBody(r, &body, allowEmpty); err != nil {
		return nil, err
	}
	if len(body.Partitions) > maxSubscriptionTopics {
		return nil, errUnprocessable("at most %d partitions", maxSubscriptionTopics)
	}
	for _, tp := range body.Partitions {
		if tp.Topic == "" || tp.Partition < 0 {
			return nil, errUnprocessable("every partition needs a topic and a partition number of at least 0")
		}
	}
	return body.Partitions, nil
}

// POST .../assignments.
func (p *Proxy) assign(r *request) (int, any, error) {
	partitions, err := readPartitions(r, false)
	if err != nil {
		return 0, nil, err
	}
	return p.withInstance(r, func(c *consumerInstance) (int, any, error) {
		if len(partitions) == 0 {
			c.unsubscribeLocked()
			return http.StatusNoContent, nil, nil
		}
		if err := c.assignLocked(r.ctx, partitions); err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, nil
	})
}

// GET .../assignments: the assigned partitions, or those the group gave
// the member.
func (p *Proxy) getAssignments(r *request) (int, any, error) {
	return p.withInstance(r, func(c *consumerInstance) (int, any, error) {
		partitions := []topicPartition{}
		if len(c.mu.assigned) > 0 {
			partitions = append(partitions, c.mu.assigned...)
		} else if c.mu.client != nil {
			partitions = append(partitions, c.groupPartitions()...)
		}
		return http.StatusOK, partitionsBody{Partitions: partitions}, nil
	})
}

type offsetV2 struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Metadata  *string `json:"metadata,omitempty"`
}

func readOffsets(r *request, allowEmpty bool) (map[topicPartition]int64, error) {
	var body struct {
		Offsets []offsetV2 `json:"offsets"`
	}
	if err := readBody(r, &body, allowEmpty); err != nil {
		return nil, err
	}
	if body.Offsets == nil {
		return nil, nil
	}
	if len(body.Offsets) > maxSubscriptionTopics {
		return nil, errUnprocessable("at most %d offsets", maxSubscriptionTopics)
	}
	out := map[topicPartition]int64{}
	for _, o := range body.Offsets {
		if o.Topic == "" || o.Partition < 0 || o.Offset < 0 {
			return nil, errUnprocessable("every offset needs a topic, a partition and an offset of at least 0")
		}
		out[topicPartition{o.Topic, o.Partition}] = o.Offset
	}
	return out, nil
}

// POST .../offsets: commit the offsets given, or with no body every
// record answered so far.
func (p *Proxy) commitOffsets(r *request) (int, any, error) {
	offsets, err := readOffsets(r, true)
	if err != nil {
		return 0, nil, err
	}
	return p.withInstance(r, func(c *consumerInstance) (int, any, error) {
		if err := c.commitLocked(r.ctx, offsets); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, []any{}, nil
	})
}

// GET .../offsets: the group's committed offsets of the partitions named.
func (p *Proxy) committedOffsets(r *request) (int, any, error) {
	partitions, err := readPartitions(r, false)
	if err != nil {
		return 0, nil, err
	}
	return p.withInstance(r, func(c *consumerInstance) (int, any, error) {
		committed, err := c.admin.FetchOffsets(r.ctx, c.group)
		if err != nil {
			return 0, nil, err
		}
		out := []offsetV2{}
		for _, tp := range partitions {
			at, ok := committed.Lookup(tp.Topic, tp.Partition)
			if !ok || at.Err != nil || at.At < 0 {
				continue
			}
			metadata := at.Metadata
			out = append(out, offsetV2{Topic: tp.Topic, Partition: tp.Partition, Offset: at.At, Metadata: &metadata})
		}
		return http.StatusOK, map[string][]offsetV2{"offsets": out}, nil
	})
}

// POST .../positions: seek to the offsets given.
func (p *Proxy) seek(r *request) (int, any, error) {
	offsets, err := readOffsets(r, false)
	if err != nil {
		return 0, nil, err
	}
	positions := map[string]map[int32]kgo.EpochOffset{}
	for tp, offset := range offsets {
		if positions[tp.Topic] == nil {
			positions[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		positions[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: offset}
	}
	return p.withInstance(r, func(c *consumerInstance) (int, any, error) {
		if err := c.seekLocked(positions); err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, nil
	})
}

// POST .../positions/beginning and .../positions/end.
func (p *Proxy) seekToEdge(end bool) handlerFunc {
	return func(r *request) (int, any, error) {
		partitions, err := readPartitions(r, false)
		if err != nil {
			return 0, nil, err
		}
		positions := map[string]map[int32]kgo.EpochOffset{}
		for _, tp := range partitions {
			beginning, last, err := partitionOffsets(r, tp.Topic, tp.Partition)
			if err != nil {
				return 0, nil, err
			}
			if positions[tp.Topic] == nil {
				positions[tp.Topic] = map[int32]kgo.EpochOffset{}
			}
			offset := beginning
			if end {
				offset = last
			}
			positions[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: offset}
		}
		return p.withInstance(r, func(c *consumerInstance) (int, any, error) {
			if err := c.seekLocked(positions); err != nil {
				return 0, nil, err
			}
			return http.StatusNoContent, nil, nil
		})
	}
}

type consumerRecordV2 struct {
	Topic     string          `json:"topic"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Partition int32           `json:"partition"`
	Offset    int64           `json:"offset"`
}

// GET .../records?timeout=&max_bytes=.
func (p *Proxy) records(r *request) (int, any, error) {
	query := r.URL.Query()
	timeoutMs, maxBytes := int64(-1), p.config.ConsumerRequestMaxBytes
	if text := query.Get("timeout"); text != "" {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return 0, nil, errBadRequest("timeout must be a number of milliseconds")
		}
		timeoutMs = n
	}
	if text := query.Get("max_bytes"); text != "" {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n <= 0 {
			return 0, nil, errBadRequest("max_bytes must be a positive number")
		}
		maxBytes = min(n, maxBytes)
	}
	return p.withInstance(r, func(c *consumerInstance) (int, any, error) {
		if requested, ok := acceptedFormat(r.Header.Get("Accept")); ok && requested != c.settings.format {
			return 0, nil, errFormatMismatch()
		}
		timeout := c.settings.requestTimeoutMs
		if timeoutMs >= 0 {
			timeout = min(timeoutMs, p.config.ConsumerRequestTimeoutMs, c.settings.requestTimeoutMs)
		}
		records, err := c.pollLocked(r.ctx, time.Duration(timeout)*time.Millisecond, maxBytes)
		if err != nil {
			return 0, nil, err
		}
		out := make([]consumerRecordV2, 0, len(records))
		for _, record := range records {
			key, err := decodeV2Data(r, c.settings.format, record.Key)
			if err != nil {
				return 0, nil, errKafka(err)
			}
			value, err := decodeV2Data(r, c.settings.format, record.Value)
			if err != nil {
				return 0, nil, errKafka(err)
			}
			out = append(out, consumerRecordV2{Topic: record.Topic, Key: key, Value: value, Partition: record.Partition, Offset: record.Offset})
		}
		return http.StatusOK, typedBody{contentType: c.settings.format.contentType(), body: out}, nil
	})
}

// acceptedFormat reads the one v2 embedded format an Accept header names,
// if it names exactly one.
func acceptedFormat(header string) (format, bool) {
	var found []format
	for _, part := range strings.Split(header, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if f, ok := formatOfMediaType(mediaType); ok {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		return "", false
	}
	return found[0], true
}

func decodeV2Data(r *request, format format, data []byte) (json.RawMessage, error) {
	if data == nil {
		return json.RawMessage("null"), nil
	}
	switch format {
	case formatBinary:
		return encodeBinary(data), nil
	case formatJSON:
		if !json.Valid(data) {
			return nil, errNotJSON
		}
		return json.RawMessage(data), nil
	}
	id, payload, err := schemaID(data)
	if err != nil {
		return nil, err
	}
	schema, err := r.session.schemas.byID(r.ctx, id)
	if err != nil {
		return nil, err
	}
	return schema.decode(payload)
}
