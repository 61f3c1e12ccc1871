package api

// What the share admin APIs (90-92) share: the group check against the
// group coordinator here, and the share-partitions of a topic.

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/group"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/share"
)

// shareAdminGroup returns the share group for an admin request, or the
// error: NOT_COORDINATOR (and the like) when it is not coordinated here,
// GROUP_ID_NOT_FOUND when it is not a share group, NON_EMPTY_GROUP when
// mustBeEmpty and it has members. With create an absent group is made an
// empty share group (AlterShareGroupOffsets).
func (b *Broker) shareAdminGroup(id string, mustBeEmpty, create bool) (group.ShareGroupInfo, *kerr.Error) {
	info, code := b.Groups.ShareGroup(id, create)
	switch {
	case code != 0:
		return info, kerr.ErrorForCode(code).(*kerr.Error)
	case !info.IsShare:
		return info, kerr.GroupIDNotFound
	case mustBeEmpty && info.Members > 0:
		return info, kerr.NonEmptyGroup
	}
	return info, nil
}

// forgetLocalSharePartition drops the in-memory share-partition on this
// node after an admin changed its durable state, so it is reloaded. A
// leader on another node finds out when its next write is fenced by the
// new state epoch.
func (b *Broker) forgetLocalSharePartition(key share.Key) {
	b.shares().partitions.Forget(func(k share.Key) bool { return k == key })
}

// topicPartitionCount is a topic's partition count in img, or -1.
func topicPartitionCount(img *metadata.Image, name string) (*metadata.Topic, int32) {
	t := img.Topic(name)
	if t == nil {
		return nil, -1
	}
	return t, int32(len(t.Partitions))
}
