package group

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsTopology is a streams application's topology as its members
// send it on joining (StreamsGroupHeartbeat's Topology, the
// StreamsGroupTopologyValue record): subtopologies, each reading source
// topics and internal repartition topics, keeping state in changelog
// topics, and writing repartition topics other subtopologies read.
type streamsTopology struct {
	epoch int32
	// subtopologies is sorted by id.
	subtopologies []streamsSubtopology
}

type streamsSubtopology struct {
	id                      string
	sourceTopics            []string
	sourceTopicRegex        []string
	stateChangelogTopics    []streamsTopicInfo
	repartitionSinkTopics   []string
	repartitionSourceTopics []streamsTopicInfo
	copartitionGroups       []copartitionGroup
}

// streamsTopicInfo describes an internal topic: partitions 0 leaves the
// count to the coordinator (always so for changelogs), replication factor
// 0 uses the broker default.
type streamsTopicInfo struct {
	name              string
	partitions        int32
	replicationFactor int16
	configs           []keyValue
}

// copartitionGroup names topics that must have the same partition count,
// as indexes into the subtopology's source, regex and repartition source
// topic lists.
type copartitionGroup struct {
	sourceTopics            []int16
	sourceTopicRegex        []int16
	repartitionSourceTopics []int16
}

func (t *streamsTopology) equal(o *streamsTopology) bool {
	if t == nil || o == nil {
		return t == o
	}
	return t.epoch == o.epoch && slices.EqualFunc(t.subtopologies, o.subtopologies, func(a, b streamsSubtopology) bool {
		return a.id == b.id && slices.Equal(a.sourceTopics, b.sourceTopics) && slices.Equal(a.sourceTopicRegex, b.sourceTopicRegex) &&
			slices.EqualFunc(a.stateChangelogTopics, b.stateChangelogTopics, equalTopicInfo) &&
			slices.Equal(a.repartitionSinkTopics, b.repartitionSinkTopics) &&
			slices.EqualFunc(a.repartitionSourceTopics, b.repartitionSourceTopics, equalTopicInfo) &&
			slices.EqualFunc(a.copartitionGroups, b.copartitionGroups, func(x, y copartitionGroup) bool {
				return slices.Equal(x.sourceTopics, y.sourceTopics) && slices.Equal(x.sourceTopicRegex, y.sourceTopicRegex) &&
					slices.Equal(x.repartitionSourceTopics, y.repartitionSourceTopics)
			})
	})
}

func equalTopicInfo(a, b streamsTopicInfo) bool {
	return a.name == b.name && a.partitions == b.partitions && a.replicationFactor == b.replicationFactor && slices.Equal(a.configs, b.configs)
}

func (t *streamsTopology) subtopology(id string) *streamsSubtopology {
	i, found := slices.BinarySearchFunc(t.subtopologies, id, func(st streamsSubtopology, id string) int { return strings.Compare(st.id, id) })
	if !found {
		return nil
	}
	return &t.subtopologies[i]
}

// topologyFromRequest converts a heartbeat's topology, sorting the
// subtopologies by id.
func topologyFromRequest(rt *kmsg.StreamsGroupHeartbeatRequestTopology) *streamsTopology {
	t := &streamsTopology{epoch: rt.Epoch}
	infos := func(in []kmsg.TopicInfo) []streamsTopicInfo {
		out := make([]streamsTopicInfo, 0, len(in))
		for _, ti := range in {
			info := streamsTopicInfo{name: ti.Topic, partitions: ti.NumPartitions, replicationFactor: ti.ReplicationFactor}
			for _, c := range ti.Configs {
				info.configs = append(info.configs, keyValue{c.Key, c.Value})
			}
			out = append(out, info)
		}
		return out
	}
	for _, rs := range rt.Subtopologies {
		st := streamsSubtopology{
			id:                      rs.SubtopologyID,
			sourceTopics:            slices.Clone(rs.SourceTopics),
			sourceTopicRegex:        slices.Clone(rs.SourceTopicRegex),
			stateChangelogTopics:    infos(rs.StateChangelogTopics),
			repartitionSinkTopics:   slices.Clone(rs.RepartitionSinkTopics),
			repartitionSourceTopics: infos(rs.RepartitionSourceTopics),
		}
		for _, cg := range rs.CopartitionGroups {
			st.copartitionGroups = append(st.copartitionGroups, copartitionGroup{
				sourceTopics:            slices.Clone(cg.SourceTopics),
				sourceTopicRegex:        slices.Clone(cg.SourceTopicRegex),
				repartitionSourceTopics: slices.Clone(cg.RepartitionSourceTopics),
			})
		}
		t.subtopologies = append(t.subtopologies, st)
	}
	slices.SortStableFunc(t.subtopologies, func(a, b streamsSubtopology) int { return strings.Compare(a.id, b.id) })
	return t
}

