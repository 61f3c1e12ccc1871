package api

// Client quotas in the request path. internal/quota decides; this file
// feeds it each request's user (the principal's name, ANONYMOUS when
// unauthenticated), client id and usage, and carries out its answers as
// Kafka's KafkaApis does:
//
//   - Produce: the request's bytes against producer_byte_rate.
//   - Fetch from a consumer: the response's bytes against
//     consumer_byte_rate. A fetch asks for no more than the quota allows in
//     its window (quota.window.num - 1 windows), and a throttled fetch
//     answers no records and does not count.
//   - Every request not exempt: the handler time spent on it against
//     request_percentage (percent of one handler thread).
//   - CreateTopics, CreatePartitions, DeleteTopics: partitions created or
//     deleted against controller_mutation_rate (controller_mutation.go).
//
// The largest throttle goes into the response's throttle_time_ms and mutes
// the connection for as long once the response is sent (network.Response).
// Requests on the controller listener (brokers, and admin requests a broker
// forwards, which it has measured already), cluster-internal APIs and
// follower fetches are exempt, as in Kafka.

import (
	"encoding/binary"
	"math"
	"sync/atomic"
	"time"

	"github.com/samsa-streaming/samsa/internal/network"
	"github.com/samsa-streaming/samsa/internal/quota"
)

// quotaExemptKeys are the APIs not measured against request_percentage:
// the handshake and cluster-internal ones, as Kafka exempts them.
var quotaExemptKeys = map[int16]bool{
	17: true, // SaslHandshake
	18: true, // ApiVersions
	27: true, // WriteTxnMarkers
	36: true, // SaslAuthenticate
	52: true, // Vote
	53: true, // BeginQuorumEpoch
	54: true, // EndQuorumEpoch
	55: true, // DescribeQuorum
	56: true, // AlterPartition
	59: true, // FetchSnapshot
	62: true, // BrokerRegistration
	63: true, // BrokerHeartbeat
	67: true, // AllocateProducerIds
}

// callQuota is one request's quota state.
type callQuota struct {
	broker *Broker
	// bandwidthThrottleMs is the byte-rate or mutation throttle the
	// handler decided; the reply takes the larger of it and the request
	// time throttle.
	bandwidthThrottleMs int32
	// exempt skips request_percentage (a follower's fetch).
	exempt bool
	// handlerNanos is the time Handle took, once it returned (doneHandling).
	handlerNanos atomic.Int64
	doneHandling atomic.Bool
	// replied is set by the first reply, which records the request time.
	replied atomic.Bool
}

// nowMs is the broker's clock in milliseconds.
func (b *Broker) nowMs() int64 { return b.Now().UnixMilli() }

// quotaIdentity is the request's quota user and client id.
func (c *call) quotaIdentity() (user, clientID string) {
	user = quota.UserOfPrincipal(c.principal())
	if c.req.ClientID != nil {
		clientID = *c.req.ClientID
	}
	return user, clientID
}

// quotaManager is the broker's manager when this request is subject to
// quotas, nil otherwise.
func (c *call) quotaManager() *quota.Manager {
	b := c.quota.broker
	if b == nil || b.Quotas == nil || b.onControllerListener(c) {
		return nil
	}
	return b.Quotas
}

// handled records that Handle returned: a reply after it (a parked
// request) counts the handler time, not the time it waited.
func (c *call) handled() {
	c.quota.handlerNanos.Store(int64(c.quota.broker.Now().Sub(c.start)))
	c.quota.doneHandling.Store(true)
}

// addThrottle raises the request's bandwidth throttle to throttleMs.
func (c *call) addThrottle(throttleMs int64) {
	c.quota.bandwidthThrottleMs = max(c.quota.bandwidthThrottleMs, clampThrottle(throttleMs))
}

func clampThrottle(ms int64) int32 {
	return int32(min(max(ms, 0), math.MaxInt32))
}

// requestTimeThrottleMs records the handler time of the request against
// request_percentage, once, and returns its throttle.
func (c *call) requestTimeThrottleMs() int32 {
	m := c.quotaManager()
	if m == nil || c.quota.exempt || quotaExemptKeys[c.req.APIKey] || !c.quota.replied.CompareAndSwap(false, true) {
		return 0
	}
	if !m.Enabled(quota.Request) {
		return 0
	}
	b := c.quota.broker
	nanos := c.quota.handlerNanos.Load()
	if !c.quota.doneHandling.Load() {
		nanos = int64(b.Now().Sub(c.start))
	}
	// Percent of one handler over a second: nanos * 100 / 1e9.
	percentSeconds := float64(nanos) * 100 / float64(time.Second)
	user, clientID := c.quotaIdentity()
	return clampThrottle(m.Record(quota.Request, user, clientID, percentSeconds, b.nowMs()))
}

// throttleOnReply is the throttle of the response being sent.
func (c *call) throttleOnReply() int32 {
	return max(c.quota.bandwidthThrottleMs, c.requestTimeThrottleMs())
}

// recordProduce counts a produce request's bytes against
// producer_byte_rate.
func (c *call) recordProduce(bytes int) {
	m := c.quotaManager()
	if m == nil {
		return
	}
	user, clientID := c.quotaIdentity()
	c.addThrottle(m.Record(quota.Produce, user, clientID, float64(bytes), c.quota.broker.nowMs()))
}

// fetchQuotaMaxBytes is the most a consumer's fetch may return under its
// consumer_byte_rate, math.MaxInt64 without one.
func (c *call) fetchQuotaMaxBytes() int64 {
	m := c.quotaManager()
	if m == nil || c.quota.exempt {
		return math.MaxInt64
	}
	user, clientID := c.quotaIdentity()
	limit := m.MaxValueInWindow(quota.Fetch, user, clientID)
	if limit >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(int64(limit), 1)
}

// recordFetch counts a consumer's fetch response of bytes and reports the
// throttle of the response; when it is positive the fetch must answer no
// records, and its bytes have been taken back out of the rate.
func (c *call) recordFetch(bytes int64) (throttleMs int32) {
	m := c.quotaManager()
	if m == nil || c.quota.exempt {
		return c.throttleOnReply()
	}
	user, clientID := c.quotaIdentity()
	now := c.quota.broker.nowMs()
	c.addThrottle(m.Record(quota.Fetch, user, clientID, float64(bytes), now))
	throttleMs = c.throttleOnReply()
	if throttleMs > 0 {
		m.Unrecord(quota.Fetch, user, clientID, float64(bytes), now)
	}
	return throttleMs
}

// withFetchThrottle sets throttle_time_ms, the first field of every Fetch
// response body writeFetchResponse writes, and mutes the connection.
func withFetchThrottle(resp network.Response, throttleMs int32) network.Response {
	if len(resp.Chunks) > 0 && len(resp.Chunks[0].Bytes) >= 4 {
		binary.BigEndian.PutUint32(resp.Chunks[0].Bytes[:4], uint32(throttleMs))
	}
	resp.ThrottleMs = throttleMs
	return resp
}
