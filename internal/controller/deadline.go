package controller

import (
	"context"
	"errors"
	"fmt"
)

// Requests that carry a timeout_ms (CreateTopics, DeleteTopics,
// CreatePartitions, ElectLeaders, AlterPartitionReassignments) reach the controller with a context whose
// deadline is the request's arrival plus timeout_ms, as Kafka's ControllerApis
// turns timeoutMs into the deadline of the controller event. Kafka times an
// event out with REQUEST_TIMED_OUT when it has not run by its deadline, so a
// timeout_ms of 0 or less fails every item at once and writes nothing,
// validate_only included. Here the deadline also bounds the wait for the
// decision lock, the leader's catch-up and the commit of the entry: a quorum
// that cannot commit answers REQUEST_TIMED_OUT at the deadline instead of
// holding the request. An entry handed to the quorum before the deadline may
// still commit afterwards; it is one entry, so the change then appears
// whole, never in part.

// writeLock is a mutex whose Lock can give up when a context ends.
type writeLock struct{ held chan struct{} }

func newWriteLock() writeLock { return writeLock{held: make(chan struct{}, 1)} }

func (l writeLock) Lock() { l.held <- struct{}{} }

func (l writeLock) Unlock() { <-l.held }

// lockContext takes the lock unless ctx ends first.
func (l writeLock) lockContext(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case l.held <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// beginTimed starts a decision bounded by ctx: it fails at once when the
// deadline has passed (Kafka's event timing out before it runs), then takes
// the decision lock and catches up, each no longer than ctx allows. On
// success the caller holds c.mu and must Unlock it.
func (c *Controller) beginTimed(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("controller: the request's deadline passed before it ran: %w", err)
	}
	if err := c.mu.lockContext(ctx); err != nil {
		return fmt.Errorf("controller: waiting for earlier metadata changes: %w", err)
	}
	if err := c.journal.CatchUp(ctx); err != nil {
		c.mu.Unlock()
		return err
	}
	return nil
}

// IsTimeout reports whether err is a request's deadline passing
// (REQUEST_TIMED_OUT upstream).
func IsTimeout(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}
