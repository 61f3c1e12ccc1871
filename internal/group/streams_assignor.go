package group

import (
	"maps"
	"slices"
	"strings"
)

// The sticky task assignor of streams groups (Kafka's StickyTaskAssignor,
// the "sticky" of group.streams.assignors). It is pure and deterministic:
// the same spec gives the same assignment, whatever the map order.
//
// Active tasks first, each member taking at most ceil(tasks / members):
//
//  1. a task stays with the member that had it active, if that member is
//     not full yet;
//  2. else it goes to a member that had it as a standby or warm-up task
//     (its state is there), the least loaded first;
//  3. else to the least loaded member, ties broken by the fewest active
//     tasks on its process, then by member id.
//
// Then, for every task of a stateful subtopology, up to numStandbys standby
// tasks, each on a process that has no copy of the task yet: the member
// that had it as a standby first, else the least loaded member of such a
// process. A task without enough other processes gets fewer standbys, as
// in Kafka. No warm-up tasks are assigned: a task moves to its new owner
// at once and restores its state there (KIP-1071's warm-ups need the
// task lag probing rebalances Samsa does not run).
const streamsAssignorSticky = "sticky"

type streamsAssignmentSpec struct {
	// members is sorted by id.
	members []streamsAssignee
	// numTasks holds each subtopology's task count.
	numTasks map[string]int32
	// stateful marks the subtopologies whose tasks get standbys.
	stateful    map[string]bool
	numStandbys int
}

type streamsAssignee struct {
	id        string
	processID string
	// previous is what the member had: its last target.
	previous streamsTasks
}

func assignStreamsTasks(spec streamsAssignmentSpec) map[string]streamsTasks {
	out := make(map[string]streamsTasks, len(spec.members))
	if len(spec.members) == 0 {
		return out
	}
	var tasks []taskID
	for _, st := range slices.Sorted(maps.Keys(spec.numTasks)) {
		for p := range spec.numTasks[st] {
			tasks = append(tasks, taskID{st, p})
		}
	}
	n := len(spec.members)
	maxActive := (len(tasks) + n - 1) / n
	active := make([][]taskID, n)
	processActive := make(map[string]int)
	index := make(map[string]int, n)
	for i, m := range spec.members {
		index[m.id] = i
	}
	assign := func(i int, t taskID) {
		active[i] = append(active[i], t)
		processActive[spec.members[i].processID]++
	}

	var unassigned []taskID
	for _, t := range tasks {
		owner := -1
		for i, m := range spec.members {
			if m.previous.active.contains(t) {
				owner = i
				break
			}
		}
		if owner >= 0 && len(active[owner]) < maxActive {
			assign(owner, t)
			continue
		}
		unassigned = append(unassigned, t)
	}
	var rest []taskID
	for _, t := range unassigned {
		best := -1
		for i, m := range spec.members {
			if len(active[i]) >= maxActive || (!m.previous.standby.contains(t) && !m.previous.warmup.contains(t)) {
				continue
			}
			if best < 0 || len(active[i]) < len(active[best]) {
				best = i
			}
		}
		if best >= 0 {
			assign(best, t)
			continue
		}
		rest = append(rest, t)
	}
	for _, t := range rest {
		best := 0
		for i := 1; i < n; i++ {
			a, b := spec.members[i], spec.members[best]
			switch {
			case len(active[i]) < len(active[best]):
				best = i
			case len(active[i]) == len(active[best]) && processActive[a.processID] < processActive[b.processID]:
				best = i
			}
		}
		assign(best, t)
	}

	standby := make([][]taskID, n)
	if spec.numStandbys > 0 {
		activeProcess := make(map[taskID]string, len(tasks))
		for i := range spec.members {
			for _, t := range active[i] {
				activeProcess[t] = spec.members[i].processID
			}
		}
		load := func(i int) int { return len(active[i]) + len(standby[i]) }
		for _, t := range tasks {
			if !spec.stateful[t.subtopology] {
				continue
			}
			holders := map[string]bool{activeProcess[t]: true}
			for range spec.numStandbys {
				best := -1
				for i, m := range spec.members {
					if holders[m.processID] {
						continue
					}
					previous := m.previous.standby.contains(t)
					switch {
					case best < 0:
						best = i
					case previous && !spec.members[best].previous.standby.contains(t):
						best = i
					case previous == spec.members[best].previous.standby.contains(t) && load(i) < load(best):
						best = i
					}
				}
				if best < 0 {
					break // every process has a copy
				}
				standby[best] = append(standby[best], t)
				holders[spec.members[best].processID] = true
			}
		}
	}
	for i, m := range spec.members {
		out[m.id] = streamsTasks{active: taskSetOf(active[i]), standby: taskSetOf(standby[i]), warmup: taskSet{}}
	}
	return out
}

// sortAssignees orders members by id, as the spec requires.
func sortAssignees(ms []streamsAssignee) {
	slices.SortFunc(ms, func(a, b streamsAssignee) int { return strings.Compare(a.id, b.id) })
}
