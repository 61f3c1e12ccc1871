package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchPartitionMaxBytes is the most one partition returns per fetch, as
// a consumer's max.partition.fetch.bytes default.
const fetchPartitionMaxBytes = 1 << 20

type headerRow struct {
	Key   string
	Value rendered
}

type recordRow struct {
	Partition   int32
	Offset      int64
	TimestampMs int64
	Key         rendered
	Value       rendered
	Headers     []headerRow
}

// scanCursor is one partition of a scan.
//
// Invariant: logStart <= first <= next and next <= end or the scan is done
// with the partition.
type scanCursor struct {
	partition int32
	leader    int32
	logStart  int64
	first     int64 // the first offset this scan read
	next      int64 // the next offset to read
	end       int64 // the high watermark when the scan began
}

// scanResult is one page of records and why it stopped there.
type scanResult struct {
	Records      []recordRow
	Scanned      int
	ScannedBytes int
	// StopReason says why the scan stopped; Bounded when a bound (records,
	// bytes, time) stopped it before the end of the partitions.
	StopReason  string
	Bounded     bool
	AtEnd       bool
	Next        string // cursor of the next page, or ""
	Previous    string // cursor of the previous page, or ""
	FilterError string
}

// topicPartitions resolves a topic's partitions, leaders and id.
func topicPartitions(ctx context.Context, s *session, topic string) (kadm.TopicDetail, error) {
	topics, err := s.admin.ListTopicsWithInternal(ctx, topic)
	if err != nil {
		return kadm.TopicDetail{}, err
	}
	detail, ok := topics[topic]
	if !ok {
		return kadm.TopicDetail{}, kerr.UnknownTopicOrPartition
	}
	if detail.Err != nil {
		return kadm.TopicDetail{}, detail.Err
	}
	return detail, nil
}

