// Package api implements the Kafka APIs a Samsa node serves, one file per
// API key (00_produce.go, 01_fetch.go, ...). Each file registers its key,
// the versions it serves and its handler in one call, and that one table
// both dispatches requests and answers ApiVersions.
//
// Protocol errors are Kafka error codes in the response, as Kafka returns
// them; a Go error or a malformed request closes the connection.
//
// Requests that change metadata (CreateTopics, DeleteTopics,
// CreatePartitions, AlterConfigs, IncrementalAlterConfigs) are decided by the
// active controller, the metadata quorum's leader: any other node forwards
// them there and relays the answer (forward.go).
package api

import (
	"context"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/group"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/metrics"
	"github.com/samsa-streaming/samsa/internal/network"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/quorum"
	"github.com/samsa-streaming/samsa/internal/quota"
	"github.com/samsa-streaming/samsa/internal/share"
	"github.com/samsa-streaming/samsa/internal/telemetry"
	"github.com/samsa-streaming/samsa/internal/tier"
	"github.com/samsa-streaming/samsa/internal/txn"
)

// Broker is everything the handlers need of the node.
type Broker struct {
	NodeID int32
	// StaticConfig is the configuration from the file, environment and
	// overrides; Config adds the dynamic broker configs of the image.
	StaticConfig *config.Broker
	Controller   *controller.Controller
	Partitions   *partition.Manager
	// Quorum is the metadata quorum when this node is one of its voters (it
	// has the controller role); nil on a broker-only node.
	Quorum *quorum.Quorum
	// MetadataLeader is the active controller and its epoch as this node
	// knows them: from its quorum on a voter, from the metadata follower on a
	// broker-only node. Nil means this node decides alone.
	MetadataLeader func() (id int32, epoch int64)
	// ForwardToController sends a request to the active controller (the
	// quorum leader) and returns its answer.
	ForwardToController func(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	// SendToBroker sends a request to another broker and returns its
	// answer; the transaction paths use it to reach a transaction
	// coordinator on another node.
	SendToBroker func(ctx context.Context, broker int32, req kmsg.Request) (kmsg.Response, error)
	// Groups is the group coordinator.
	Groups *group.Coordinator
	// Txn is the transaction coordinator.
	Txn *txn.Coordinator
	// ShareStates is the share coordinator over __share_group_state.
	ShareStates *share.StateCoordinator
	// Loggers, when set, are the loggers BROKER_LOGGER configs describe
	// and change.
	Loggers RuntimeLoggers
	// Telemetry, when set, answers client telemetry (KIP-714): the
	// subscriptions and the pushed metrics (71_get_telemetry_subscriptions.go).
	Telemetry *telemetry.Manager
	// LogDirMoverWake, when set, wakes the driver of replica moves between
	// log dirs (AlterReplicaLogDirs).
	LogDirMoverWake func()
	// Metrics, when set, counts bytes and records in and out per topic.
	Metrics *metrics.Metrics
	// Authorization is the authorizer (authorize.go); nil when
	// authorizer.class.name is empty, and every request is allowed.
	Authorization *Authorization
	// SchemaIDs answers schema id validation (confluent.value.schema.validation,
	// produce_schema_validation.go); nil refuses batches of validated topics.
	SchemaIDs SchemaIDChecker
	// Remote reads the remote tier of tiered partitions (fetch_remote.go);
	// nil when tiered storage is off.
	Remote *tier.Reader
	// Quotas measures clients against their quotas (quota.go); nil for
	// none.
	Quotas *quota.Manager
	// LeaderReplicationQuota throttles what this leader sends to catching-up
	// followers (fetch_throttle.go); nil for none.
	LeaderReplicationQuota *quota.ReplicationQuota
	Logger                 *slog.Logger
	// Now is the clock; tests may replace it.
	Now func() time.Time

	sessions fetchSessionCache
	// share is the share sessions and share-partitions (share_partitions.go).
	share shareState
	// observers are the brokers following the metadata log from this
	// voter (01_fetch_metadata.go).
	observers   observerTracker
	snapshots   snapshotCache
	producerIDs producerIDBlock
	effective   atomic.Pointer[effectiveConfig]
	// parked holds the delayed operations waiting in the purgatory, so a
	// shutdown can complete them; closing stops new ones from parking.
	parked  sync.Map // *fetchOp -> struct{}
	closing atomic.Bool

	// streamsCreations are the streams internal topics being created
	// (88_streams_group_heartbeat.go).
	streamsCreations streamsTopicCreations
}

// BeginShutdown completes every parked request with what it has now and
// makes new ones answer at once, so a graceful shutdown does not wait for
// long-poll deadlines.
func (b *Broker) BeginShutdown() {
	b.closing.Store(true)
	b.parked.Range(func(key, _ any) bool {
		key.(interface{ expire() }).expire()
		return true
	})
}

// effectiveConfig is the broker config with the dynamic overrides of the
// image at offset.
type effectiveConfig struct {
	offset int64
	cfg    *config.Broker
}

// Config is the effective broker configuration: the static configuration
// with the dynamic broker configs of the current metadata image.
func (b *Broker) Config() *config.Broker { return b.ConfigFor(b.Image()) }

// ConfigFor is the effective broker configuration at img.
func (b *Broker) ConfigFor(img *metadata.Image) *config.Broker {
	if e := b.effective.Load(); e != nil && e.offset == img.Offset {
		return e.cfg
	}
	perBroker := img.Configs(metadata.ResourceBroker, strconv.Itoa(int(b.NodeID)))
	defaults := img.Configs(metadata.ResourceBroker, "")
	cfg := b.StaticConfig
	if len(perBroker) > 0 || len(defaults) > 0 {
		dynamic, err := b.StaticConfig.WithDynamic(perBroker, defaults)
		if err != nil {
			b.Logger.Error("ignoring invalid dynamic broker configs", "err", err)
		} else {
			cfg = dynamic
		}
	}
	b.effective.Store(&effectiveConfig{offset: img.Offset, cfg: cfg})
	return cfg
}

// Image is the current metadata image.
func (b *Broker) Image() *metadata.Image { return b.Controller.Image() }

// handler serves one API key.
type handler struct {
	key        int16
	minVersion int16
	maxVersion int16
	// handle decodes nothing itself: req is already decoded at c.version.
	handle func(b *Broker, c *call, req kmsg.Request)
}

// handlerTable is the APIs served on one kind of listener, by key.
type handlerTable map[int16]*handler

// brokerAPIs are served on the client listeners (listeners other than
// controller.listener.names); controllerAPIs on the controller listener,
// where brokers and tools reach the metadata quorum, as Kafka splits them.
var brokerAPIs, controllerAPIs = handlerTable{}, handlerTable{}

// register adds an API to the client listeners' dispatch and ApiVersions
// table. Called from each API file's init.
func register(key, minVersion, maxVersion int16, handle func(b *Broker, c *call, req kmsg.Request)) {
	brokerAPIs.add(key, minVersion, maxVersion, handle)
}

// registerController adds an API to the controller listener's table.
func registerController(key, minVersion, maxVersion int16, handle func(b *Broker, c *call, req kmsg.Request)) {
	controllerAPIs.add(key, minVersion, maxVersion, handle)
}

func (t handlerTable) add(key, minVersion, maxVersion int16, handle func(b *Broker, c *call, req kmsg.Request)) {
	if _, dup := t[key]; dup {
		panic("api: key registered twice")
	}
	t[key] = &handler{key: key, minVersion: minVersion, maxVersion: maxVersion, handle: handle}
}

// tableFor is the table of the listener a request came in on.
func (b *Broker) tableFor(listener string) handlerTable {
	if b.StaticConfig != nil && slices.Contains(b.StaticConfig.ControllerListenerNames, listener) {
		return controllerAPIs
	}
	return brokerAPIs
}

// supported lists the table's APIs by key, for ApiVersions.
func (t handlerTable) supported() []*handler {
	out := make([]*handler, 0, len(t))
	for _, h := range t {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// call is one request being served.
type call struct {
	req     *network.Request
	version int16
	start   time.Time
	// amend, when set, completes the response before it is sent: it adds
	// the items the authorizer denied before the rest was decided here or
	// forwarded to the controller.
	amend func(kmsg.Response)
	// enveloped marks a request a broker forwarded in an Envelope: it is
	// decided here and never forwarded again.
	enveloped bool
	// quota is the request's client-quota state (quota.go).
	quota callQuota
}

// reply encodes resp at the request's version and sends it.
func (c *call) reply(resp kmsg.Response) {
	if c.amend != nil {
		c.amend(resp)
	}
	throttleMs := c.throttleOnReply()
	if t, ok := resp.(kmsg.SetThrottleResponse); ok && throttleMs > 0 {
		t.SetThrottle(throttleMs)
	}
	resp.SetVersion(c.version)
	out := network.BytesResponse(resp.AppendTo(nil))
	out.ThrottleMs = throttleMs
	c.req.Respond(out)
}

// Handle implements network.Handler.
func (b *Broker) Handle(ctx context.Context, req *network.Request) {
	table := b.tableFor(req.Conn.Listener)
	h := table[req.APIKey]
	if h == nil {
		b.Logger.Info("closing connection: unknown api key", "key", req.APIKey, "client", req.Conn.RemoteAddr)
		req.Respond(network.Response{None: true, Close: true})
		return
	}
	if req.APIVersion < h.minVersion || req.APIVersion > h.maxVersion {
		if req.APIKey == apiVersionsKey {
			// Kafka's fallback: answer in v0 so any client can read which
			// versions are supported.
			req.Respond(network.BytesResponse(unsupportedAPIVersionsResponse(table)))
			return
		}
		b.Logger.Info("closing connection: unsupported version", "key", req.APIKey, "version", req.APIVersion, "client", req.Conn.RemoteAddr)
		req.Respond(network.Response{None: true, Close: true})
		return
	}
	var body kmsg.Request
	if prepared, ok := req.Prepared.(*preparedProduce); ok {
		body = prepared.request // decoded by Prepare
	} else {
		body = kmsg.RequestForKey(req.APIKey)
		body.SetVersion(req.APIVersion)
		if err := body.ReadFrom(req.Body); err != nil {
			b.Logger.Info("closing connection: malformed request", "key", req.APIKey, "version", req.APIVersion, "client", req.Conn.RemoteAddr, "err", err)
			req.Respond(network.Response{None: true, Close: true})
			return
		}
	}
	c := &call{req: req, version: req.APIVersion, start: b.Now()}
	c.quota.broker = b
	h.handle(b, c, body)
	c.handled()
}

func strptr(s string) *string { return &s }
