// Package server assembles a Samsa node from its configuration: storage,
// the metadata log and controller, the hosted partitions, the API handlers
// and the network listeners.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-streaming/samsa/internal/api"
	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/group"
	"github.com/samsa-streaming/samsa/internal/log"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/metrics"
	"github.com/samsa-streaming/samsa/internal/network"
	"github.com/samsa-streaming/samsa/internal/partition"
	"github.com/samsa-streaming/samsa/internal/quorum"
	"github.com/samsa-streaming/samsa/internal/quota"
	"github.com/samsa-streaming/samsa/internal/replication"
	"github.com/samsa-streaming/samsa/internal/txn"
	"github.com/samsa-streaming/samsa/internal/vfs"
)

// Node is a running Samsa node.
type Node struct {
	tier    tierState // tier.go
	cfg     *config.Broker
	logger  *slog.Logger
	logs    *log.Manager
	journal *quorumJournal
	// quorum is the Raft metadata quorum on a node with the controller role;
	// follower follows the log instead on a broker-only node. metadata is
	// whichever of the two this node has.
	quorum   *quorum.Quorum
	follower *metadataFollower
	metadata metadataView
	// activeController reaches the quorum leader for registration and
	// forwarded admin requests.
	activeController *activeController
	controller       *controller.Controller
	partitions       *partition.Manager
	// replicas runs the replica fetchers (replication.go).
	replicas *replication.Manager
	broker   *api.Broker
	groups   *group.Coordinator
	// txn is the transaction coordinator; txnElections feeds it the
	// __transaction_state partitions this node leads (txn.go).
	txn          *txn.Coordinator
	txnElections *txnElections
	txnPeers     *brokerClients // other brokers, for markers and verification
	network      *network.Server
	// connectionRates measures connection creation per IP and listener
	// (quotas.go).
	connectionRates *quota.ConnectionRates
	cancel          context.CancelFunc
	metrics         *metrics.Metrics
	// metricsServer serves /metrics, /healthz and /readyz; nil when
	// metrics.listener is empty.
	metricsServer *metrics.Server
	registry      *registryService  // nil unless schema.registry.listeners is set
	console       *consoleService   // nil unless console.listener is set
	httpProxy     *httpProxyService // nil unless http.proxy.listeners is set
	schemaIDs     *schemaIDChecker  // the broker's schema id validation
	ready         atomic.Bool
	// clientListeners are the listeners bound for clients, in the order of
	// network.Server.Addrs.
	clientListeners []config.Listener
	// logDirMover copies replicas between log dirs (logdir_mover.go).
	logDirMover *logDirMover
	// shareElections feeds the share coordinator its __share_group_state
	// partitions (share.go).
	shareElections *shareElections
	// background counts the node's loops (goBackground); Shutdown waits
	// for them to return.
	background sync.WaitGroup
}

// goBackground runs loop until ctx ends, in a goroutine Shutdown waits for.
func (n *Node) goBackground(ctx context.Context, loop func(context.Context)) {
	n.background.Add(1)
	go func() {
		defer n.background.Done()
		loop(ctx)
	}()
}

// Options are the parts of a node that are not configuration.
type Options struct {
	// Logger, when set, receives the node's logs through its own handler
	// (log.format is then unused; log.level and log.level.<component> still
	// filter). Nil writes log.format lines to stderr.
	Logger *slog.Logger
	FS     vfs.FS
}

// Run starts a node with cfg and serves until ctx is cancelled, then shuts
// down gracefully.
func Run(ctx context.Context, cfg *config.Broker) error {
	n, err := Start(cfg, Options{})
	if err != nil {
		return err
	}
	<-ctx.Done()
	n.logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return n.Shutdown(shutdownCtx)
}

