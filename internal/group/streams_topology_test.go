package group

import (
	"fmt"
	"testing"
)

// chainTopology is n subtopologies in a row: 0 reads "in" and writes r0,
// i reads r(i-1) and writes ri, the last keeps a store.
func chainTopology(n int, fixedFirst int32) *streamsTopology {
	t := &streamsTopology{epoch: 1}
	for i := range n {
		st := streamsSubtopology{id: fmt.Sprintf("%06d", i)}
		if i == 0 {
			st.sourceTopics = []string{"in"}
		} else {
			partitions := int32(0)
			if i == 1 {
				partitions = fixedFirst
			}
			st.repartitionSourceTopics = []streamsTopicInfo{{name: fmt.Sprintf("r%d", i-1), partitions: partitions}}
		}
		if i < n-1 {
			st.repartitionSinkTopics = []string{fmt.Sprintf("r%d", i)}
		} else {
			st.stateChangelogTopics = []streamsTopicInfo{{name: "store-changelog"}}
		}
		t.subtopologies = append(t.subtopologies, st)
	}
	return t
}

// TestConfigureStreamsTopology: repartition counts flow down a chain from
// the source topic, a fixed count overrides them, changelogs get one
// partition per task, copartitioned topics must agree, and a long chain
// is configured in one pass.
func TestConfigureStreamsTopology(t *testing.T) {
	c := configureStreamsTopology(chainTopology(3, 0), fakeTopics{"in": 4})
	if c.status != streamsStatusMissingInternalTopics || len(c.toCreate) != 3 {
		t.Fatalf("chain: %+v", c)
	}
	for _, tc := range c.toCreate {
		if tc.NumPartitions != 4 {
			t.Errorf("%s: %d partitions, want 4", tc.Name, tc.NumPartitions)
		}
	}
	c = configureStreamsTopology(chainTopology(3, 6), fakeTopics{"in": 4})
	want := map[string]int32{"r0": 6, "r1": 6, "store-changelog": 6}
	for _, tc := range c.toCreate {
		if tc.NumPartitions != want[tc.Name] {
			t.Errorf("fixed: %s has %d partitions, want %d", tc.Name, tc.NumPartitions, want[tc.Name])
		}
	}
	c = configureStreamsTopology(chainTopology(3, 0), fakeTopics{"in": 4, "r0": 4, "r1": 4, "store-changelog": 4})
	if !c.ready() || c.numTasks["000002"] != 4 || !c.stateful["000002"] || c.stateful["000000"] {
		t.Fatalf("ready chain: %+v", c)
	}
	c = configureStreamsTopology(chainTopology(3, 0), fakeTopics{"in": 4, "r0": 4, "r1": 2, "store-changelog": 4})
	if c.status != streamsStatusIncorrectlyPartitionedTopics || c.ready() {
		t.Fatalf("a wrongly partitioned internal topic: %+v", c)
	}
	t.Log(c.statusDetail)

	// A repartition topic copartitioned with a source topic takes its count.
	co := &streamsTopology{epoch: 1, subtopologies: []streamsSubtopology{
		{id: "0", sourceTopics: []string{"a"}, repartitionSinkTopics: []string{"ra"}},
		{id: "1", sourceTopics: []string{"b"}, repartitionSourceTopics: []streamsTopicInfo{{name: "ra"}},
			copartitionGroups: []copartitionGroup{{sourceTopics: []int16{0}, repartitionSourceTopics: []int16{0}}}},
	}}
	c = configureStreamsTopology(co, fakeTopics{"a": 8, "b": 3})
	if len(c.toCreate) != 1 || c.toCreate[0].NumPartitions != 3 {
		t.Fatalf("copartitioned repartition topic: %+v", c.toCreate)
	}

	long := chainTopology(5000, 0)
	topics := fakeTopics{"in": 2}
	c = configureStreamsTopology(long, topics)
	if len(c.toCreate) != 5000 || c.toCreate[0].NumPartitions != 2 {
		t.Fatalf("long chain: %d topics to create", len(c.toCreate))
	}
}