// startCursors finds each chosen partition's first offset with one batched
// ListOffsets per kind of offset.
func startCursors(ctx context.Context, s *session, detail kadm.TopicDetail, q scanRequest) ([]*scanCursor, error) {
	starts, err := s.admin.ListStartOffsets(ctx, detail.Topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := s.admin.ListEndOffsets(ctx, detail.Topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	var byTime kadm.ListedOffsets
	if q.Start == startTimestamp && q.Cursor == nil {
		if byTime, err = s.admin.ListOffsetsAfterMilli(ctx, q.TimestampMs, detail.Topic); err == nil {
			err = byTime.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("list offsets at %d: %w", q.TimestampMs, err)
		}
	}
	var cursors []*scanCursor
	chosen := q.Partitions
	if q.Cursor != nil {
		chosen = nil
		for p := range q.Cursor {
			chosen = append(chosen, p)
		}
		slices.Sort(chosen)
	}
	for _, p := range detail.Partitions.Sorted() {
		if chosen != nil && !slices.Contains(chosen, p.Partition) {
			continue
		}
		start, _ := starts.Lookup(detail.Topic, p.Partition)
		end, _ := ends.Lookup(detail.Topic, p.Partition)
		cursor := &scanCursor{partition: p.Partition, leader: p.Leader, logStart: start.Offset, end: end.Offset}
		switch {
		case q.Cursor != nil:
			cursor.next = q.Cursor[p.Partition]
		case q.Start == startLatest:
			perPartition := int64((q.Limit + len(detail.Partitions) - 1) / max(len(detail.Partitions), 1))
			if len(chosen) > 0 {
				perPartition = int64((q.Limit + len(chosen) - 1) / len(chosen))
			}
			cursor.next = end.Offset - perPartition
		case q.Start == startOffset:
			cursor.next = q.Offset
		case q.Start == startTimestamp:
			at, _ := byTime.Lookup(detail.Topic, p.Partition)
			cursor.next = at.Offset
			if at.Offset < 0 {
				cursor.next = end.Offset
			}
		default:
			cursor.next = start.Offset
		}
		cursor.next = min(max(cursor.next, cursor.logStart), cursor.end)
		cursor.first = cursor.next
		cursors = append(cursors, cursor)
	}
	if len(cursors) == 0 {
		return nil, fmt.Errorf("topic %s has no partition %v: %w", detail.Topic, chosen, kerr.UnknownTopicOrPartition)
	}
	return cursors, nil
}

// scan reads one page of records, bounded by q.Limit kept records,
// console.records.max.bytes read and console.records.timeout.ms.
func (c *Console) scan(ctx context.Context, s *session, topic string, q scanRequest) (result scanResult, err error) {
	f, err := compileFilter(q.Filter)
	if err != nil {
		return result, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(c.config.RecordsTimeoutMs)*time.Millisecond)
	defer cancel()
	detail, err := topicPartitions(ctx, s, topic)
	if err != nil {
		return result, fmt.Errorf("topic %s: %w", topic, err)
	}
	cursors, err := startCursors(ctx, s, detail, q)
	if err != nil {
		return result, err
	}
	defer func() { result.Next, result.Previous = pageCursors(cursors, q.Limit, result.AtEnd) }()
	for {
		pending := map[int32][]*scanCursor{}
		for _, cursor := range cursors {
			if cursor.next < cursor.end {
				pending[cursor.leader] = append(pending[cursor.leader], cursor)
			}
		}
		if len(pending) == 0 {
			result.AtEnd = true
			result.StopReason = "reached the end of the log"
			return result, nil
		}
		for leader, group := range pending {
			budget := c.config.RecordsMaxBytes - result.ScannedBytes
			response, err := fetchOnce(ctx, s, detail, leader, group, budget, 0)
			if err != nil {
				if ctx.Err() != nil {
					result.Bounded = true
					result.StopReason = fmt.Sprintf("stopped after %d ms (console.records.timeout.ms) having read %d records", c.config.RecordsTimeoutMs, result.Scanned)
					return result, nil
				}
				return result, err
			}
			for _, rp := range response {
				cursor := findCursor(group, rp.Partition)
				if cursor == nil {
					continue
				}
				if code := kerr.ErrorForCode(rp.ErrorCode); code != nil {
					return result, fmt.Errorf("fetch %s-%d at %d: %w", topic, rp.Partition, cursor.next, code)
				}
				result.ScannedBytes += len(rp.RecordBatches)
				fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
					Offset: cursor.next, Topic: topic, Partition: rp.Partition, IsolationLevel: kgo.ReadUncommitted(),
				}, &rp, kgo.DefaultDecompressor(), nil)
				if fp.Err != nil {
					return result, fmt.Errorf("decode %s-%d at %d: %w", topic, rp.Partition, cursor.next, fp.Err)
				}
				for _, record := range fp.Records {
					if record.Offset >= cursor.end {
						break
					}
					result.Scanned++
					cursor.next = record.Offset + 1
					keep, err := f.keep(ctx, record)
					if err != nil && result.FilterError == "" {
						result.FilterError = fmt.Sprintf("offset %d: %v", record.Offset, err)
					}
					if keep {
						result.Records = append(result.Records, c.row(ctx, s, record, q.Format))
					}
					if len(result.Records) >= q.Limit {
						result.StopReason = fmt.Sprintf("showing %d records (the page's limit)", q.Limit)
						result.AtEnd = allRead(cursors)
						return result, nil
					}
				}
				// Batches past the last record (control batches, aborted
				// data) still move the cursor on.
				if next > cursor.next {
					cursor.next = min(next, cursor.end)
				}
				if len(rp.RecordBatches) == 0 && cursor.next < cursor.end {
					return result, fmt.Errorf("fetch %s-%d at %d returned nothing below the high watermark %d", topic, rp.Partition, cursor.next, cursor.end)
				}
			}
			if result.ScannedBytes >= c.config.RecordsMaxBytes {
				result.Bounded = true
				result.StopReason = fmt.Sprintf("stopped after reading %s (console.records.max.bytes) and %d records", humanBytes(int64(result.ScannedBytes)), result.Scanned)
				return result, nil
			}
			if ctx.Err() != nil {
				result.Bounded = true
				result.StopReason = fmt.Sprintf("stopped after %d ms (console.records.timeout.ms) having read %d records", c.config.RecordsTimeoutMs, result.Scanned)
				return result, nil
			}
		}
	}
}

// allRead reports whether every cursor reached its end.
func allRead(cursors []*scanCursor) bool {
	for _, cursor := range cursors {
		if cursor.next < cursor.end {
			return false
		}
	}
	return true
}

func findCursor(cursors []*scanCursor, partition int32) *scanCursor {
	for _, cursor := range cursors {
		if cursor.partition == partition {
			return cursor
		}
	}
	return nil
}

// pageCursors are the links to the next page (where the scan stopped) and
// the previous one (a page's worth before where it began).
func pageCursors(cursors []*scanCursor, limit int, atEnd bool) (next, previous string) {
	nextCursor, previousCursor := map[int32]int64{}, map[int32]int64{}
	moved := false
	for _, cursor := range cursors {
		nextCursor[cursor.partition] = cursor.next
		previousCursor[cursor.partition] = max(cursor.first-int64(limit), cursor.logStart)
		if cursor.first > cursor.logStart {
			moved = true
		}
	}
	if !atEnd {
		next = formatCursor(nextCursor)
	}
	if moved {
		previous = formatCursor(previousCursor)
	}
	return next, previous
}