// validateTopologyRequest checks a joining member's topology as Kafka's
// GroupCoordinatorService does before it reaches the group
// (INVALID_REQUEST): unique, non-empty subtopology ids, changelog topics
// without a partition count, copartition indexes in range; regular
// expressions for source topics are not supported, as in Kafka 4.4.
func validateTopologyRequest(rt *kmsg.StreamsGroupHeartbeatRequestTopology) *heartbeatError {
	invalid := func(format string, args ...any) *heartbeatError {
		return hbError(kerr.InvalidRequest, format, args...)
	}
	seen := make(map[string]bool, len(rt.Subtopologies))
	for _, st := range rt.Subtopologies {
		if len(st.SourceTopicRegex) > 0 {
			return invalid("Regular expressions for source topics are not supported yet.")
		}
		if st.SubtopologyID == "" {
			return invalid("Subtopology ID can't be empty.")
		}
		if seen[st.SubtopologyID] {
			return invalid("Duplicate subtopology ID %s.", st.SubtopologyID)
		}
		seen[st.SubtopologyID] = true
		for _, t := range st.StateChangelogTopics {
			if t.NumPartitions != 0 {
				return invalid("Changelog topic %s must have an undefined partition count, but it is set to %d.", t.Topic, t.NumPartitions)
			}
		}
		for _, names := range [][]string{st.SourceTopics, st.RepartitionSinkTopics} {
			for _, n := range names {
				if n == "" {
					return invalid("Topic names in subtopology %s can't be empty.", st.SubtopologyID)
				}
			}
		}
		for _, cg := range st.CopartitionGroups {
			for _, i := range cg.SourceTopics {
				if i < 0 || int(i) >= len(st.SourceTopics) {
					return invalid("Copartition group of subtopology %s refers to source topic index %d out of range.", st.SubtopologyID, i)
				}
			}
			for _, i := range cg.RepartitionSourceTopics {
				if i < 0 || int(i) >= len(st.RepartitionSourceTopics) {
					return invalid("Copartition group of subtopology %s refers to repartition source topic index %d out of range.", st.SubtopologyID, i)
				}
			}
			if len(cg.SourceTopicRegex) > 0 {
				return invalid("Regular expressions for source topics are not supported yet.")
			}
		}
	}
	return nil
}

// Statuses of StreamsGroupHeartbeatResponse (KIP-1071).
const (
	streamsStatusStaleTopology                int8 = 0
	streamsStatusMissingSourceTopics          int8 = 1
	streamsStatusIncorrectlyPartitionedTopics int8 = 2
	streamsStatusMissingInternalTopics        int8 = 3
	streamsStatusShutdownApplication          int8 = 4
	streamsStatusAssignmentDelayed            int8 = 5
)

// StreamsTopicToCreate is an internal topic of a streams application that
// does not exist yet: the API layer creates it, as Kafka's KafkaApis does
// with the topics a streams heartbeat returns.
type StreamsTopicToCreate struct {
	Name              string
	NumPartitions     int32
	ReplicationFactor int16 // -1: default.replication.factor
	Configs           map[string]string
}

// configuredTopology is a topology configured against the cluster's
// metadata (Kafka's ConfiguredTopology): the number of tasks of every
// subtopology, or why it cannot run yet.
type configuredTopology struct {
	topologyEpoch int32
	// numTasks holds each subtopology's task count; nil unless ready.
	numTasks map[string]int32
	// stateful marks subtopologies with state (changelog topics), the
	// ones that get standby tasks.
	stateful map[string]bool
	// partitionsOf holds, per subtopology, the input topics whose
	// partitions its tasks process (for PartitionsByUserEndpoint).
	inputTopics map[string][]string
	// status is the problem stopping the topology (-1: none), with detail.
	status       int8
	statusDetail string
	// toCreate are the missing internal topics.
	toCreate []StreamsTopicToCreate
}

