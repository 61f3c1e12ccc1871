package console

import (
	"context"
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sr"
)

//go:embed assets
var assets embed.FS

// Defaults of the Config bounds left zero; each is the default of the
// console.* key that sets it.
const (
	DefaultRecordsMax        = 500
	DefaultRecordsMaxBytes   = 4 << 20
	DefaultRecordsTimeoutMs  = 5000
	DefaultTailMaxMs         = 600_000
	DefaultSessionsMax       = 32
	DefaultMetricsIntervalMs = 5000
	DefaultMetricsWindowMs   = 3_600_000
	DefaultGroupsPerPage     = 50
	DefaultRequestTimeoutMs  = 10_000
)

// Config describes a console.
type Config struct {
	// SeedBrokers are the node's own client listener the console's
	// clients connect to.
	SeedBrokers []string
	// SASL, when set, builds the SASL mechanism that logs a console user in
	// with the credentials of their HTTP request; the console then acts as
	// that principal. Nil means the cluster does not use SASL and one
	// anonymous client serves every request.
	SASL func(user, password string) (sasl.Mechanism, error)
	// RegistryURL is the node's own schema registry, or empty.
	RegistryURL string
	// ReadOnly refuses every change (console.read.only).
	ReadOnly bool
	// Gatherer is the node's metrics registry, sampled for the plots.
	Gatherer prometheus.Gatherer
	// RecordsMax, RecordsMaxBytes and RecordsTimeoutMs bound one records
	// scan (console.records.max, console.records.max.bytes,
	// console.records.timeout.ms).
	RecordsMax       int
	RecordsMaxBytes  int
	RecordsTimeoutMs int64
	// TailMaxMs bounds one live tail (console.tail.max.ms).
	TailMaxMs int64
	// SessionsMax bounds the clients kept, one per logged-in user
	// (console.sessions.max).
	SessionsMax int
	// MetricsIntervalMs is the plots' sample interval
	// (console.metrics.sample.interval.ms); an hour of samples is kept.
	MetricsIntervalMs int64
	Logger            *slog.Logger
}

// Console is the web console's handler and its clients.
type Console struct {
	config  Config
	mux     *http.ServeMux
	pages   map[string]*template.Template
	sampler *Sampler
	// done ends with Drain: the sampler and every live tail stop.
	done    context.Context
	cancel  context.CancelFunc
	clients *clientPool
	// tails counts the live tails streaming now.
	tails atomic.Int64
}

// New builds a console; Close releases its clients.
func New(config Config) (*Console, error) {
	if len(config.SeedBrokers) == 0 {
		return nil, errors.New("console: no seed brokers")
	}
	defaults := []struct {
		value *int
		def   int
	}{{&config.RecordsMax, DefaultRecordsMax}, {&config.RecordsMaxBytes, DefaultRecordsMaxBytes}, {&config.SessionsMax, DefaultSessionsMax}}
	for _, d := range defaults {
		if *d.value <= 0 {
			*d.value = d.def
		}
	}
	if config.RecordsTimeoutMs <= 0 {
		config.RecordsTimeoutMs = DefaultRecordsTimeoutMs
	}
	if config.TailMaxMs <= 0 {
		config.TailMaxMs = DefaultTailMaxMs
	}
	if config.MetricsIntervalMs <= 0 {
		config.MetricsIntervalMs = DefaultMetricsIntervalMs
	}
	if config.Logger == nil {
		config.Logger = slog.Default()
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c := &Console{
		config:  config,
		pages:   pages,
		sampler: NewSampler(config.Gatherer, config.MetricsIntervalMs, DefaultMetricsWindowMs),
		clients: newClientPool(config),
	}
	c.done, c.cancel = context.WithCancel(context.Background())
	go c.sampler.Run(c.done)
	c.routes()
	return c, nil
}

// Drain ends the live tails and the sampler, so an HTTP server shutting
// down is not held by streams that never go idle. Pages still work.
func (c *Console) Drain() { c.cancel() }

// Close drains the console and closes every client.
func (c *Console) Close() {
	c.cancel()
	c.clients.close()
}

// Handler serves the console.
func (c *Console) Handler() http.Handler { return c.mux }

func (c *Console) routes() {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets/static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", c.overview)
	mux.HandleFunc("GET /api/metrics", c.metricsJSON)
	mux.HandleFunc("GET /api/groups/{group}/lag", c.groupLagJSON)
	mux.HandleFunc("GET /topics", c.topicsPage)
	mux.HandleFunc("POST /topics", c.change(c.createTopic))
	mux.HandleFunc("GET /topics/{topic}", c.topicPage)
	mux.HandleFunc("POST /topics/{topic}/delete", c.change(c.deleteTopic))
	mux.HandleFunc("POST /topics/{topic}/configs", c.change(c.alterTopicConfigs))
	mux.HandleFunc("POST /topics/{topic}/partitions", c.change(c.addPartitions))
	mux.HandleFunc("GET /topics/{topic}/records", c.recordsPage)
	mux.HandleFunc("GET /topics/{topic}/tail", c.tail)
	mux.HandleFunc("GET /groups", c.groupsPage)
	mux.HandleFunc("GET /groups/{group}", c.groupPage)
	mux.HandleFunc("POST /groups/{group}/reset", c.change(c.resetOffsets))
	mux.HandleFunc("POST /groups/{group}/delete", c.change(c.deleteGroup))
	mux.HandleFunc("GET /share-groups/{group}", c.shareGroupPage)
	mux.HandleFunc("POST /share-groups/{group}/reset", c.change(c.resetShareOffsets))
	mux.HandleFunc("POST /share-groups/{group}/delete-offsets", c.change(c.deleteShareOffsets))
	mux.HandleFunc("GET /schemas", c.schemasPage)
	mux.HandleFunc("GET /schemas/{subject}", c.subjectPage)
	mux.HandleFunc("GET /security", c.securityPage)
	mux.HandleFunc("POST /security/users", c.change(c.upsertUser))
	mux.HandleFunc("POST /security/users/delete", c.change(c.deleteUser))
	mux.HandleFunc("POST /security/acls", c.change(c.createACL))
	mux.HandleFunc("POST /security/acls/delete", c.change(c.deleteACL))
	mux.HandleFunc("GET /transactions", c.transactionsPage)
	c.mux = mux
}

// change guards a handler that alters the cluster: refused in read-only
// mode, and only from a form of the console's own origin, so another site
// cannot make a logged-in browser act.
func (c *Console) change(handler http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c.config.ReadOnly {
			c.fail(w, r, http.StatusForbidden, errors.New("the console is read-only (console.read.only=true)"))
			return
		}
		if !sameOrigin(r) {
			c.fail(w, r, http.StatusForbidden, errors.New("cross-origin form refused"))
			return
		}
		handler(w, r)
	}
}

