package httpproxy

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-streaming/samsa/internal/httpserve"
)

// Identity is who a request acts as and how to reach Kafka and the schema
// registry as them.
type Identity struct {
	// Key tells sessions apart; two requests with the same Key share
	// clients. It must change when the credentials do, and never hold a
	// secret in clear.
	Key string
	// Principal is the Kafka principal, "User:name".
	Principal    string
	KafkaOpts    []kgo.Opt
	RegistryOpts []sr.ClientOpt
}

// Config configures a Proxy. Zero bounds take Confluent's defaults.
type Config struct {
	// Identify names the identity of a request the HTTP layer has already
	// authenticated. Nil runs every request as one anonymous identity over
	// SeedBrokers.
	Identify func(r *http.Request) (Identity, error)
	// SeedBrokers are the Kafka listeners the proxy's clients connect to
	// (Identify's KafkaOpts add to them).
	SeedBrokers []string
	// RegistryURL is the schema registry of the schema formats (Confluent's
	// schema.registry.url); empty makes those formats answer 42205.
	RegistryURL string
	// RegistryTLS is the TLS of an https RegistryURL; nil uses the
	// system's roots.
	RegistryTLS *tls.Config
	// ConsumerInstanceTimeoutMs closes instances unused for that long
	// (consumer.instance.timeout.ms, 300000).
	ConsumerInstanceTimeoutMs int64
	// ConsumerRequestTimeoutMs is the longest a records request waits
	// (consumer.request.timeout.ms, 1000).
	ConsumerRequestTimeoutMs int64
	// ConsumerRequestMaxBytes bounds one records answer and the records an
	// instance buffers (consumer.request.max.bytes, 67108864).
	ConsumerRequestMaxBytes int64
	// MaxConsumerInstances bounds the instances held at once (1000).
	MaxConsumerInstances int
	// MaxSessions bounds the identities with open clients (100).
	MaxSessions int
	// RequestTimeoutMs bounds each Kafka operation a request runs (30000).
	RequestTimeoutMs int64
	Logger           *slog.Logger
	// Now is the clock of instance expiry; nil is time.Now.
	Now func() time.Time
}

