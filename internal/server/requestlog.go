package server

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/network"
)

// requestLog is the network Observer of a node: it passes every request to
// the metrics and writes one in every sampleRate to the request log at debug
// level, like Kafka's kafka.request.logger at DEBUG but sampled, so it can
// stay on under load.
type requestLog struct {
	next   network.Observer
	logger *slog.Logger
	// sampleRate is log.request.sample.rate; 0 logs nothing.
	sampleRate uint64
	completed  atomic.Uint64
}

func newRequestLog(next network.Observer, logger *slog.Logger, sampleRate int32) network.Observer {
	if sampleRate <= 0 || !logger.Enabled(context.Background(), slog.LevelDebug) {
		return next
	}
	return &requestLog{next: next, logger: logger, sampleRate: uint64(sampleRate)}
}

// RequestDequeued implements network.Observer.
func (r *requestLog) RequestDequeued(req *network.Request, queueTime time.Duration) {
	r.next.RequestDequeued(req, queueTime)
}

// RequestCompleted implements network.Observer.
func (r *requestLog) RequestCompleted(req *network.Request, t network.RequestTimings) {
	r.next.RequestCompleted(req, t)
	if r.completed.Add(1)%r.sampleRate != 0 {
		return
	}
	clientID := ""
	if req.ClientID != nil {
		clientID = *req.ClientID
	}
	attrs := []slog.Attr{
		slog.String("api", kmsg.NameForKey(req.APIKey)),
		slog.Int("api_key", int(req.APIKey)),
		slog.Int("version", int(req.APIVersion)),
		slog.Int("correlation_id", int(req.CorrelationID)),
		slog.String("client_id", clientID),
		slog.Duration("total", t.Sent.Sub(t.Received)),
		slog.Duration("queue", t.Dequeued.Sub(t.Received)),
		slog.Duration("local", t.Responded.Sub(t.Dequeued)),
		slog.Duration("send", t.Sent.Sub(t.Responded)),
	}
	if c := req.Conn; c != nil {
		attrs = append(attrs, slog.String("listener", c.Listener), slog.String("principal", c.Principal))
		if c.RemoteAddr != nil {
			attrs = append(attrs, slog.String("client", c.RemoteAddr.String()))
		}
	}
	r.logger.LogAttrs(context.Background(), slog.LevelDebug, "request", attrs...)
}
