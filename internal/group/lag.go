package group

// CommittedOffset is one committed offset of a group, as consumer lag
// metrics need it: lag is the partition's high watermark minus Offset.
type CommittedOffset struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
}

// CommittedOffsets returns up to limit committed offsets of the groups this
// coordinator has loaded, ordered by __consumer_offsets partition, group,
// topic and partition, and whether some were left out for the limit. It only
// reads: no record is written and no timer moves. It takes each partition's
// mutex in turn just long enough to copy that partition's offsets, so it may
// wait for a request's append in progress but never holds up more than one
// partition. Partitions still loading are skipped.
func (c *Coordinator) CommittedOffsets(limit int) (offsets []CommittedOffset, truncated bool) {
	for _, p := range c.partitions() {
		var full bool
		offsets, full = p.committedOffsets(offsets, limit)
		if full {
			return offsets, true
		}
	}
	return offsets, false
}

// committedOffsets appends p's committed offsets to into until it holds
// limit, reporting whether it left any out.
func (p *partition) committedOffsets(into []CommittedOffset, limit int) ([]CommittedOffset, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.status != partitionActive {
		return into, false
	}
	s := p.mu.shard
	for _, groupID := range s.sortedGroupIDs() {
		byPartition := s.offsets[groupID]
		for _, tp := range sortedTopicPartitions(byPartition) {
			if len(into) >= limit {
				return into, true
			}
			into = append(into, CommittedOffset{Group: groupID, Topic: tp.topic, Partition: tp.partition, Offset: byPartition[tp].offset})
		}
	}
	return into, false
}
