package group

// uniformAssignor is Kafka's default server-side assignor ("uniform"): it
// spreads partitions so that the members' partition counts differ by at
// most one where their subscriptions allow it, and moves as few partitions
// from their current owner as that takes (sticky).
//
// When every member subscribes to the same topics each member's quota is
// known up front: P/M partitions, one more for P%M of them. Members keep
// their current partitions up to their quota, and the rest go round-robin
// to the members still short of theirs. With differing subscriptions,
// members keep what they still subscribe to, unowned partitions go to the
// least loaded subscriber, and partitions then move from a member to a
// subscriber with at least two fewer until no such move is left; each move
// lowers the sum of squared counts, so this ends.
type uniformAssignor struct{}

func (uniformAssignor) assign(spec assignmentSpec) map[string]assignment {
	if len(spec.members) == 0 {
		return map[string]assignment{}
	}
	if spec.homogeneous() {
		return assignUniformHomogeneous(spec)
	}
	return assignUniformHeterogeneous(spec)
}

func assignUniformHomogeneous(spec assignmentSpec) map[string]assignment {
	topics := spec.members[0].subscribed
	total := 0
	for _, t := range topics {
		total += int(spec.topics[t])
	}
	numMembers := len(spec.members)
	minQuota, extra := total/numMembers, total%numMembers
	b := newAssignmentBuilder(numMembers)
	quota := make([]int, numMembers)
	for i, m := range spec.members {
		kept := retainable(m, spec.topics)
		keep := min(len(kept), minQuota)
		quota[i] = minQuota
		if len(kept) > minQuota && extra > 0 {
			keep, quota[i] = minQuota+1, minQuota+1
			extra--
		}
		for _, k := range kept[:keep] {
			if !b.owned(k) {
				b.give(k, i)
			}
		}
	}
	// Members short of their quota take the unowned partitions in turn;
	// the extra partitions left go to the first members at the minimum.
	for i := range quota {
		if quota[i] == minQuota && extra > 0 && b.counts[i] <= minQuota {
			quota[i]++
			extra--
		}
	}
	next := 0
	for _, t := range topics {
		for p := range spec.topics[t] {
			k := partitionKey{t, p}
			if b.owned(k) {
				continue
			}
			for range numMembers {
				i := next
				next = (next + 1) % numMembers
				if b.counts[i] < quota[i] {
					b.give(k, i)
					break
				}
			}
		}
	}
	return b.result(spec)
}

func assignUniformHeterogeneous(spec assignmentSpec) map[string]assignment {
	b := newAssignmentBuilder(len(spec.members))
	for i, m := range spec.members {
		for _, k := range retainable(m, spec.topics) {
			if !b.owned(k) {
				b.give(k, i)
			}
		}
	}
	subscribers := spec.subscribers()
	// Topics with the fewest subscribers first: their partitions have the
	// fewest places to go.
	order := make([][16]byte, 0, len(subscribers))
	for t := range subscribers {
		order = append(order, t)
	}
	sortTopicIDs(order)
	slicesSortStableByLen(order, subscribers)
	leastLoaded := func(candidates []int) int {
		best := candidates[0]
		for _, i := range candidates[1:] {
			if b.counts[i] < b.counts[best] {
				best = i
			}
		}
		return best
	}
	for _, t := range order {
		for p := range spec.topics[t] {
			if k := (partitionKey{t, p}); !b.owned(k) {
				b.give(k, leastLoaded(subscribers[t]))
			}
		}
	}
	for moved := true; moved; {
		moved = false
		for _, t := range order {
			for p := spec.topics[t] - 1; p >= 0; p-- {
				k := partitionKey{t, p}
				from := b.owner[k]
				to := leastLoaded(subscribers[t])
				if b.counts[from] > b.counts[to]+1 {
					b.give(k, to)
					moved = true
				}
			}
		}
	}
	return b.result(spec)
}

// slicesSortStableByLen orders topics by their number of subscribers,
// keeping the given order among equals.
func slicesSortStableByLen(topics [][16]byte, subscribers map[[16]byte][]int) {
	for i := 1; i < len(topics); i++ {
		for j := i; j > 0 && len(subscribers[topics[j]]) < len(subscribers[topics[j-1]]); j-- {
			topics[j], topics[j-1] = topics[j-1], topics[j]
		}
	}
}