// fetchOnce sends one Fetch to a partition leader for cursors, with at most
// budgetBytes of records, waiting up to maxWaitMs for data.
func fetchOnce(ctx context.Context, s *session, detail kadm.TopicDetail, leader int32, cursors []*scanCursor, budgetBytes int, maxWaitMs int32) ([]kmsg.FetchResponseTopicPartition, error) {
	if leader < 0 {
		return nil, fmt.Errorf("partition %d of %s has no leader", cursors[0].partition, detail.Topic)
	}
	request := kmsg.NewPtrFetchRequest()
	request.ReplicaID = -1
	request.MaxWaitMillis = maxWaitMs
	request.MinBytes = 1
	request.MaxBytes = int32(max(budgetBytes, 1))
	request.IsolationLevel = 0
	request.SessionEpoch = -1
	topic := kmsg.NewFetchRequestTopic()
	topic.Topic = detail.Topic
	topic.TopicID = detail.ID
	for _, cursor := range cursors {
		partition := kmsg.NewFetchRequestTopicPartition()
		partition.Partition = cursor.partition
		partition.FetchOffset = cursor.next
		partition.PartitionMaxBytes = int32(min(fetchPartitionMaxBytes, max(budgetBytes, 1)))
		partition.CurrentLeaderEpoch = -1
		partition.LogStartOffset = -1
		topic.Partitions = append(topic.Partitions, partition)
	}
	request.Topics = append(request.Topics, topic)
	response, err := request.RequestWith(ctx, s.client.Broker(int(leader)))
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(response.ErrorCode); err != nil {
		return nil, err
	}
	var out []kmsg.FetchResponseTopicPartition
	for _, t := range response.Topics {
		out = append(out, t.Partitions...)
	}
	return out, nil
}

// row renders one record.
func (c *Console) row(ctx context.Context, s *session, record *kgo.Record, format string) recordRow {
	row := recordRow{Partition: record.Partition, Offset: record.Offset, TimestampMs: record.Timestamp.UnixMilli(),
		Key: s.decoder.render(ctx, record.Key, format), Value: s.decoder.render(ctx, record.Value, format)}
	for _, h := range record.Headers {
		row.Headers = append(row.Headers, headerRow{Key: h.Key, Value: s.decoder.render(ctx, h.Value, format)})
	}
	return row
}

type recordsData struct {
	Topic       string
	Partitions  []int32
	Query       scanRequest
	Values      url.Values
	Result      scanResult
	NextURL     string
	PreviousURL string
	TailURL     string
}

func (c *Console) recordsPage(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	topic := r.PathValue("topic")
	data := recordsData{Topic: topic, Values: r.URL.Query()}
	status := http.StatusOK
	q, err := parseScanRequest(r.URL.Query(), c.config.RecordsMax)
	data.Query = q
	p := page{Title: "Records of " + topic, Nav: "topics"}
	if err != nil {
		status, p.Error = http.StatusBadRequest, err.Error()
	} else if data.Result, err = c.scan(r.Context(), s, topic, q); err != nil {
		status = http.StatusBadGateway
		if errors.Is(err, errFilter) || isInputError(err) {
			status = http.StatusBadRequest
		}
		p.Error = err.Error()
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	if detail, err := topicPartitions(ctx, s, topic); err == nil {
		for _, partition := range detail.Partitions.Sorted() {
			data.Partitions = append(data.Partitions, partition.Partition)
		}
	}
	link := func(cursor string) string {
		if cursor == "" {
			return ""
		}
		values := url.Values{}
		for _, key := range []string{"partition", "limit", "format", "filter"} {
			if v := r.URL.Query().Get(key); v != "" {
				values.Set(key, v)
			}
		}
		values.Set("cursor", cursor)
		return "/topics/" + url.PathEscape(topic) + "/records?" + values.Encode()
	}
	data.NextURL, data.PreviousURL = link(data.Result.Next), link(data.Result.Previous)
	tail := url.Values{}
	for _, key := range []string{"partition", "format", "filter"} {
		if v := r.URL.Query().Get(key); v != "" {
			tail.Set(key, v)
		}
	}
	data.TailURL = "/topics/" + url.PathEscape(topic) + "/tail?" + tail.Encode()
	p.Data = data
	c.render(w, r, status, "records", p)
}

// errFilter marks a filter that does not compile.
var errFilter = errors.New("filter")

// isInputError reports whether err is about the query rather than the
// cluster.
func isInputError(err error) bool {
	var numError *strconv.NumError
	return errors.As(err, &numError) || errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.OffsetOutOfRange)
}
