package group

import (
	"bytes"
	"slices"
)

// partitionAssignor computes a consumer group's target assignment on the
// server (Kafka's ConsumerGroupPartitionAssignor). It is a pure function of
// its input: the members, their subscriptions and their current target
// assignment, which it should move as little as it can.
type partitionAssignor interface {
	assign(spec assignmentSpec) map[string]assignment
}

// assignmentSpec is an assignor's input.
type assignmentSpec struct {
	// members are sorted by id.
	members []assignmentMember
	// topics holds the partition count of every topic some member
	// subscribes to that exists.
	topics map[[16]byte]int32
}

type assignmentMember struct {
	id         string
	instanceID *string
	// subscribed lists the existing topics the member subscribes to, in
	// byte order.
	subscribed [][16]byte
	// current is the member's target assignment so far.
	current assignment
}

func assignorByName(name string) partitionAssignor {
	if name == assignorRange {
		return rangeAssignor{}
	}
	return uniformAssignor{}
}

// homogeneous reports whether every member subscribes to the same topics.
func (s assignmentSpec) homogeneous() bool {
	for _, m := range s.members[1:] {
		if !slices.Equal(m.subscribed, s.members[0].subscribed) {
			return false
		}
	}
	return true
}

// subscribers returns, per topic, the indexes of the members subscribed.
func (s assignmentSpec) subscribers() map[[16]byte][]int {
	out := make(map[[16]byte][]int)
	for i, m := range s.members {
		for _, t := range m.subscribed {
			out[t] = append(out[t], i)
		}
	}
	return out
}

func sortTopicIDs(ids [][16]byte) {
	slices.SortFunc(ids, func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
}

// assignmentBuilder accumulates partitions per member index.
type assignmentBuilder struct {
	owner  map[partitionKey]int
	counts []int
}

func newAssignmentBuilder(members int) *assignmentBuilder {
	return &assignmentBuilder{owner: make(map[partitionKey]int), counts: make([]int, members)}
}

func (b *assignmentBuilder) give(k partitionKey, member int) {
	if prev, ok := b.owner[k]; ok {
		b.counts[prev]--
	}
	b.owner[k] = member
	b.counts[member]++
}

func (b *assignmentBuilder) owned(k partitionKey) bool {
	_, ok := b.owner[k]
	return ok
}

func (b *assignmentBuilder) result(spec assignmentSpec) map[string]assignment {
	raw := make([]map[[16]byte][]int32, len(spec.members))
	for k, i := range b.owner {
		if raw[i] == nil {
			raw[i] = make(map[[16]byte][]int32)
		}
		raw[i][k.topic] = append(raw[i][k.topic], k.partition)
	}
	out := make(map[string]assignment, len(spec.members))
	for i, m := range spec.members {
		out[m.id] = newAssignment(raw[i])
	}
	return out
}

// retainable lists a member's current partitions it may keep: of topics it
// still subscribes to, within the topic's partition count, in topic and
// partition order.
func retainable(m assignmentMember, topics map[[16]byte]int32) []partitionKey {
	var out []partitionKey
	for _, t := range m.current.sortedTopics() {
		if _, subscribed := slices.BinarySearchFunc(m.subscribed, t, func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) }); !subscribed {
			continue
		}
		for _, p := range m.current[t] {
			if p < topics[t] {
				out = append(out, partitionKey{t, p})
			}
		}
	}
	return out
}
