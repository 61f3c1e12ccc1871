package server

import "github.com/samsa-streaming/samsa/internal/group"

// TopicInfo and TopicNames make topicResolver a group.TopicMetadata, which
// consumer-protocol groups need: partition counts for the server-side
// assignor and every topic name for regular expression subscriptions.

func (r topicResolver) TopicInfo(name string) ([16]byte, int32, bool) {
	t := r.controller.Image().Topic(name)
	if t == nil {
		return [16]byte{}, 0, false
	}
	return t.ID, int32(len(t.Partitions)), true
}

func (r topicResolver) TopicNames() []string { return r.controller.Image().TopicNames() }

var _ group.TopicMetadata = topicResolver{}
