package group

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
)

var (
	topicA = [16]byte{'a'}
	topicB = [16]byte{'b'}
	topicC = [16]byte{'c'}
)

func specOf(topics map[[16]byte]int32, members ...assignmentMember) assignmentSpec {
	slices.SortFunc(members, func(x, y assignmentMember) int { return cmp.Compare(x.id, y.id) })
	return assignmentSpec{members: members, topics: topics}
}

func subscribedTo(id string, current assignment, topics ...[16]byte) assignmentMember {
	t := slices.Clone(topics)
	sortTopicIDs(t)
	return assignmentMember{id: id, subscribed: t, current: current}
}

// checkComplete fails unless every partition of every topic with a
// subscriber is assigned exactly once, to a subscriber.
func checkComplete(t *testing.T, spec assignmentSpec, got map[string]assignment) {
	t.Helper()
	seen := make(map[partitionKey]string)
	for _, m := range spec.members {
		for topic, ps := range got[m.id] {
			if !slices.Contains(m.subscribed, topic) {
				t.Fatalf("%s got topic %x it does not subscribe to", m.id, topic)
			}
			for _, p := range ps {
				k := partitionKey{topic, p}
				if owner, dup := seen[k]; dup {
					t.Fatalf("partition %x-%d given to %s and %s", topic, p, owner, m.id)
				}
				seen[k] = m.id
			}
		}
	}
	for topic, subs := range spec.subscribers() {
		if len(subs) == 0 {
			continue
		}
		for p := range spec.topics[topic] {
			if _, ok := seen[partitionKey{topic, p}]; !ok {
				t.Fatalf("partition %x-%d unassigned", topic, p)
			}
		}
	}
}

func counts(spec assignmentSpec, got map[string]assignment) []int {
	var out []int
	for _, m := range spec.members {
		out = append(out, got[m.id].numPartitions())
	}
	return out
}

func TestUniformAssignorBalancesAndSticks(t *testing.T) {
	topics := map[[16]byte]int32{topicA: 7, topicB: 3}
	spec := specOf(topics,
		subscribedTo("m1", nil, topicA, topicB),
		subscribedTo("m2", nil, topicA, topicB),
		subscribedTo("m3", nil, topicA, topicB))
	first := uniformAssignor{}.assign(spec)
	checkComplete(t, spec, first)
	if c := counts(spec, first); slices.Max(c)-slices.Min(c) > 1 {
		t.Fatalf("unbalanced %v", c)
	}
	// A fourth member takes partitions only from the others' excess; the
	// others keep the rest.
	members := make([]assignmentMember, 0, 4)
	for _, m := range spec.members {
		members = append(members, subscribedTo(m.id, first[m.id], topicA, topicB))
	}
	spec2 := specOf(topics, append(members, subscribedTo("m4", nil, topicA, topicB))...)
	second := uniformAssignor{}.assign(spec2)
	checkComplete(t, spec2, second)
	if c := counts(spec2, second); slices.Max(c)-slices.Min(c) > 1 {
		t.Fatalf("unbalanced %v", c)
	}
	moved := 0
	for _, m := range spec.members {
		for topic, ps := range first[m.id] {
			for _, p := range ps {
				if !second[m.id].contains(topic, p) {
					moved++
				}
			}
		}
	}
	if moved != second["m4"].numPartitions() {
		t.Fatalf("%d partitions moved, but m4 only got %d", moved, second["m4"].numPartitions())
	}
}

