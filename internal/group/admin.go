package group

import (
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeGroup answers one group of DescribeGroups. Versions: v4+ has
// group.instance.id per member; v6+ answers GROUP_ID_NOT_FOUND (with state
// Dead) for a group that does not exist, where older versions answer no
// error and state Dead.
//
// Behavior: member metadata is only sent for a Stable group, the protocol
// then being the chosen one; in other states the protocol is empty.
func (s *shard) describeGroup(version int16, groupID string) kmsg.DescribeGroupsResponseGroup {
	d := kmsg.NewDescribeGroupsResponseGroup()
	d.Group = groupID
	d.Members = []kmsg.DescribeGroupsResponseGroupMember{}
	g := s.classic(groupID)
	if g == nil || g.state == stateDead {
		d.State = stateDead.String()
		if version >= 6 {
			d.ErrorCode = kerr.GroupIDNotFound.Code
			d.ErrorMessage = stringPtr("Group " + groupID + " not found.")
			if g == nil && s.groups[groupID] != nil {
				// A consumer-protocol group (KIP-848), as Kafka words it.
				d.ErrorMessage = stringPtr("Group " + groupID + " is not a classic group.")
			}
		}
		return d
	}
	d.State = g.state.String()
	d.ProtocolType = g.protocolType
	stable := g.state == stateStable
	if stable {
		d.Protocol = g.protocolName
	}
	for _, id := range g.memberOrder {
		d.Members = append(d.Members, g.members[id].describe(g.protocolName, stable))
	}
	return d
}

// listGroups appends the shard's groups that pass the filters: states (v4+)
// and types (v5+), both matched case-insensitively, empty meaning all.
func (s *shard) listGroups(statesFilter, typesFilter []string, into []kmsg.ListGroupsResponseGroup) []kmsg.ListGroupsResponseGroup {
	matches := func(filter []string, value string) bool {
		return len(filter) == 0 || slices.ContainsFunc(filter, func(f string) bool { return strings.EqualFold(f, value) })
	}
	for _, id := range s.sortedGroupIDs() {
		g := s.groups[id]
		if !matches(statesFilter, g.stateName()) || !matches(typesFilter, g.groupType()) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group = id
		lg.ProtocolType = g.protocolTypeName()
		lg.GroupState = g.stateName()
		lg.GroupType = g.groupType()
		into = append(into, lg)
	}
	return into
}

// deleteGroups deletes the empty groups among ids with their offsets and
// hands the per-group results to done (NON_EMPTY_GROUP for groups with
// members, GROUP_ID_NOT_FOUND for unknown ones).
func (s *shard) deleteGroups(now time.Time, ids []string, done func([]kmsg.DeleteGroupsResponseGroup)) {
	defer s.checkInvariants()
	results := make([]kmsg.DeleteGroupsResponseGroup, len(ids))
	var deleting []string
	var records []KV
	for i, id := range ids {
		results[i] = kmsg.NewDeleteGroupsResponseGroup()
		results[i].Group = id
		g := s.groups[id]
		if g == nil {
			results[i].ErrorCode = kerr.GroupIDNotFound.Code
			continue
		}
		if code := g.validateDelete(); code != 0 {
			results[i].ErrorCode = code
			continue
		}
		if slices.Contains(deleting, id) {
			continue
		}
		deleting = append(deleting, id)
		for _, tp := range sortedTopicPartitions(s.offsets[id]) {
			records = append(records, offsetCommitKV(id, tp.topic, tp.partition, nil))
		}
		records = append(records, s.groupTombstoneKVs(id)...)
	}
	send := func() { s.reply(func() { done(results) }) }
	if len(records) == 0 {
		send()
		return
	}
	s.write(records, func(_ time.Time, err error) {
		if err != nil {
			code := appendErrorCode(err)
			for i := range results {
				if slices.Contains(deleting, results[i].Group) {
					results[i].ErrorCode = code
				}
			}
			send()
			return
		}
		for _, id := range deleting {
			s.removeGroup(id)
		}
		send()
	})
}