// sameOrigin reports whether a form post came from a page of this host:
// its Origin (or, without one, its Referer) names the request's host.
func sameOrigin(r *http.Request) bool {
	source := r.Header.Get("Origin")
	if source == "" || source == "null" {
		source = r.Header.Get("Referer")
	}
	if source == "" {
		// Not a browser (curl, a script): no ambient credentials to abuse.
		return r.Header.Get("Sec-Fetch-Site") == ""
	}
	u, err := url.Parse(source)
	return err == nil && u.Host == r.Host
}

// session is what one request acts with.
type session struct {
	client  *kgo.Client
	admin   *kadm.Client
	decoder *decoder
	// registry is the schema registry client of this user, or nil.
	registry *sr.Client
}

// session returns the client of the request's user.
func (c *Console) session(r *http.Request) (*session, error) {
	return c.clients.get(r)
}

// requestContext bounds one page's Kafka requests.
func requestContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), DefaultRequestTimeoutMs*time.Millisecond)
}

// clientPool holds one client per logged-in user, or one anonymous client.
type clientPool struct {
	config Config
	mu     struct {
		sync.Mutex
		// Invariant: len(sessions) == len(order) <= config.SessionsMax.
		sessions map[string]*session
		order    []string // oldest first
	}
}

func newClientPool(config Config) *clientPool {
	p := &clientPool{config: config}
	p.mu.sessions = map[string]*session{}
	return p
}

func (p *clientPool) get(r *http.Request) (*session, error) {
	key, user, password := "", "", ""
	var opts []kgo.Opt
	if p.config.SASL != nil {
		var ok bool
		user, password, ok = r.BasicAuth()
		if !ok {
			return nil, errors.New("no login")
		}
		digest := sha256.Sum256([]byte(user + "\x00" + password))
		key = fmt.Sprintf("%s\x00%x", user, digest)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.mu.sessions[key]; ok {
		return s, nil
	}
	if p.config.SASL != nil {
		mechanism, err := p.config.SASL(user, password)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(mechanism))
	}
	opts = append(opts, kgo.SeedBrokers(p.config.SeedBrokers...), kgo.ClientID("samsa-console"),
		kgo.RequestTimeoutOverhead(5*time.Second), kgo.MetadataMinAge(time.Second))
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	if len(p.mu.order) >= p.config.SessionsMax {
		oldest := p.mu.order[0]
		p.mu.order = p.mu.order[1:]
		p.mu.sessions[oldest].client.Close()
		delete(p.mu.sessions, oldest)
	}
	s := &session{client: client, admin: kadm.NewClient(client), decoder: newDecoder(p.config.RegistryURL, user, password)}
	s.registry = s.decoder.registry
	p.mu.sessions[key] = s
	p.mu.order = append(p.mu.order, key)
	return s, nil
}

func (p *clientPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.mu.sessions {
		s.client.Close()
	}
	p.mu.sessions = map[string]*session{}
	p.mu.order = nil
}

// parsePages parses every page template with the layout.
func parsePages() (map[string]*template.Template, error) {
	names, err := fs.Glob(assets, "assets/templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, name := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(name, "assets/templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(templateFuncs).ParseFS(assets, "assets/templates/layout.html", name)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		pages[base] = t
	}
	return pages, nil
}

// page is what every template receives.
type page struct {
	Title    string
	Nav      string
	ReadOnly bool
	Error    string
	Notice   string
	Data     any
}

// render writes a page; status is the HTTP status.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.ReadOnly = c.config.ReadOnly
	if p.Notice == "" {
		p.Notice = r.URL.Query().Get("notice")
	}
	t, ok := c.pages[name]
	if !ok {
		http.Error(w, "no page "+name, http.StatusInternalServerError)
		return
	}
	var buffer strings.Builder
	if err := t.Execute(&buffer, p); err != nil {
		c.config.Logger.Error("console page", "page", name, "err", err)
		http.Error(w, "rendering the page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(buffer.String()))
}

// fail renders the error page.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	c.render(w, r, status, "error", page{Title: http.StatusText(status), Error: err.Error()})
}

// redirect answers a successful form with a 303 to location and a notice.
func redirect(w http.ResponseWriter, r *http.Request, location, notice string) {
	separator := "?"
	if strings.Contains(location, "?") {
		separator = "&"
	}
	http.Redirect(w, r, location+separator+"notice="+url.QueryEscape(notice), http.StatusSeeOther)
}
