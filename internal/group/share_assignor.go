package group

import (
	"bytes"
	"slices"
)

// sharePartition is one topic-partition a share group may be assigned.
type sharePartition struct {
	topic     [16]byte
	partition int32
}

// simpleAssign is Kafka's simple assignor for share groups
// (SimpleAssignor), for members given in sorted order: every partition of
// a subscribed topic goes to at least one subscriber, and, when the
// members outnumber the partitions, to several, each partition to at most
// ceil(members / partitions) of them; the number of partitions per member
// differs by at most one, and a member keeps what it had where balance
// allows. When the members subscribe to different topic sets each topic
// is spread over its own subscribers.
func simpleAssign(members []string, subscriptions map[string][]string, previous map[string]assignment, info func(string) (topicInfo, bool)) map[string]assignment {
	out := make(map[string]assignment, len(members))
	homogeneous := true
	for _, m := range members[min(1, len(members)):] {
		if !slices.Equal(subscriptions[m], subscriptions[members[0]]) {
			homogeneous = false
			break
		}
	}
	partitionsOf := func(topics []string) []sharePartition {
		var ps []sharePartition
		for _, t := range topics {
			ti, ok := info(t)
			if !ok {
				continue
			}
			for p := range ti.partitions {
				ps = append(ps, sharePartition{ti.id, p})
			}
		}
		slices.SortFunc(ps, func(a, b sharePartition) int {
			if c := bytes.Compare(a.topic[:], b.topic[:]); c != 0 {
				return c
			}
			return int(a.partition - b.partition)
		})
		return ps
	}
	result := make(map[string]map[[16]byte][]int32, len(members))
	if homogeneous && len(members) > 0 {
		spread(members, partitionsOf(subscriptions[members[0]]), previous, result)
	} else {
		var topics []string
		for _, m := range members {
			topics = append(topics, subscriptions[m]...)
		}
		slices.Sort(topics)
		for _, t := range slices.Compact(topics) {
			var subscribers []string
			for _, m := range members {
				if slices.Contains(subscriptions[m], t) {
					subscribers = append(subscribers, m)
				}
			}
			spread(subscribers, partitionsOf([]string{t}), previous, result)
		}
	}
	for _, m := range members {
		out[m] = newAssignment(result[m])
	}
	return out
}

// spread assigns partitions over members as simpleAssign describes,
// adding to result.
func spread(members []string, partitions []sharePartition, previous map[string]assignment, result map[string]map[[16]byte][]int32) {
	numMembers, numPartitions := len(members), len(partitions)
	if numMembers == 0 || numPartitions == 0 {
		return
	}
	sharing := (numMembers + numPartitions - 1) / numPartitions
	// quota[i] is member i's share of the sharing*numPartitions slots;
	// quotas differ by at most one and add up to all the slots.
	quota := make([]int, numMembers)
	slots := sharing * numPartitions
	for i := range quota {
		quota[i] = ceilDiv(slots*(i+1), numMembers) - ceilDiv(slots*i, numMembers)
	}
	holders := make(map[sharePartition][]int, numPartitions)
	count := make([]int, numMembers)
	give := func(i int, p sharePartition) {
		holders[p] = append(holders[p], i)
		count[i]++
	}
	has := func(i int, p sharePartition) bool { return slices.Contains(holders[p], i) }
	// Keep what members had, within quota and sharing.
	for i, m := range members {
		for _, p := range partitions {
			if count[i] < quota[i] && len(holders[p]) < sharing && previous[m].contains(p.topic, p.partition) {
				give(i, p)
			}
		}
	}
	// Fill every partition's remaining slots with the least loaded
	// member under quota that does not hold it yet.
	for _, p := range partitions {
		for len(holders[p]) < sharing {
			best := -1
			for i := range members {
				if has(i, p) || count[i] >= quota[i] {
					continue
				}
				if best < 0 || count[i] < count[best] {
					best = i
				}
			}
			if best < 0 {
				break
			}
			give(best, p)
		}
		if len(holders[p]) == 0 {
			// Quotas are spent by kept partitions: the least loaded
			// member takes it, so no partition goes unconsumed.
			best := 0
			for i := range members {
				if count[i] < count[best] {
					best = i
				}
			}
			give(best, p)
		}
	}
	for p, hs := range holders {
		for _, i := range hs {
			m := members[i]
			if result[m] == nil {
				result[m] = make(map[[16]byte][]int32)
			}
			result[m][p.topic] = append(result[m][p.topic], p.partition)
		}
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
