package api

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/group"
)

// findShareCoordinator answers FindCoordinator for a share-partition key,
// "group:topicId:partition" (INVALID_REQUEST for any other form).
func (b *Broker) findShareCoordinator(c *call, key string) coordinatorAnswer {
	none := coordinatorAnswer{nodeID: -1, port: -1}
	parts := strings.Split(key, ":")
	if n := len(parts); n < 3 || !validShareKeyParts(parts[n-2], parts[n-1]) || strings.Join(parts[:n-2], ":") == "" {
		none.errorCode = kerr.InvalidRequest.Code
		none.message = "share coordinator key must be group:topicId:partition"
		return none
	}
	t, code := b.shareStateTopic()
	if code != 0 {
		none.errorCode = code
		return none
	}
	p := t.Partitions[group.PartitionFor(key, int32(len(t.Partitions)))]
	return b.nodeAnswer(c, p.Leader)
}

func validShareKeyParts(topicID, partition string) bool {
	id, err := base64.RawURLEncoding.DecodeString(topicID)
	if err != nil || len(id) != 16 {
		return false
	}
	n, err := strconv.ParseInt(partition, 10, 32)
	return err == nil && n >= 0
}