// Start opens the node's storage, replays its metadata and starts serving.
func Start(cfg *config.Broker, opts Options) (*Node, error) {
	logging := newLogging(cfg, opts.Logger, os.Stderr)
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	n := &Node{cfg: cfg, logger: logging.root, metrics: metrics.New()}
	// Every fsync the storage layer makes is timed for samsa_log_flush_seconds.
	opts.FS = vfs.ObserveSyncs(opts.FS, n.metrics.LogFlushObserver())
	clusterID := cfg.ClusterID
	var discovered discoveredQuorum
	if joinsDynamicQuorum(cfg) {
		var err error
		if discovered, err = discoverQuorum(cfg, opts.FS, logging.component("controller")); err != nil {
			return nil, err
		}
		if clusterID == "" {
			clusterID = discovered.clusterID
		}
	}
	if clusterID == "" && len(cfg.ControllerQuorumVoters) > 0 {
		clusterID = clusterIDFromVoters(cfg)
	}
	for _, dir := range cfg.LogDirs {
		if clusterID != "" {
			break
		}
		if meta, err := log.ReadMetaProperties(opts.FS, dir); err == nil {
			clusterID = meta.ClusterID
		}
	}
	if clusterID == "" && !cfg.IsController() && len(cfg.ControllerQuorumVoters) == 0 && len(cfg.ControllerQuorumBootstrapServers) > 0 {
		// A new broker that finds the controllers through
		// controller.quorum.bootstrap.servers takes their cluster id.
		d, err := discoverQuorum(cfg, opts.FS, logging.component("controller"))
		if err != nil {
			return nil, err
		}
		clusterID = d.clusterID
	}
	if clusterID == "" {
		clusterID = newClusterID()
	}
	logs, err := log.NewManager(opts.FS, cfg.LogDirs, log.ManagerOptions{
		NodeID:                          cfg.NodeID,
		ClusterID:                       clusterID,
		RetentionCheckIntervalMs:        cfg.LogRetentionCheckIntervalMs,
		FlushSchedulerIntervalMs:        cfg.LogFlushSchedulerIntervalMs,
		FlushOffsetCheckpointIntervalMs: int64(cfg.LogFlushOffsetCheckpointIntervalMs),
		Logger:                          logging.component("log"),
		SkipTopics:                      map[string]bool{controller.MetadataTopic: true},
		// Logs found on disk open with their topic's configs: LoadAll
		// runs once the metadata image has caught up (startBroker).
		TopicConfig: func(topic string) log.Config {
			return partition.LogConfig(n.topicConfig(n.controller.Image(), topic))
		},
		Cleaner: log.CleanerOptions{
			Enable: cfg.LogCleanerEnable, Threads: int(cfg.LogCleanerThreads),
			DedupeBufferSize: cfg.LogCleanerDedupeBufferSize, DedupeBufferLoadFactor: cfg.LogCleanerIOBufferLoadFactor,
			IOBufferSize: int(cfg.LogCleanerIOBufferSize), IOMaxBytesPerSecond: cfg.LogCleanerIOMaxBytesPerSecond,
			BackoffMs: cfg.LogCleanerBackoffMs, ProducerIDExpirationMs: int64(cfg.ProducerIDExpirationMs),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("open log dirs: %w", err)
	}
	n.logs = logs

	n.journal = &quorumJournal{timeout: 30 * time.Second}
	bootstrapRecords, err := bootstrapScramUsers(cfg)
	if err != nil {
		logs.Shutdown()
		return nil, err
	}
	n.controller = controller.New(controller.Config{
		BootstrapRecords:         slices.Concat(bootstrapFeatureLevels(), bootstrapClusterConfigs(cfg), bootstrapRecords),
		NodeID:                   cfg.NodeID,
		DefaultNumPartitions:     cfg.NumPartitions,
		DefaultReplicationFactor: cfg.DefaultReplicationFactor,
		DeleteTopicEnable:        cfg.DeleteTopicEnable,
		ValidateTopicConfigs:     cfg.ValidateTopicConfigs,
		Logger:                   logging.component("controller"),
	}, n.journal)
	if err := checkClientSecurity(cfg); err != nil {
		logs.Shutdown()
		return nil, err
	}
	var controllerListener *controllerListener
	if cfg.IsController() {
		qcfg, err := quorumConfig(cfg, opts.FS, logging.component("controller"), discovered)
		if err != nil {
			logs.Shutdown()
			return nil, err
		}
		if len(cfg.ControllerQuorumVoters) > 0 || joinsDynamicQuorum(cfg) {
			// The controller listener carries the Raft traffic and the Kafka
			// protocol of the controller APIs (controller_listener.go).
			bound, err := net.Listen("tcp", qcfg.ListenAddr)
			if err != nil {
				logs.Shutdown()
				return nil, fmt.Errorf("controller listener %s: %w", qcfg.ListenAddr, err)
			}
			listenerTLS, err := serverTLS(cfg, controllerListenerName(cfg), logging.component("network"))
			if err != nil {
				bound.Close()
				logs.Shutdown()
				return nil, err
			}
			controllerListener = newControllerListener(bound, listenerTLS)
			qcfg.Listener = controllerListener.raft
		}
		// Starting the quorum replays the metadata log into the controller.
		n.quorum, err = quorum.Start(qcfg, controllerStateMachine{n.controller})
		if err != nil {
			if controllerListener != nil {
				controllerListener.kafka.Close()
			}
			logs.Shutdown()
			return nil, fmt.Errorf("metadata quorum: %w", err)
		}
		n.journal.q = n.quorum
		n.metadata = n.quorum
	} else {
		n.follower, err = newMetadataFollower(cfg, n.controller, logging.component("controller"))
		if err != nil {
			logs.Shutdown()
			return nil, err
		}
		n.metadata = n.follower
	}
	n.activeController = &activeController{n: n}

	n.broker = &api.Broker{
		NodeID:         cfg.NodeID,
		StaticConfig:   cfg,
		Controller:     n.controller,
		Quorum:         n.quorum,
		MetadataLeader: n.metadata.Leader,
		Logger:         logging.component("api"),
		Loggers:        logging,
		Now:            time.Now,
		Authorization:  newAuthorization(cfg, n.controller),
	}
	n.schemaIDs = &schemaIDChecker{}
	n.broker.SchemaIDs = n.schemaIDs
	n.connectionRates = quota.NewConnectionRates(quotaWindows(cfg).Windows)
	n.broker.Quotas = newQuotas(cfg, n.controller, n.connectionRates)
	n.partitions = partition.NewManager(cfg.NodeID, logs, n.topicConfig, []string{controller.MetadataTopic}, logging.component("log"))
	n.broker.Partitions = n.partitions
	n.broker.ForwardToController = n.activeController.request
	n.setupTelemetry()
	n.partitions.SetProducerIDExpirationMs(int64(cfg.ProducerIDExpirationMs))
	groupCfg := group.DefaultConfig()
	groupCfg.OffsetsTopicNumPartitions = cfg.OffsetsTopicNumPartitions
	groupCfg.GroupMinSessionTimeoutMs = cfg.GroupMinSessionTimeoutMs
	groupCfg.GroupMaxSessionTimeoutMs = cfg.GroupMaxSessionTimeoutMs
	groupCfg.GroupInitialRebalanceDelayMs = cfg.GroupInitialRebalanceDelayMs
	groupCfg.GroupMaxSize = cfg.GroupMaxSize
	groupCfg.OffsetsRetentionMinutes = cfg.OffsetsRetentionMinutes
	groupCfg.ConsumerGroup.Enabled = slices.Contains(cfg.GroupCoordinatorRebalanceProtocols, "consumer")
	groupCfg.ConsumerGroup.SessionTimeoutMs = cfg.GroupConsumerSessionTimeoutMs
	groupCfg.ConsumerGroup.HeartbeatIntervalMs = cfg.GroupConsumerHeartbeatIntervalMs
	groupCfg.ConsumerGroup.MaxSize = cfg.GroupConsumerMaxSize
	groupCfg.ConsumerGroup.Assignors = cfg.GroupConsumerAssignors
	groupCfg.StreamsGroup = streamsGroupConfig(cfg)
	groupCfg.ShareGroup = shareGroupConfig(cfg, n.broker)
	groupCfg.Topics = topicResolver{n.controller}
	groupCfg.Logger = logging.leveled("group")
	n.groups, err = group.NewCoordinator(groupCfg, txnOffsetsStorage{offsetsStorage{partitions: n.partitions, timeoutMs: cfg.RequestTimeoutMs}})
	if err != nil {
		logs.Shutdown()
		return nil, fmt.Errorf("group coordinator: %w", err)
	}
	n.broker.Groups = n.groups
	n.setupTransactions(logging.leveled("txn"))
	n.setupShareCoordinator(logging.leveled("share"))
	var listeners []network.ListenerSpec
	for _, l := range cfg.Listeners {
		if isControllerListener(cfg, l.Name) {
			continue
		}
		n.clientListeners = append(n.clientListeners, l)
		spec, err := secureListenerSpec(cfg, network.ListenerSpec{Name: l.Name, Address: net.JoinHostPort(l.Host, strconv.Itoa(l.Port))}, n.broker.Config, logging.component("network"))
		if err != nil {
			logs.Shutdown()
			return nil, err
		}
		listeners = append(listeners, spec)
	}
	// The controller listener comes last, so the client listeners keep their
	// indexes in Addrs.
	if controllerListener != nil {
		followDynamicConfig(controllerListener.tls, cfg.ControllerListenerNames[0], n.broker.Config)
		// Its TLS handshake, if any, was done by the controller listener.
		// Its requests have a queued.max.request.bytes pool of their own, as
		// those of Kafka's controller socket server do.
		listeners = append(listeners, network.ListenerSpec{Name: cfg.ControllerListenerNames[0], Address: controllerListener.inner.Addr().String(), Listener: controllerListener.kafka, OpenAtStart: true, OwnMemoryPool: true,
			SecurityProtocol: cfg.ListenerSecurityProtocolMap[cfg.ControllerListenerNames[0]], TLSPrincipal: controllerListener.principalFunc(cfg.ListenerSecurityProtocolMap[cfg.ControllerListenerNames[0]])})
	}
	if err := attachAuthenticators(cfg, listeners, n.controller.Image); err != nil {
		if controllerListener != nil {
			controllerListener.kafka.Close()
		}
		n.stopMetadata()
		logs.Shutdown()
		return nil, err
	}
	n.broker.Metrics = n.metrics
	n.network, err = network.NewServer(n.withConnectionLimits(network.Config{
		Observer:                 newRequestLog(n.metrics, logging.component("request"), cfg.LogRequestSampleRate),
		Listeners:                listeners,
		AcceptAfterOpen:          true,
		NumNetworkThreads:        int(cfg.NumNetworkThreads),
		NumIOThreads:             int(cfg.NumIOThreads),
		QueuedMaxRequests:        int(cfg.QueuedMaxRequests),
		QueuedMaxRequestBytes:    cfg.QueuedMaxRequestBytes,
		SocketRequestMaxBytes:    cfg.SocketRequestMaxBytes,
		ConnectionsMaxIdleMs:     cfg.ConnectionsMaxIdleMs,
		MaxConnections:           int(cfg.MaxConnections),
		MaxConnectionsPerIP:      int(cfg.MaxConnectionsPerIP),
		SocketSendBufferBytes:    int(cfg.SocketSendBufferBytes),
		SocketReceiveBufferBytes: int(cfg.SocketReceiveBufferBytes),
		// Produce bodies are reused (see network.Request.Body): the handler
		// copies the records into the log with the append and keeps nothing
		// of the body once it has answered. perf_test.go checks it.
		ReuseBodyAPIKeys: []int16{0},
		// Produce requests are read ahead while the previous one is handled
		// and answered, and appended one at a time in arrival order, each
		// once the previous one has answered, which idempotent producers
		// need (network.Config.PipelinedAPIKeys);
		// every other request waits for the earlier ones to be answered, as
		// in Kafka. Five is the max.in.flight.requests.per.connection of
		// Kafka's producers (and franz-go's); more would only hold frames.
		MaxInFlightRequestsPerConnection: 5,
		PipelinedAPIKeys:                 []int16{0},
	}), n.broker, logging.component("network"))
	if err == nil {
		err = n.network.Start()
	}
	if err != nil {
		if controllerListener != nil {
			controllerListener.kafka.Close()
		}
		n.stopMetadata()
		logs.Shutdown()
		return nil, err
	}
	n.metrics.Registry.MustRegister(n.network.Collector(), nodeCollector{n}, lagCollector{n}, metrics.NewIdleRatios(n.network.Stats))
	if n.broker.Authorization != nil {
		n.metrics.Registry.MustRegister(n.broker.Authorization.Collector())
	}
	n.metrics.Registry.MustRegister(quotaCollector{n.broker.Quotas})
	if cfg.MetricsListener != "" {
		guard, guardErr := metricsGuard(cfg, n.controller.Image, n.broker.Authorization)
		if guardErr == nil {
			n.metricsServer, err = metrics.ServeGuarded(cfg.MetricsListener, n.metrics, func() bool { return n.ready.Load() }, guard)
		} else {
			err = guardErr
		}
		if err != nil {
			n.network.Shutdown(context.Background())
			n.stopMetadata()
			logs.Shutdown()
			return nil, fmt.Errorf("metrics.listener %s: %w", cfg.MetricsListener, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	if n.quorum != nil {
		n.goBackground(ctx, func(ctx context.Context) { n.runClusterBootstrap(ctx, clusterID) })
	}
	if err := n.startRestore(ctx); err != nil {
		cancel()
		n.network.Shutdown(context.Background())
		n.stopMetadata()
		logs.Shutdown()
		return nil, fmt.Errorf("tiered storage restore: %w", err)
	}
	if cfg.IsBroker() {
		if err := n.startBroker(clusterID); err != nil {
			cancel()
			n.network.Shutdown(context.Background())
			n.stopMetadata()
			logs.Shutdown()
			return nil, err
		}
		logs.Start(ctx)
		n.startTransactionTimers(ctx)
		n.goBackground(ctx, n.runISRChecks)
		n.startLogDirMover(ctx)
		if err := n.startTier(ctx, opts.FS); err != nil {
			cancel()
			n.network.Shutdown(context.Background())
			n.stopMetadata()
			logs.Shutdown()
			return nil, fmt.Errorf("tiered storage: %w", err)
		}
	}
	n.goBackground(ctx, n.runLiveness)
	if joinsDynamicQuorum(n.cfg) && n.quorum != nil {
		n.goBackground(ctx, n.refreshQuorumPeers)
	}
	n.goBackground(ctx, n.runTelemetryExpiry)
	n.goBackground(ctx, n.runLeaderRebalance)
	n.goBackground(ctx, n.runTokenExpiry)
	n.network.OpenForClients()
	if err := n.startRegistry(logging.component("registry")); err != nil {
		n.Shutdown(context.Background())
		return nil, err
	}
	if err := n.startSchemaValidation(); err != nil {
		n.Shutdown(context.Background())
		return nil, err
	}
	if err := n.startHTTPProxy(logging.component("httpproxy")); err != nil {
		n.Shutdown(context.Background())
		return nil, err
	}
	if err := n.startConsole(logging.component("console")); err != nil {
		n.Shutdown(context.Background())
		return nil, err
	}
	n.ready.Store(true)
	for _, a := range n.network.Addrs() {
		n.logger.Info("samsa listening", "address", a.String(), "node.id", cfg.NodeID, "process.roles", cfg.ProcessRoles, "cluster.id", n.controller.Image().ClusterID, "log.dirs", cfg.LogDirs)
	}
	return n, nil
}

// stopMetadata stops the quorum or the metadata follower.
func (n *Node) stopMetadata() error {
	if n.follower != nil {
		n.follower.stop()
	}
	if n.quorum != nil {
		return n.quorum.Stop()
	}
	return nil
}

// startBroker registers this node as a broker and, caught up with the
// metadata log, takes on its partitions and coordinators.
func (n *Node) startBroker(clusterID string) error {
	if n.follower != nil {
		n.follower.start()
	}
	regCtx, regCancel := context.WithTimeout(context.Background(), 60*time.Second)
	err := n.register(regCtx, clusterID)
	regCancel()
	if err != nil {
		return fmt.Errorf("register broker: %w", err)
	}
	// The logs on disk open only now, with their topics' configs from the
	// caught-up image (segment.index.bytes sizes the active segment's
	// indexes, segment.ms its roll time, ...), as Kafka's LogManager starts
	// once the broker has its first metadata image.
	if _, err := n.logs.LoadAll(); err != nil {
		return fmt.Errorf("load logs: %w", err)
	}
	// Only now, caught up with the metadata log, does the node take on its
	// partitions and coordinators: an image still replaying could make it
	// delete the logs of topics it has not seen yet.
	n.setupReplication()
	elections := &coordinatorElections{nodeID: n.cfg.NodeID, groups: n.groups}
	n.controller.Subscribe(func(old, next *metadata.Image) {
		n.restoreLogs(next)
		if err := n.partitions.Reconcile(old, next); err != nil {
			n.logger.Error("apply metadata", "err", err)
		}
		n.replicas.Apply()
		elections.apply(next)
		n.txnElections.apply(next)
		n.shareElections.apply(next)
		var deleted []string
		for _, name := range old.TopicNames() {
			if next.Topic(name) == nil {
				deleted = append(deleted, name)
			}
		}
		if len(deleted) > 0 {
			n.groups.TopicsDeleted(deleted...)
		}
	})

	return nil
}

// MetricsAddr is the bound metrics listener address, or nil.
func (n *Node) MetricsAddr() net.Addr {
	if n.metricsServer == nil {
		return nil
	}
	return n.metricsServer.Addr()
}

// Addrs are the bound client listener addresses.
func (n *Node) Addrs() []net.Addr { return n.network.Addrs() }

// Shutdown stops accepting, finishes in-flight requests, flushes the logs
// and writes the clean-shutdown marker.
func (n *Node) Shutdown(ctx context.Context) error {
	n.ready.Store(false)
	// Stop heartbeating first: a heartbeat would undo the controlled
	// shutdown's fencing.
	if n.cancel != nil {
		n.cancel()
	}
	if n.cfg.IsBroker() {
		csCtx, csCancel := context.WithTimeout(ctx, 10*time.Second)
		if err := n.controlledShutdown(csCtx); err != nil {
			n.logger.Warn("controlled shutdown", "err", err)
		}
		csCancel()
	}
	n.stopConsole(ctx)
	n.stopHTTPProxy(ctx)
	n.stopRegistry(ctx)
	n.broker.BeginShutdown()
	errNet := n.network.Shutdown(ctx)
	if n.metricsServer != nil {
		n.metricsServer.Close(ctx)
	}
	if n.cancel != nil {
		n.cancel()
	}
	n.stopTransactions()
	n.groups.Close()
	n.broker.ShareStates.Close()
	if n.replicas != nil {
		n.replicas.Shutdown()
	}
	n.stopLogDirMover()
	errSnapshots := n.partitions.WriteSnapshots()
	n.activeController.close()
	errQuorum := n.stopMetadata()
	// The loops end with ctx; a controller write one of them was making
	// ends with the quorum.
	n.background.Wait()
	errLogs := n.logs.Shutdown()
	return errors.Join(errNet, errSnapshots, errQuorum, errLogs)
}

// registration describes this node's advertised endpoints. A listener
// bound to port 0 advertises the port it actually got.
func (n *Node) registration() metadata.RegisterBrokerRecord {
	reg := metadata.RegisterBrokerRecord{BrokerID: n.cfg.NodeID}
	if n.cfg.BrokerRack != "" {
		rack := n.cfg.BrokerRack
		reg.Rack = &rack
	}
	bound := map[string]int{}
	for i, a := range n.network.Addrs() {
		if tcp, ok := a.(*net.TCPAddr); ok && i < len(n.clientListeners) {
			bound[n.clientListeners[i].Name] = tcp.Port
		}
	}
	for _, l := range n.cfg.AdvertisedListeners {
		if isControllerListener(n.cfg, l.Name) {
			continue
		}
		port := l.Port
		if port == 0 {
			port = bound[l.Name]
		}
		host := l.Host
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		reg.Endpoints = append(reg.Endpoints, metadata.Endpoint{Name: l.Name, Host: host, Port: int32(port)})
	}
	return reg
}

func isControllerListener(cfg *config.Broker, name string) bool {
	for _, c := range cfg.ControllerListenerNames {
		if c == name {
			return true
		}
	}
	return false
}

// topicConfig resolves a topic's storage settings from the broker defaults
// and the topic's dynamic overrides.
func (n *Node) topicConfig(img *metadata.Image, topic string) *config.TopicConfig {
	tc := n.broker.ConfigFor(img).ResolveTopic(img.Configs(metadata.ResourceTopic, topic))
	return &tc
}

func newClusterID() string { return metadata.RandomUUID().String() }
