package quorum

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/samsa-streaming/samsa/internal/vfs"
)

// Errors returned by this package. Callers test them with errors.Is; the
// returned errors wrap them with detail.
var (
	// ErrNotLeader: this node is not the leader, so it cannot commit (Kafka's
	// NOT_CONTROLLER / NOT_LEADER_OR_FOLLOWER). Leader names the leader when
	// one is known. Also returned when leadership moved before a proposal
	// committed: such a proposal is known never to commit.
	ErrNotLeader = errors.New("quorum: not the leader")
	// ErrCommitUnknown: the proposal may or may not have committed. This node
	// lost its place in the log and was caught up from a snapshot that may
	// include the proposal; its effect is in the state machine if it did.
	ErrCommitUnknown = errors.New("quorum: proposal outcome unknown")
	// ErrStopped: the quorum was stopped, or stopped itself after a failure
	// (see Err).
	ErrStopped = errors.New("quorum: stopped")
	// ErrProposalTooLarge: the values exceed Config.MaxProposalBytes.
	ErrProposalTooLarge = errors.New("quorum: proposal too large")
	// ErrCorrupt marks bytes on disk or on the wire that are not what this
	// package writes: recovery and Start test for it.
	ErrCorrupt = errors.New("quorum: corrupt data")
	// ErrConfig marks an invalid Config.
	ErrConfig = errors.New("quorum: invalid config")
)

// Voter is one member of the static voter set (controller.quorum.voters).
type Voter struct {
	ID   int32
	Addr string // host:port of the voter's controller listener
}

// ParseVoters parses controller.quorum.voters: "1@host:port,2@host:port,...".
func ParseVoters(s string) ([]Voter, error) {
	var voters []Voter
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		idText, addr, ok := strings.Cut(part, "@")
		if !ok {
			return nil, fmt.Errorf("%w: voter %q is not id@host:port", ErrConfig, part)
		}
		id, err := strconv.ParseInt(idText, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%w: voter %q: bad id: %v", ErrConfig, part, err)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("%w: voter %q: %v", ErrConfig, part, err)
		}
		voters = append(voters, Voter{ID: int32(id), Addr: addr})
	}
	return voters, validateVoters(voters)
}

func validateVoters(voters []Voter) error {
	if len(voters) == 0 {
		return fmt.Errorf("%w: no voters", ErrConfig)
	}
	seen := make(map[int32]bool, len(voters))
	for _, v := range voters {
		if v.ID <= 0 {
			return fmt.Errorf("%w: voter id %d must be positive", ErrConfig, v.ID)
		}
		if seen[v.ID] {
			return fmt.Errorf("%w: voter id %d listed twice", ErrConfig, v.ID)
		}
		if v.Addr == "" {
			return fmt.Errorf("%w: voter %d has no address", ErrConfig, v.ID)
		}
		seen[v.ID] = true
	}
	return nil
}

