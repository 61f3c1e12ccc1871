package api

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/quorum"
)

// Shared by AddRaftVoter (80), RemoveRaftVoter (81) and UpdateRaftVoter
// (82): the quorum decides the change (package quorum, membership.go) and
// its errors become Kafka's codes as KafkaRaftClient answers them.

// raftVoterTimeoutMs bounds RemoveRaftVoter and UpdateRaftVoter, which carry
// no timeout, as Kafka bounds them by its request timeout.
const raftVoterTimeoutMs = 30_000

// raftVoterError maps a quorum membership error to Kafka's code and message.
func raftVoterError(err error) (int16, *string) {
	if err == nil {
		return 0, nil
	}
	msg := err.Error()
	switch {
	case errors.Is(err, quorum.ErrNotLeader), errors.Is(err, quorum.ErrStopped):
		return kerr.NotLeaderForPartition.Code, &msg
	case errors.Is(err, quorum.ErrUnsupportedVersion):
		return kerr.UnsupportedVersion.Code, &msg
	case errors.Is(err, quorum.ErrDuplicateVoter):
		return kerr.DuplicateVoter.Code, &msg
	case errors.Is(err, quorum.ErrVoterNotFound):
		return kerr.VoterNotFound.Code, &msg
	case errors.Is(err, quorum.ErrInvalidChange):
		return kerr.InvalidRequest.Code, &msg
	case errors.Is(err, quorum.ErrChangePending), errors.Is(err, quorum.ErrNotCaughtUp),
		errors.Is(err, quorum.ErrCommitUnknown), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return kerr.RequestTimedOut.Code, &msg
	}
	return kerr.UnknownServerError.Code, &msg
}

// raftVoterPrecheck answers what every voter request answers before the
// quorum looks at it: a cluster id that is not this cluster's, and a node
// that is no voter of the quorum. It returns 0 to go on.
func (b *Broker) raftVoterPrecheck(clusterID *string) (int16, *string) {
	if clusterID != nil && *clusterID != "" && *clusterID != b.Image().ClusterID {
		msg := "The cluster id " + *clusterID + " is not this cluster's " + b.Image().ClusterID
		return kerr.InconsistentClusterID.Code, &msg
	}
	if b.Quorum == nil {
		msg := "This node is not a controller."
		return kerr.NotLeaderForPartition.Code, &msg
	}
	if id, _ := b.Quorum.Leader(); id != b.NodeID {
		msg := "This controller is not the quorum leader."
		return kerr.NotLeaderForPartition.Code, &msg
	}
	return 0, nil
}

// raftVoterContext bounds a voter change by timeoutMs (raftVoterTimeoutMs
// when not positive).
func raftVoterContext(timeoutMs int32) (context.Context, context.CancelFunc) {
	if timeoutMs <= 0 {
		timeoutMs = raftVoterTimeoutMs
	}
	return context.WithTimeout(context.Background(), time.Duration(timeoutMs)*time.Millisecond)
}

// voterEndpoints turns request listeners into quorum endpoints; ok is false
// when one is malformed.
func voterEndpoints[L any](listeners []L, get func(L) (string, string, uint16)) ([]quorum.Endpoint, bool) {
	var out []quorum.Endpoint
	for _, l := range listeners {
		name, host, port := get(l)
		if name == "" || host == "" || port == 0 {
			return nil, false
		}
		out = append(out, quorum.Endpoint{Name: name, Host: host, Port: port})
	}
	return out, true
}