func TestUniformAssignorHeterogeneous(t *testing.T) {
	topics := map[[16]byte]int32{topicA: 6, topicB: 2, topicC: 4}
	spec := specOf(topics,
		subscribedTo("m1", nil, topicA),
		subscribedTo("m2", nil, topicA, topicB),
		subscribedTo("m3", nil, topicB, topicC))
	got := uniformAssignor{}.assign(spec)
	checkComplete(t, spec, got)
	// 12 partitions over 3 members: 4 each is reachable.
	if c := counts(spec, got); !slices.Equal(c, []int{4, 4, 4}) {
		t.Fatalf("counts %v: %v", c, got)
	}
	// Stickiness: running again from the result moves nothing.
	members := make([]assignmentMember, 0, 3)
	for _, m := range spec.members {
		members = append(members, subscribedTo(m.id, got[m.id], m.subscribed...))
	}
	again := uniformAssignor{}.assign(specOf(topics, members...))
	for id, a := range got {
		if !again[id].equal(a) {
			t.Fatalf("%s moved from %v to %v", id, a, again[id])
		}
	}
}

func TestUniformAssignorDropsUnsubscribedAndMissing(t *testing.T) {
	topics := map[[16]byte]int32{topicA: 2}
	spec := specOf(topics,
		subscribedTo("m1", assignment{topicA: {0, 1, 5}, topicB: {0}}, topicA))
	got := uniformAssignor{}.assign(spec)
	if !got["m1"].equal(assignment{topicA: {0, 1}}) {
		t.Fatalf("%v", got["m1"])
	}
}

func TestRangeAssignorCoPartitionsAndSticks(t *testing.T) {
	topics := map[[16]byte]int32{topicA: 5, topicB: 5}
	spec := specOf(topics,
		subscribedTo("m1", nil, topicA, topicB),
		subscribedTo("m2", nil, topicA, topicB))
	got := rangeAssignor{}.assign(spec)
	checkComplete(t, spec, got)
	if !got["m1"].equal(assignment{topicA: {0, 1, 2}, topicB: {0, 1, 2}}) || !got["m2"].equal(assignment{topicA: {3, 4}, topicB: {3, 4}}) {
		t.Fatalf("%v", got)
	}
	// A third member: quotas 2,2,1 per topic; m1 and m2 keep their lowest.
	spec2 := specOf(topics,
		subscribedTo("m1", got["m1"], topicA, topicB),
		subscribedTo("m2", got["m2"], topicA, topicB),
		subscribedTo("m3", nil, topicA, topicB))
	got2 := rangeAssignor{}.assign(spec2)
	checkComplete(t, spec2, got2)
	for _, id := range []string{"m1", "m2", "m3"} {
		if !slices.Equal(got2[id][topicA], got2[id][topicB]) {
			t.Fatalf("%s not co-partitioned: %v", id, got2[id])
		}
	}
	if !slices.Equal(got2["m1"][topicA], []int32{0, 1}) || !slices.Equal(got2["m2"][topicA], []int32{3, 4}) {
		t.Fatalf("not sticky: %v", got2)
	}
}

func TestAssignorsScale(t *testing.T) {
	topics := map[[16]byte]int32{}
	var ids [][16]byte
	for i := range 20 {
		id := [16]byte{byte(i), 1}
		topics[id] = 50
		ids = append(ids, id)
	}
	var members []assignmentMember
	for i := range 100 {
		members = append(members, subscribedTo(fmt.Sprintf("m%03d", i), nil, ids[:10+i%10]...))
	}
	spec := specOf(topics, members...)
	for _, a := range []partitionAssignor{uniformAssignor{}, rangeAssignor{}} {
		got := a.assign(spec)
		checkComplete(t, spec, got)
	}
}

// BenchmarkUniformAssignor assigns 1000 partitions over 100 members from
// scratch, the worst case of a group's first assignment.
func BenchmarkUniformAssignor(b *testing.B) {
	topics := map[[16]byte]int32{}
	var ids [][16]byte
	for i := range 10 {
		id := [16]byte{byte(i), 2}
		topics[id] = 100
		ids = append(ids, id)
	}
	var members []assignmentMember
	for i := range 100 {
		members = append(members, subscribedTo(fmt.Sprintf("m%03d", i), nil, ids...))
	}
	spec := specOf(topics, members...)
	for b.Loop() {
		uniformAssignor{}.assign(spec)
	}
}