// Config configures one controller's quorum member. Kafka's names and
// defaults are in the comments; zero fields take the defaults.
type Config struct {
	// NodeID is node.id; it must be one of Voters when Voters is set.
	NodeID int32
	// Voters is controller.quorum.voters (see ParseVoters): the voter set a
	// new metadata log starts with, at kraft.version 0. Empty when the node
	// joins an existing quorum through controller.quorum.bootstrap.servers:
	// it then starts as an observer, receiving nothing until the leader adds
	// it (AddVoter), and keeps the voter set it learns in its log.
	Voters []Voter
	// Peers are members whose endpoints are known before the log tells them
	// (what DescribeQuorum on controller.quorum.bootstrap.servers answered),
	// so an observer can answer the leader that adds it.
	Peers []Member
	// ListenerName is the controller listener's name, recorded as the
	// endpoint name of the voters of Voters (default CONTROLLER).
	ListenerName string
	// ListenAddr is this controller's listener, host:port; port 0 picks one
	// (see Quorum.Addr). Ignored when Listener is set.
	ListenAddr string
	// DialTLS, when set, makes connections to peers TLS client connections
	// with this config (the controller listener is SSL or SASL_SSL); the
	// peer's host is the server name verified unless the config names one.
	DialTLS *tls.Config
	// Listener, when set, is used instead of listening on ListenAddr, so a
	// caller can bind every voter's listener before it knows all addresses.
	// Start takes it over: it is closed by Stop, or by Start if Start fails.
	Listener net.Listener
	// Dir is metadata.log.dir; the quorum keeps everything in
	// Dir/__cluster_metadata-0.
	Dir string
	// FS is the filesystem (vfs.Default when nil).
	FS vfs.FS

	// TickMs is the length of one raft tick (default 100).
	TickMs int
	// ElectionTicks: a follower that hears nothing from a leader for a random
	// time in [ElectionTicks, 2*ElectionTicks) ticks starts an election, and a
	// leader that hears from no quorum for ElectionTicks steps down (default
	// 10: with 100 ms ticks, 1000 to 2000 ms, spanning Kafka's
	// controller.quorum.election.timeout.ms 1000 and
	// controller.quorum.fetch.timeout.ms 2000).
	ElectionTicks int
	// HeartbeatTicks is how often the leader heartbeats its followers
	// (default 1 tick; must be below ElectionTicks).
	HeartbeatTicks int

	// SnapshotIntervalBytes is
	// metadata.log.max.record.bytes.between.snapshots: take a snapshot once
	// this many bytes of entries were applied since the last (default 20 MiB).
	SnapshotIntervalBytes int64
	// SnapshotIntervalMs is metadata.log.max.snapshot.interval.ms: take a
	// snapshot when the last is this old and entries were applied since
	// (default 1 hour; -1 disables, Kafka's 0).
	SnapshotIntervalMs int64
	// MaxSnapshotBytes bounds one snapshot (read from disk or the network);
	// a larger one is not taken (default 128 MiB).
	MaxSnapshotBytes int
	// MaxProposalBytes bounds the encoded values of one Propose (default 8
	// MiB, KRaft's maximum batch size).
	MaxProposalBytes int
	// SegmentBytes is metadata.log.segment.bytes (default 1 GiB).
	SegmentBytes int64
	// SendQueueMessages bounds each peer's outbound queue; a message that
	// does not fit is dropped and the peer reported unreachable (default
	// 4096).
	SendQueueMessages int
	// RequestTimeoutMs is controller.quorum.request.timeout.ms: bounds a dial
	// and a write to a peer, and how long what was written may stay
	// unacknowledged by the peer's TCP before the connection is given up and
	// redialed (default 2000).
	RequestTimeoutMs int
	// RetryBackoffMs is controller.quorum.retry.backoff.ms: the first wait
	// before redialing a peer after a failed dial, counted from when that
	// dial began; it doubles up to RetryBackoffMaxMs (defaults 20 and 1000,
	// Kafka's reconnect.backoff.max.ms).
	RetryBackoffMs, RetryBackoffMaxMs int

	// Logger receives the quorum's messages (slog.Default when nil).
	Logger *slog.Logger
}

// Defaults, with Kafka's values where Kafka has the setting.
const (
	DefaultTickMs                = 100
	DefaultElectionTicks         = 10
	DefaultHeartbeatTicks        = 1
	DefaultSnapshotIntervalBytes = 20 << 20
	DefaultSnapshotIntervalMs    = 60 * 60 * 1000
	DefaultMaxSnapshotBytes      = 128 << 20
	DefaultMaxProposalBytes      = 8 << 20
	DefaultSegmentBytes          = 1 << 30
	DefaultSendQueueMessages     = 4096
	DefaultRequestTimeoutMs      = 2000
	DefaultRetryBackoffMs        = 20
	DefaultRetryBackoffMaxMs     = 1000

	DefaultListenerName = "CONTROLLER"

	// MetadataPartitionDir is the log directory of the metadata partition.
	MetadataPartitionDir = "__cluster_metadata-0"
)

