package network

import "time"

// Channel muting for client quotas (KIP-219). A handler that throttles a
// client sets Response.ThrottleMs; from then on the connection is muted:
// its reader takes no further request off the socket, and hands on none it
// has read ahead, until the throttle has passed. The client has been told
// throttle_time_ms and should wait anyway; one that does not finds its
// requests waiting in its own socket buffer, not in the broker's memory.
//
// Only the reader waits: responses of requests already handed on still go
// out.

// muteLocked extends the connection's mute by throttleMs from now. The
// mute starts when the response is given, a moment before Kafka's (which
// starts it once the response is sent), so a request read ahead behind a
// throttled one is held back too.
func (c *connection) muteLocked(throttleMs int32, now time.Time) {
	if throttleMs <= 0 {
		return
	}
	until := now.Add(time.Duration(throttleMs) * time.Millisecond)
	if until.After(c.mu.mutedUntil) {
		c.mu.mutedUntil = until
	}
	c.server.counters.connectionsThrottled.Add(1)
}

// awaitUnmuted waits until the connection's mute has passed; false if the
// connection closed or the server began to stop first.
func (c *connection) awaitUnmuted() bool {
	for {
		c.mu.Lock()
		until := c.mu.mutedUntil
		c.mu.Unlock()
		wait := time.Until(until)
		if wait <= 0 {
			return true
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-c.closed:
			timer.Stop()
			return false
		case <-c.server.stopReading:
			timer.Stop()
			c.stopReading()
			return false
		}
	}
}
