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
// Active tasks first, stateful and stateless tasks balanced apart, each
// member taking at most ceil(tasks / members) of each class:
//
//  1. a task stays with the member that had it active, if that member is
//     not full yet;
//  2. else it goes to a member that had it as a standby or warm-up task
//     (its state is there), the least loaded first;
//  3. else to the member with the fewest tasks of the class, ties broken
//     by the fewest active tasks, then the fewest on its process, then by
//     member id.
//
// A stateful task that would move from a process whose state is caught up
// to one whose is not (its changelog lag above acceptable.recovery.lag)
// stays where it is, and the new owner gets it as a warm-up task to
// restore its state meanwhile, up to numWarmups warm-ups in the group;
// once a warm-up has caught up the group rebalances and the task moves
// (streams_heartbeat.go). Beyond the warm-up budget the task stays put.
//
// Then, for every task of a stateful subtopology, up to numStandbys standby
// tasks, each on a process that has no copy of the task yet (active,
// warm-up or standby): the member that had it as a standby first, else the
// least loaded member of such a process. A task without enough other
// processes gets fewer standbys, as in Kafka.
const streamsAssignorSticky = "sticky"

type streamsAssignmentSpec struct {
	// members is sorted by id.
	members []streamsAssignee
	// numTasks holds each subtopology's task count.
	numTasks map[string]int32
	// stateful marks the subtopologies whose tasks get standbys.
	stateful    map[string]bool
	numStandbys int
	numWarmups  int
	// caughtUp reports whether a process's state of a task is caught up;
	// nil counts every process as caught up (no warm-ups).
	caughtUp func(process string, t taskID) bool
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
	var stateful, stateless []taskID
	for _, st := range slices.Sorted(maps.Keys(spec.numTasks)) {
		for p := range spec.numTasks[st] {
			if spec.stateful[st] {
				stateful = append(stateful, taskID{st, p})
			} else {
				stateless = append(stateless, taskID{st, p})
			}
		}
	}
	a := &activeAssignment{spec: spec, active: make([][]taskID, len(spec.members)), processActive: make(map[string]int)}
	a.assignClass(stateful)
	a.assignClass(stateless)
	warmup := a.holdBackForWarmups(stateful)

	standby := make([][]taskID, len(spec.members))
	if spec.numStandbys > 0 {
		holders := make(map[taskID]map[string]bool, len(stateful))
		hold := func(t taskID, process string) {
			if holders[t] == nil {
				holders[t] = make(map[string]bool)
			}
			holders[t][process] = true
		}
		for i, m := range spec.members {
			for _, t := range a.active[i] {
				hold(t, m.processID)
			}
			for _, t := range warmup[i] {
				hold(t, m.processID)
			}
		}
		load := func(i int) int { return len(a.active[i]) + len(standby[i]) + len(warmup[i]) }
		for _, t := range stateful {
			for range spec.numStandbys {
				best := -1
				for i, m := range spec.members {
					if holders[t][m.processID] {
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
				hold(t, spec.members[best].processID)
			}
		}
	}
	for i, m := range spec.members {
		out[m.id] = streamsTasks{active: taskSetOf(a.active[i]), standby: taskSetOf(standby[i]), warmup: taskSetOf(warmup[i])}
	}
	return out
}

// activeAssignment is the active task placement being built.
type activeAssignment struct {
	spec          streamsAssignmentSpec
	active        [][]taskID
	processActive map[string]int
}

func (a *activeAssignment) assign(i int, t taskID) {
	a.active[i] = append(a.active[i], t)
	a.processActive[a.spec.members[i].processID]++
}

// assignClass places one class of tasks (stateful or stateless), at most
// ceil(len(tasks)/members) of them per member.
func (a *activeAssignment) assignClass(tasks []taskID) {
	members := a.spec.members
	n := len(members)
	limit := (len(tasks) + n - 1) / n
	count := make([]int, n)
	place := func(i int, t taskID) {
		count[i]++
		a.assign(i, t)
	}
	var unassigned []taskID
	for _, t := range tasks {
		owner := slices.IndexFunc(members, func(m streamsAssignee) bool { return m.previous.active.contains(t) })
		if owner >= 0 && count[owner] < limit {
			place(owner, t)
			continue
		}
		unassigned = append(unassigned, t)
	}
	var rest []taskID
	for _, t := range unassigned {
		best := -1
		for i, m := range members {
			if count[i] >= limit || (!m.previous.standby.contains(t) && !m.previous.warmup.contains(t)) {
				continue
			}
			if best < 0 || count[i] < count[best] {
				best = i
			}
		}
		if best >= 0 {
			place(best, t)
			continue
		}
		rest = append(rest, t)
	}
	for _, t := range rest {
		best := 0
		for i := 1; i < n; i++ {
			switch {
			case count[i] != count[best]:
				if count[i] < count[best] {
					best = i
				}
			case len(a.active[i]) != len(a.active[best]):
				if len(a.active[i]) < len(a.active[best]) {
					best = i
				}
			case a.processActive[members[i].processID] < a.processActive[members[best].processID]:
				best = i
			}
		}
		place(best, t)
	}
}

// holdBackForWarmups keeps on its caught-up previous owner every stateful
// task placed on a process that is not caught up, giving the new owner a
// warm-up of it within the budget. It returns the warm-ups by member.
func (a *activeAssignment) holdBackForWarmups(stateful []taskID) [][]taskID {
	spec := a.spec
	warmup := make([][]taskID, len(spec.members))
	if spec.caughtUp == nil {
		return warmup
	}
	budget := spec.numWarmups
	for _, t := range stateful {
		owner := -1
		for i := range a.active {
			if slices.Contains(a.active[i], t) {
				owner = i
				break
			}
		}
		previous := slices.IndexFunc(spec.members, func(m streamsAssignee) bool { return m.previous.active.contains(t) })
		if owner < 0 || previous < 0 || previous == owner {
			continue
		}
		newProcess, oldProcess := spec.members[owner].processID, spec.members[previous].processID
		if newProcess == oldProcess || spec.caughtUp(newProcess, t) || !spec.caughtUp(oldProcess, t) {
			continue
		}
		a.active[owner] = slices.DeleteFunc(a.active[owner], func(x taskID) bool { return x == t })
		a.processActive[newProcess]--
		a.assign(previous, t)
		if budget > 0 {
			budget--
			warmup[owner] = append(warmup[owner], t)
		}
	}
	return warmup
}

// sortAssignees orders members by id, as the spec requires.
func sortAssignees(ms []streamsAssignee) {
	slices.SortFunc(ms, func(a, b streamsAssignee) int { return strings.Compare(a.id, b.id) })
}
