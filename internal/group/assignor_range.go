package group

import (
	"cmp"
	"slices"
)

// rangeAssignor is Kafka's server-side "range" assignor: each topic is cut
// into contiguous ranges over the members subscribed to it, so that members
// of co-partitioned topics get the same partition numbers of each (what
// joins need), while keeping what members already have where the quotas
// allow (sticky).
//
// Per topic, with n partitions over m subscribers ordered by instance id
// (or member id when not static): every member's quota is n/m, and n%m of
// them get one more. Members keep their lowest current partitions up to the
// quota, those holding more than that keep one extra while extras are left,
// and the partitions still free are handed out in ascending ranges to the
// members short of their quota, in member order.
type rangeAssignor struct{}

func (rangeAssignor) assign(spec assignmentSpec) map[string]assignment {
	b := newAssignmentBuilder(len(spec.members))
	subscribers := spec.subscribers()
	topics := make([][16]byte, 0, len(subscribers))
	for t := range subscribers {
		topics = append(topics, t)
	}
	sortTopicIDs(topics)
	for _, t := range topics {
		members := slices.Clone(subscribers[t])
		slices.SortStableFunc(members, func(a, b int) int {
			return cmp.Compare(rangeSortKey(spec.members[a]), rangeSortKey(spec.members[b]))
		})
		assignRangeTopic(b, spec, t, members)
	}
	return b.result(spec)
}

func rangeSortKey(m assignmentMember) string {
	if m.instanceID != nil {
		return *m.instanceID
	}
	return m.id
}

func assignRangeTopic(b *assignmentBuilder, spec assignmentSpec, t [16]byte, members []int) {
	n := spec.topics[t]
	minQuota := n / int32(len(members))
	extra := n % int32(len(members))
	type unfilled struct {
		member    int
		remaining int32
	}
	var short []unfilled
	for _, i := range members {
		var current []int32
		for _, p := range spec.members[i].current[t] {
			if p < n && !b.owned(partitionKey{t, p}) {
				current = append(current, p)
			}
		}
		keep := min(int32(len(current)), minQuota)
		remaining := minQuota - int32(len(current))
		if remaining < 0 && extra > 0 {
			keep++
			extra--
		} else {
			short = append(short, unfilled{i, max(remaining, 0)})
		}
		for _, p := range current[:keep] {
			b.give(partitionKey{t, p}, i)
		}
	}
	var free []int32
	for p := range n {
		if !b.owned(partitionKey{t, p}) {
			free = append(free, p)
		}
	}
	for _, u := range short {
		want := u.remaining
		if extra > 0 {
			want++
			extra--
		}
		want = min(want, int32(len(free)))
		for _, p := range free[:want] {
			b.give(partitionKey{t, p}, u.member)
		}
		free = free[want:]
	}
}
