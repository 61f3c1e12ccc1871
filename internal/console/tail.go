package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// tailWaitMs is how long one tail fetch waits at the broker for new
// records (a consumer's fetch.max.wait.ms is 500).
const tailWaitMs = 500

// tailRecordsPerEvent bounds the records one fetch sends to the browser;
// a faster topic is sampled, and the event says how many it skipped.
const tailRecordsPerEvent = 200

// tail streams the records appended from now on as server-sent events:
//
//	event: record   data: one recordRow as JSON
//	event: skipped  data: {"skipped": N} records not sent (too fast)
//	event: end      data: {"reason": "..."} the tail stopped
//
// It stops when the browser goes away (the request's context ends) or after
// console.tail.max.ms. The broker parks each fetch until data arrives, so
// an idle tail costs no handler time.
func (c *Console) tail(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	topic := r.PathValue("topic")
	values := r.URL.Query()
	values.Set("start", startLatest)
	values.Del("cursor")
	q, err := parseScanRequest(values, c.config.RecordsMax)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f, err := compileFilter(q.Filter)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(c.config.TailMaxMs)*time.Millisecond)
	defer cancel()
	stop := context.AfterFunc(c.done, cancel)
	defer stop()
	detail, err := topicPartitions(ctx, s, topic)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	q.Limit = 0 // start at the end
	cursors, err := startCursors(ctx, s, detail, q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	c.tails.Add(1)
	defer c.tails.Add(-1)
	controller := http.NewResponseController(w)
	// The server's write timeout would cut the stream, and its read
	// deadline could end the request's context; the tail bounds itself with
	// console.tail.max.ms instead.
	_ = controller.SetWriteDeadline(time.Time{})
	_ = controller.SetReadDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) bool {
		body, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, body); err != nil {
			return false
		}
		return controller.Flush() == nil
	}
	// ended says why the tail's context ended, unless the browser left.
	ended := func() {
		switch {
		case r.Context().Err() != nil:
		case c.done.Err() != nil:
			send("end", map[string]string{"reason": "the node is shutting down"})
		default:
			send("end", map[string]string{"reason": fmt.Sprintf("the tail stops after %d ms (console.tail.max.ms)", c.config.TailMaxMs)})
		}
	}
	if !send("ready", map[string]any{"topic": topic}) {
		return
	}
	for {
		if ctx.Err() != nil {
			ended()
			return
		}
		sent, skipped := 0, 0
		byLeader := map[int32][]*scanCursor{}
		for _, cursor := range cursors {
			byLeader[cursor.leader] = append(byLeader[cursor.leader], cursor)
		}
		for leader, group := range byLeader {
			response, err := fetchOnce(ctx, s, detail, leader, group, c.config.RecordsMaxBytes, tailWaitMs/int32(len(byLeader)))
			if err != nil {
				if ctx.Err() != nil {
					ended()
				} else {
					send("end", map[string]string{"reason": err.Error()})
				}
				return
			}
			for _, rp := range response {
				cursor := findCursor(group, rp.Partition)
				if cursor == nil {
					continue
				}
				if code := kerr.ErrorForCode(rp.ErrorCode); code != nil {
					send("end", map[string]string{"reason": fmt.Sprintf("partition %d: %v", rp.Partition, code)})
					return
				}
				fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
					Offset: cursor.next, Topic: topic, Partition: rp.Partition, IsolationLevel: kgo.ReadUncommitted(),
				}, &rp, kgo.DefaultDecompressor(), nil)
				for _, record := range fp.Records {
					if keep, _ := f.keep(ctx, record); !keep {
						continue
					}
					if sent >= tailRecordsPerEvent {
						skipped++
						continue
					}
					if !send("record", c.row(ctx, s, record, q.Format)) {
						return
					}
					sent++
				}
				cursor.next = max(cursor.next, next)
			}
		}
		if skipped > 0 && !send("skipped", map[string]int{"skipped": skipped}) {
			return
		}
		// A comment line: a browser that went away fails this write.
		if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || controller.Flush() != nil {
			return
		}
	}
}