// Limits that are not configuration.
const (
	// maxReceiveQueueMessages bounds messages received but not yet stepped
	// into raft; more are dropped (raft retries).
	maxReceiveQueueMessages = 4096
	// maxPendingProposals bounds proposals waiting to enter the raft loop.
	maxPendingProposals = 1024
	// maxEventsPerReady bounds the inputs handled before one Ready, so one
	// fsync covers many proposals without starving ticks.
	maxEventsPerReady = 256
	// maxMessageEntriesBytes is raft's MaxSizePerMsg: entries per append.
	maxMessageEntriesBytes = 1 << 20
	// maxInflightMessages is raft's MaxInflightMsgs per follower.
	maxInflightMessages = 256
	// frameOverheadBytes is room for a message's fields around its entries or
	// snapshot data.
	frameOverheadBytes = 64 << 10
	// maxQuorumStateBytes bounds the quorum-state file.
	maxQuorumStateBytes = 64 << 10
	// maxInboundConnections bounds accepted connections per voter.
	maxInboundConnectionsPerVoter = 4
)

// withDefaults returns c with defaults filled in, or an error when c cannot
// work.
func (c Config) withDefaults() (Config, error) {
	if c.NodeID <= 0 {
		return c, fmt.Errorf("%w: node id %d must be positive", ErrConfig, c.NodeID)
	}
	if len(c.Voters) > 0 {
		if err := validateVoters(c.Voters); err != nil {
			return c, err
		}
		if !slices.ContainsFunc(c.Voters, func(v Voter) bool { return v.ID == c.NodeID }) {
			return c, fmt.Errorf("%w: node %d is not one of controller.quorum.voters", ErrConfig, c.NodeID)
		}
	}
	if c.ListenerName == "" {
		c.ListenerName = DefaultListenerName
	}
	if c.Dir == "" {
		return c, fmt.Errorf("%w: no metadata log dir", ErrConfig)
	}
	if c.Listener == nil && c.ListenAddr == "" {
		return c, fmt.Errorf("%w: no listen address", ErrConfig)
	}
	if c.FS == nil {
		c.FS = vfs.Default
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	setDefault(&c.TickMs, DefaultTickMs)
	setDefault(&c.ElectionTicks, DefaultElectionTicks)
	setDefault(&c.HeartbeatTicks, DefaultHeartbeatTicks)
	if c.HeartbeatTicks >= c.ElectionTicks {
		return c, fmt.Errorf("%w: heartbeat ticks %d must be below election ticks %d", ErrConfig, c.HeartbeatTicks, c.ElectionTicks)
	}
	setDefault(&c.SnapshotIntervalBytes, DefaultSnapshotIntervalBytes)
	if c.SnapshotIntervalMs == 0 {
		c.SnapshotIntervalMs = DefaultSnapshotIntervalMs
	}
	setDefault(&c.MaxSnapshotBytes, DefaultMaxSnapshotBytes)
	setDefault(&c.MaxProposalBytes, DefaultMaxProposalBytes)
	setDefault(&c.SegmentBytes, DefaultSegmentBytes)
	// One entry batch must fit a segment.
	c.SegmentBytes = max(c.SegmentBytes, int64(c.MaxProposalBytes)+frameOverheadBytes)
	setDefault(&c.SendQueueMessages, DefaultSendQueueMessages)
	setDefault(&c.RequestTimeoutMs, DefaultRequestTimeoutMs)
	setDefault(&c.RetryBackoffMs, DefaultRetryBackoffMs)
	setDefault(&c.RetryBackoffMaxMs, DefaultRetryBackoffMaxMs)
	c.RetryBackoffMaxMs = max(c.RetryBackoffMaxMs, c.RetryBackoffMs)
	return c, nil
}

func setDefault[T int | int64](field *T, value T) {
	if *field <= 0 {
		*field = value
	}
}

// maxFrameBytes is the largest message the transport carries: a whole
// snapshot or a full append, whichever is larger.
func (c Config) maxFrameBytes() int {
	return max(c.MaxSnapshotBytes, c.MaxProposalBytes+maxMessageEntriesBytes) + frameOverheadBytes
}

// voterIDs returns the voter ids in ascending order.
func (c Config) voterIDs() []uint64 {
	ids := make([]uint64, len(c.Voters))
	for i, v := range c.Voters {
		ids[i] = uint64(v.ID)
	}
	slices.Sort(ids)
	return ids
}