func (c *configuredTopology) ready() bool { return c != nil && c.status == -1 && len(c.toCreate) == 0 }

// configureStreamsTopology is Kafka's InternalTopicManager.configureTopics:
// every source topic must exist; a repartition topic without a partition
// count gets the largest count of the topics the subtopologies writing it
// read; topics of a copartition group must agree (a repartition topic in
// one takes the group's count); a changelog has one partition per task of
// its subtopology. Internal topics that are missing are to be created,
// existing ones with the wrong count are reported.
func configureStreamsTopology(t *streamsTopology, tm TopicMetadata) *configuredTopology {
	c := &configuredTopology{topologyEpoch: t.epoch, status: -1}
	partitionsOf := func(name string) (int32, bool) {
		if tm == nil {
			return 0, false
		}
		_, n, ok := tm.TopicInfo(name)
		return n, ok && n > 0
	}
	var missing []string
	for _, st := range t.subtopologies {
		for _, name := range st.sourceTopics {
			if _, ok := partitionsOf(name); !ok && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		c.status, c.statusDetail = streamsStatusMissingSourceTopics, fmt.Sprintf("Source topics %s are missing.", strings.Join(missing, ", "))
		return c
	}

	// Repartition topic partition counts: a fixed count stands; otherwise
	// the largest count read by the subtopologies writing the topic, found
	// depth first through the repartition topics they read in turn, each
	// topic resolved once (a cycle resolves to what its other inputs give).
	repartition := make(map[string]int32)
	fixed := make(map[string]bool)
	writers := make(map[string][]int)
	for i, st := range t.subtopologies {
		for _, rt := range st.repartitionSourceTopics {
			if rt.partitions > 0 {
				repartition[rt.name], fixed[rt.name] = rt.partitions, true
			} else if _, ok := repartition[rt.name]; !ok {
				repartition[rt.name] = 0
			}
		}
		for _, sink := range st.repartitionSinkTopics {
			writers[sink] = append(writers[sink], i)
		}
	}
	resolving := make(map[string]bool)
	resolved := make(map[string]bool)
	var resolve func(name string) int32
	resolve = func(name string) int32 {
		if fixed[name] || resolved[name] || resolving[name] {
			return repartition[name]
		}
		resolving[name] = true
		var most int32
		for _, i := range writers[name] {
			st := &t.subtopologies[i]
			for _, source := range st.sourceTopics {
				n, _ := partitionsOf(source)
				most = max(most, n)
			}
			for _, rt := range st.repartitionSourceTopics {
				most = max(most, resolve(rt.name))
			}
		}
		delete(resolving, name)
		resolved[name] = true
		repartition[name] = most
		return most
	}
	for _, name := range slices.Sorted(maps.Keys(repartition)) {
		resolve(name)
	}
	// Copartition groups: user topics must agree; repartition topics
	// without a fixed count follow them.
	for _, st := range t.subtopologies {
		for _, cg := range st.copartitionGroups {
			var want int32
			var sources []string
			for _, i := range cg.sourceTopics {
				name := st.sourceTopics[i]
				n, _ := partitionsOf(name)
				sources = append(sources, name)
				if want != 0 && n != want {
					c.status = streamsStatusIncorrectlyPartitionedTopics
					c.statusDetail = fmt.Sprintf("Following topics do not have the same number of partitions: [%s]", strings.Join(sortedCopy(sources), ", "))
					return c
				}
				want = n
			}
			for _, i := range cg.repartitionSourceTopics {
				rt := st.repartitionSourceTopics[i]
				if rt.partitions > 0 {
					if want != 0 && rt.partitions != want {
						c.status = streamsStatusIncorrectlyPartitionedTopics
						c.statusDetail = fmt.Sprintf("Number of partitions %d of repartition topic %s does not match the copartitioned topics.", rt.partitions, rt.name)
						return c
					}
					want = rt.partitions
				}
			}
			if want == 0 {
				for _, i := range cg.repartitionSourceTopics {
					want = max(want, repartition[st.repartitionSourceTopics[i].name])
				}
			}
			for _, i := range cg.repartitionSourceTopics {
				if rt := st.repartitionSourceTopics[i]; rt.partitions == 0 {
					repartition[rt.name] = want
				}
			}
		}
	}
	for name, n := range repartition {
		if n == 0 {
			c.status = streamsStatusIncorrectlyPartitionedTopics
			c.statusDetail = fmt.Sprintf("Unable to determine the number of partitions of repartition topic %s.", name)
			return c
		}
	}

	c.numTasks = make(map[string]int32, len(t.subtopologies))
	c.stateful = make(map[string]bool)
	c.inputTopics = make(map[string][]string)
	var wrong []string
	creating := make(map[string]bool)
	internal := func(info streamsTopicInfo, partitions int32, defaults map[string]string) {
		if n, ok := partitionsOf(info.name); ok {
			if n != partitions {
				wrong = append(wrong, fmt.Sprintf("Existing internal topic %s has invalid number of partitions: expected %d, found %d.", info.name, partitions, n))
			}
			return
		}
		if creating[info.name] {
			return
		}
		creating[info.name] = true
		configs := maps.Clone(defaults)
		for _, kv := range info.configs {
			configs[kv.key] = kv.value
		}
		factor := int16(-1)
		if info.replicationFactor > 0 {
			factor = info.replicationFactor
		}
		c.toCreate = append(c.toCreate, StreamsTopicToCreate{Name: info.name, NumPartitions: partitions, ReplicationFactor: factor, Configs: configs})
	}
	for _, st := range t.subtopologies {
		var tasks int32
		var inputs []string
		for _, name := range st.sourceTopics {
			n, _ := partitionsOf(name)
			tasks = max(tasks, n)
			inputs = append(inputs, name)
		}
		for _, rt := range st.repartitionSourceTopics {
			tasks = max(tasks, repartition[rt.name])
			inputs = append(inputs, rt.name)
			internal(rt, repartition[rt.name], map[string]string{"cleanup.policy": "delete"})
		}
		c.numTasks[st.id] = tasks
		c.inputTopics[st.id] = sortedCopy(inputs)
		if len(st.stateChangelogTopics) > 0 {
			c.stateful[st.id] = true
		}
		for _, ct := range st.stateChangelogTopics {
			internal(ct, tasks, map[string]string{"cleanup.policy": "compact"})
		}
	}
	slices.SortFunc(c.toCreate, func(a, b StreamsTopicToCreate) int { return strings.Compare(a.Name, b.Name) })
	if len(wrong) > 0 {
		slices.Sort(wrong)
		c.status, c.statusDetail = streamsStatusIncorrectlyPartitionedTopics, strings.Join(wrong, " ")
		c.numTasks = nil
		return c
	}
	if len(c.toCreate) > 0 {
		names := make([]string, len(c.toCreate))
		for i, tc := range c.toCreate {
			names[i] = tc.Name
		}
		c.status, c.statusDetail = streamsStatusMissingInternalTopics, fmt.Sprintf("Internal topics are missing: [%s]", strings.Join(names, ", "))
		c.numTasks = nil
	}
	return c
}

func sortedCopy(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// topologyTopicNames returns every topic a topology names, sorted.
func topologyTopicNames(t *streamsTopology) []string {
	var names []string
	for _, st := range t.subtopologies {
		names = append(names, st.sourceTopics...)
		names = append(names, st.repartitionSinkTopics...)
		for _, ti := range st.repartitionSourceTopics {
			names = append(names, ti.name)
		}
		for _, ti := range st.stateChangelogTopics {
			names = append(names, ti.name)
		}
	}
	return sortedCopy(names)
}

// streamsMetadataHash digests the ID and partition count of every topic the
// topology names that exists, so that a heartbeat notices a topic created,
// deleted or grown. (Kafka hashes more, with Murmur3; the value is only
// ever compared with the group's own.)
func streamsMetadataHash(t *streamsTopology, tm TopicMetadata) int64 {
	if t == nil || tm == nil {
		return 0
	}
	h := fnv.New64a()
	for _, name := range topologyTopicNames(t) {
		id, n, ok := tm.TopicInfo(name)
		if !ok {
			continue
		}
		h.Write([]byte(name))
		h.Write(id[:])
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(n)))
	}
	return int64(h.Sum64())
}