// Proxy serves Confluent's REST Proxy v2 and v3 APIs over franz-go clients.
type Proxy struct {
	config    Config
	logger    *slog.Logger
	sessions  *sessionPool
	consumers *consumerRegistry
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// New starts a Proxy and its instance reaper.
func New(config Config) (*Proxy, error) {
	if config.Logger == nil {
		config.Logger = slog.Default()
	}
	if config.Now == nil {
		config.Now = time.Now
	}
	if config.ConsumerInstanceTimeoutMs <= 0 {
		config.ConsumerInstanceTimeoutMs = 300000
	}
	if config.ConsumerRequestTimeoutMs <= 0 {
		config.ConsumerRequestTimeoutMs = 1000
	}
	if config.ConsumerRequestMaxBytes <= 0 {
		config.ConsumerRequestMaxBytes = 64 << 20
	}
	if config.MaxConsumerInstances <= 0 {
		config.MaxConsumerInstances = 1000
	}
	if config.MaxSessions <= 0 {
		config.MaxSessions = 100
	}
	if config.RequestTimeoutMs <= 0 {
		config.RequestTimeoutMs = 30000
	}
	if config.Identify == nil {
		config.Identify = func(*http.Request) (Identity, error) {
			return Identity{Principal: string(httpserve.Anonymous)}, nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{config: config, logger: config.Logger, cancel: cancel, done: make(chan struct{})}
	p.sessions = newSessionPool(config)
	p.consumers = newConsumerRegistry(config)
	go p.reap(ctx)
	return p, nil
}

// Close closes every consumer instance (leaving their groups) and session.
func (p *Proxy) Close() {
	p.closeOnce.Do(func() {
		p.cancel()
		<-p.done
		p.consumers.closeAll()
		p.sessions.closeAll()
	})
}

// reap closes idle consumer instances and sessions, checking a few times
// per instance timeout.
func (p *Proxy) reap(ctx context.Context) {
	defer close(p.done)
	interval := min(time.Duration(p.config.ConsumerInstanceTimeoutMs)*time.Millisecond/4, 5*time.Second)
	ticker := time.NewTicker(max(interval, 10*time.Millisecond))
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			for _, expired := range p.consumers.expire(p.config.Now()) {
				p.logger.Info("closing an idle REST proxy consumer instance", "group", expired.group, "instance", expired.name)
			}
			p.sessions.expire(p.config.Now(), max(time.Duration(p.config.ConsumerInstanceTimeoutMs)*time.Millisecond, sessionIdleMin))
		}
	}
}

// sessionIdleMin is the least time an unused session's clients stay open.
const sessionIdleMin = time.Minute

// request is one request's context: the identity's session, the clock.
type request struct {
	*http.Request
	session *session
	ctx     context.Context
}

type handlerFunc func(req *request) (status int, body any, err error)

// Content types of v2 and v3 answers.
const (
	contentTypeV2 = "application/vnd.kafka.v2+json"
	contentTypeV3 = "application/json"
)

// route wraps a handler: content type checks, the identity's session, a
// bounded context, Confluent's error body.
func (p *Proxy) route(contentType string, accept []string, h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := checkAccept(r, contentType, accept); err != nil {
			writeError(w, contentType, err)
			return
		}
		identity, err := p.config.Identify(r)
		if err != nil {
			writeError(w, contentType, newError(http.StatusUnauthorized, 40101, "Unauthorized"))
			return
		}
		session, err := p.sessions.acquire(identity)
		if err != nil {
			writeError(w, contentType, kafkaError(err))
			return
		}
		defer p.sessions.release(session)
		ctx, cancel := context.WithTimeout(r.Context(), time.Duration(p.config.RequestTimeoutMs)*time.Millisecond)
		defer cancel()
		status, body, err := h(&request{Request: r.WithContext(ctx), session: session, ctx: ctx})
		if err != nil {
			if ctx.Err() != nil && r.Context().Err() == nil {
				if _, ok := errors.AsType[*apiError](err); !ok {
					err = errTimeout()
				}
			}
			writeError(w, contentType, err)
			return
		}
		if status == http.StatusNoContent {
			w.WriteHeader(status)
			return
		}
		answerType := contentType
		if typed, ok := body.(typedBody); ok {
			answerType, body = typed.contentType, typed.body
		}
		httpserve.WriteJSON(w, status, answerType, body)
	}
}

// typedBody answers body with its own content type.
type typedBody struct {
	contentType string
	body        any
}

func writeError(w http.ResponseWriter, contentType string, err error) {
	api := kafkaError(err)
	httpserve.WriteError(w, api.status, contentType, api.code, api.message)
}

// checkAccept answers 406 when the Accept header names none of the types
// this route answers (absent, */* and application/* accept anything), and
// 415 when a body's Content-Type is not one of accept. accept nil skips the
// body check.
func checkAccept(r *http.Request, answerType string, accept []string) error {
	if header := r.Header.Get("Accept"); header != "" && !acceptable(header, answerType) {
		return errNotAcceptable()
	}
	if accept == nil {
		return nil
	}
	header := r.Header.Get("Content-Type")
	if header == "" {
		return nil
	}
	mediaType, _, err := mime.ParseMediaType(header)
	if err != nil {
		return errUnsupportedMediaType()
	}
	for _, a := range accept {
		if strings.EqualFold(mediaType, a) {
			return nil
		}
	}
	return errUnsupportedMediaType()
}

// acceptable reports whether an Accept header admits one of the types a
// route can answer (answerType, or for the records route any of the v2
// formats' types, which the handler itself matches).
func acceptable(header, answerType string) bool {
	for _, part := range strings.Split(header, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		mediaType = strings.ToLower(mediaType)
		switch {
		case mediaType == "*/*", mediaType == "application/*", mediaType == "application/json",
			mediaType == answerType, mediaType == "application/vnd.kafka+json",
			strings.HasPrefix(mediaType, "application/vnd.kafka.") && answerType == contentTypeV2:
			return true
		}
	}
	return false
}

// readBody decodes a JSON body (bounded by the HTTP layer) into v.
func readBody(r *request, v any, allowEmpty bool) error {
	err := httpserve.ReadJSON(r.Request, v, allowEmpty)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, httpserve.ErrBodyTooLarge):
		return errTooLarge()
	default:
		return errMalformed(err)
	}
}

// decodeStrict decodes one JSON value of a body already read.
func decodeStrict(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return errMalformed(err)
	}
	return nil
}
