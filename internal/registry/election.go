package registry

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The writer election, Confluent's own: every registry joins the group
// schema-registry with protocol type "sr", its member metadata naming its
// URL; the group leader picks the writer among the eligible members and
// tells every member in its assignment. Writes received by another node
// are forwarded to the writer's URL.
//
//	member metadata  {"version":1,"host":H,"port":P,"scheme":"http","master_eligibility":true}
//	assignment       {"version":1,"error":0,"master":MEMBER_ID,
//	                  "master_identity":{"version":1,"host":H,"port":P,"scheme":"http","master_eligibility":true}}
const (
	electionGroup           = "schema-registry"
	electionProtocolType    = "sr"
	electionProtocol        = "v0"
	electionSessionMs       = 10000
	electionRebalanceMs     = 10000
	electionHeartbeatMs     = 1000
	electionBackoffMaxMs    = 2000
	assignmentErrorNone     = 0
	assignmentErrorNoWriter = 1
)

// identity is a registry's address in the election.
type identity struct {
	Version           int    `json:"version"`
	Host              string `json:"host"`
	Port              int    `json:"port"`
	Scheme            string `json:"scheme"`
	MasterEligibility bool   `json:"master_eligibility"`
}

func (i identity) url() string {
	return i.Scheme + "://" + net.JoinHostPort(i.Host, strconv.Itoa(i.Port))
}

type assignment struct {
	Version        int       `json:"version"`
	Error          int       `json:"error"`
	Master         string    `json:"master"`
	MasterIdentity *identity `json:"master_identity"`
}

// election runs the membership loop and publishes who the writer is.
type election struct {
	client *kgo.Client
	self   identity
	// instanceID makes the membership static, so a node restarted after a
	// crash takes its own place back at once instead of the group waiting
	// for the old member's session to expire.
	instanceID string
	logger     *slog.Logger

	mu struct {
		sync.Mutex
		// writerURL is the elected writer's URL, "" while unknown.
		writerURL string
		isWriter  bool
	}
}

// writer reports the current writer's URL and whether it is this node.
func (e *election) writer() (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.mu.writerURL, e.mu.isWriter
}

func (e *election) set(url string, isWriter bool) {
	e.mu.Lock()
	e.mu.writerURL, e.mu.isWriter = url, isWriter
	e.mu.Unlock()
}

func (e *election) run(ctx context.Context) {
	memberID := ""
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		var err error
		memberID, err = e.round(ctx, memberID)
		if ctx.Err() != nil {
			break
		}
		e.logger.Debug("schema registry writer election: rejoining", "err", err)
		if errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.FencedInstanceID) {
			memberID = ""
		}
		if !errors.Is(err, kerr.RebalanceInProgress) {
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, electionBackoffMaxMs*time.Millisecond)
		}
	}
	e.set("", false)
	if memberID != "" {
		leave := kmsg.NewPtrLeaveGroupRequest()
		leave.Group = electionGroup
		leave.MemberID = memberID
		member := kmsg.NewLeaveGroupRequestMember()
		member.MemberID = memberID
		member.InstanceID = &e.instanceID
		leave.Members = []kmsg.LeaveGroupRequestMember{member}
		leaveCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, _ = leave.RequestWith(leaveCtx, e.client)
		cancel()
	}
}

// round joins, syncs and heartbeats until the group rebalances or fails,
// returning the member id to rejoin with. The writer stays known while
// the group rebalances, as Confluent's followers keep forwarding to it.
func (e *election) round(ctx context.Context, memberID string) (string, error) {
	metadata, _ := json.Marshal(e.self)
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group = electionGroup
	join.SessionTimeoutMillis = electionSessionMs
	join.RebalanceTimeoutMillis = electionRebalanceMs
	join.ProtocolType = electionProtocolType
	join.InstanceID = &e.instanceID
	protocol := kmsg.NewJoinGroupRequestProtocol()
	protocol.Name = electionProtocol
	protocol.Metadata = metadata
	join.Protocols = []kmsg.JoinGroupRequestProtocol{protocol}
	var joined *kmsg.JoinGroupResponse
	for attempt := 0; attempt < 2; attempt++ {
		join.MemberID = memberID
		response, err := join.RequestWith(ctx, e.client)
		if err != nil {
			return memberID, err
		}
		err = kerr.ErrorForCode(response.ErrorCode)
		if errors.Is(err, kerr.MemberIDRequired) {
			memberID = response.MemberID
			continue
		}
		if err != nil {
			return memberID, err
		}
		joined = response
		break
	}
	if joined == nil {
		return memberID, kerr.MemberIDRequired
	}
	memberID = joined.MemberID

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group = electionGroup
	sync.Generation = joined.Generation
	sync.MemberID = memberID
	sync.InstanceID = &e.instanceID
	protocolType, protocolName := electionProtocolType, electionProtocol
	sync.ProtocolType, sync.Protocol = &protocolType, &protocolName
	if joined.LeaderID == memberID {
		sync.GroupAssignment = assign(joined.Members)
	}
	synced, err := sync.RequestWith(ctx, e.client)
	if err != nil {
		return memberID, err
	}
	if err := kerr.ErrorForCode(synced.ErrorCode); err != nil {
		return memberID, err
	}
	var got assignment
	if err := json.Unmarshal(synced.MemberAssignment, &got); err != nil || got.Error != assignmentErrorNone || got.MasterIdentity == nil {
		e.set("", false)
		return memberID, errors.New("registry: no eligible writer in the election")
	}
	e.set(got.MasterIdentity.url(), got.Master == memberID)
	e.logger.Info("schema registry writer elected", "writer", got.MasterIdentity.url(), "this_node", got.Master == memberID, "generation", joined.Generation)

	for {
		select {
		case <-ctx.Done():
			return memberID, ctx.Err()
		case <-time.After(electionHeartbeatMs * time.Millisecond):
		}
		heartbeat := kmsg.NewPtrHeartbeatRequest()
		heartbeat.Group = electionGroup
		heartbeat.Generation = joined.Generation
		heartbeat.MemberID = memberID
		heartbeat.InstanceID = &e.instanceID
		response, err := heartbeat.RequestWith(ctx, e.client)
		if err != nil {
			return memberID, err
		}
		if err := kerr.ErrorForCode(response.ErrorCode); err != nil {
			return memberID, err
		}
	}
}

// assign picks the writer: the eligible member with the smallest member
// id, a deterministic choice every leader makes the same way.
func assign(members []kmsg.JoinGroupResponseMember) []kmsg.SyncGroupRequestGroupAssignment {
	result := assignment{Version: 1, Error: assignmentErrorNoWriter}
	var eligible []string
	identities := map[string]identity{}
	for _, member := range members {
		var id identity
		if json.Unmarshal(member.ProtocolMetadata, &id) == nil && id.MasterEligibility {
			eligible = append(eligible, member.MemberID)
			identities[member.MemberID] = id
		}
	}
	if len(eligible) > 0 {
		slices.Sort(eligible)
		writer := identities[eligible[0]]
		result = assignment{Version: 1, Error: assignmentErrorNone, Master: eligible[0], MasterIdentity: &writer}
	}
	encoded, _ := json.Marshal(result)
	out := make([]kmsg.SyncGroupRequestGroupAssignment, len(members))
	for i, member := range members {
		out[i] = kmsg.NewSyncGroupRequestGroupAssignment()
		out[i].MemberID = member.MemberID
		out[i].MemberAssignment = encoded
	}
	return out
}
