package group

import (
	"bytes"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// protocol is one assignor a member supports, with its metadata for it (for
// the consumer protocol: the serialized subscription).
type protocol struct {
	name     string
	metadata []byte
}

func protocolsFromRequest(in []kmsg.JoinGroupRequestProtocol) []protocol {
	out := make([]protocol, len(in))
	for i, p := range in {
		out[i] = protocol{name: p.Name, metadata: p.Metadata}
	}
	return out
}

// joinWaiter is a parked JoinGroup: the response is sent when the join phase
// completes (or the member is removed, fenced or the group unloaded).
type joinWaiter struct {
	version int16
	respond func(*kmsg.JoinGroupResponse)
}

// syncWaiter is a parked SyncGroup of a member waiting for the leader's
// assignment.
type syncWaiter struct {
	version int16
	respond func(*kmsg.SyncGroupResponse)
}

// member is one member of a classic group (Kafka's ClassicGroupMember).
type member struct {
	id string
	// instanceID is the group.instance.id of a static member (KIP-345).
	instanceID *string
	clientID   string
	clientHost string

	rebalanceTimeoutMs int32
	sessionTimeoutMs   int32
	protocolType       string
	// protocols are the member's supported protocols in preference order.
	protocols  []protocol
	assignment []byte

	// joinWaiter is set while the member's JoinGroup is parked.
	joinWaiter *joinWaiter
	// syncWaiter is set while the member's SyncGroup is parked.
	syncWaiter *syncWaiter
	// isNew marks a member that joined in the current rebalance and has not
	// received its first JoinGroup response; its session is the new member
	// join timeout, and waiting does not keep it alive.
	isNew bool
}

func (m *member) isStatic() bool     { return m.instanceID != nil }
func (m *member) awaitingJoin() bool { return m.joinWaiter != nil }
func (m *member) awaitingSync() bool { return m.syncWaiter != nil }

// hasSatisfiedHeartbeat reports whether an expired session should be
// ignored: a member parked in JoinGroup or SyncGroup is alive by definition,
// unless it is new.
func (m *member) hasSatisfiedHeartbeat() bool {
	if m.isNew {
		return false
	}
	return m.awaitingJoin() || m.awaitingSync()
}

// matches reports whether protocols equal the member's, in order, names
// and metadata alike.
func (m *member) matches(protocols []protocol) bool {
	if len(protocols) != len(m.protocols) {
		return false
	}
	for i := range protocols {
		if protocols[i].name != m.protocols[i].name || !bytes.Equal(protocols[i].metadata, m.protocols[i].metadata) {
			return false
		}
	}
	return true
}

// vote returns the member's most preferred protocol among candidates.
func (m *member) vote(candidates map[string]bool) string {
	for _, p := range m.protocols {
		if candidates[p.name] {
			return p.name
		}
	}
	return ""
}

// metadata returns the member's metadata for the named protocol.
func (m *member) metadata(protocolName string) []byte {
	for _, p := range m.protocols {
		if p.name == protocolName {
			return p.metadata
		}
	}
	return nil
}

func (m *member) describe(protocolName string, withMetadata bool) kmsg.DescribeGroupsResponseGroupMember {
	d := kmsg.NewDescribeGroupsResponseGroupMember()
	d.MemberID = m.id
	d.InstanceID = m.instanceID
	d.ClientID = m.clientID
	d.ClientHost = m.clientHost
	d.MemberAssignment = nonNilBytes(m.assignment)
	d.ProtocolMetadata = []byte{}
	if withMetadata {
		d.ProtocolMetadata = nonNilBytes(m.metadata(protocolName))
	}
	return d
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func stringPtr(s string) *string { return &s }

func optionalString(s string, ok bool) *string {
	if !ok {
		return nil
	}
	return &s
}
