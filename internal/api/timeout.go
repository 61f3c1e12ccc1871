package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Controller requests that carry a timeout_ms (CreateTopics, DeleteTopics,
// CreatePartitions, ElectLeaders, AlterPartitionReassignments) are decided within it, as Kafka's
// ControllerApis makes timeoutMs the deadline of the controller event:
//   - the deadline is timeout_ms after the handler starts; 0 or less has
//     passed already, so every item answers REQUEST_TIMED_OUT and nothing
//     is written (validate_only included);
//   - a quorum that cannot commit answers REQUEST_TIMED_OUT per item at the
//     deadline; an entry handed to the quorum before it may still commit
//     later, whole (see package controller, deadline.go);
//   - a broker that forwards the request waits for an active controller no
//     longer than the deadline, and for its answer no longer than the
//     deadline plus forwardGraceMs, answering REQUEST_TIMED_OUT per item
//     when either passes, as Kafka's forwarding answers a timed-out request.
// AlterConfigs, IncrementalAlterConfigs and the ACL requests carry no
// timeout; Kafka gives their controller events no deadline, and here they
// keep the journal's own bound.

// forwardGraceMs is how long past a forwarded request's own deadline its
// broker still waits for the controller's answer, which the controller sends
// at that deadline at the latest.
const forwardGraceMs = 5000

// controllerTimeoutMs is the timeout_ms of a request that carries one.
func controllerTimeoutMs(req kmsg.Request) (ms int32, ok bool) {
	switch r := req.(type) {
	case *kmsg.CreateTopicsRequest:
		return r.TimeoutMillis, true
	case *kmsg.DeleteTopicsRequest:
		return r.TimeoutMillis, true
	case *kmsg.CreatePartitionsRequest:
		return r.TimeoutMillis, true
	case *kmsg.ElectLeadersRequest:
		return r.TimeoutMillis, true
	case *kmsg.AlterPartitionAssignmentsRequest:
		return r.TimeoutMillis, true
	}
	return 0, false
}

// requestContext is the context of a controller request with timeoutMs: it
// ends timeoutMs from now, at once when timeoutMs is 0 or less.
func requestContext(timeoutMs int32) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Duration(timeoutMs)*time.Millisecond)
}

// timedOutResponse answers every item of req with REQUEST_TIMED_OUT, as
// Kafka's getErrorResponse does for a TimeoutException; nil for a request
// without a timeout.
func timedOutResponse(req kmsg.Request, version int16) kmsg.Response {
	return errorResponse(req, version, kerr.RequestTimedOut.Code, "The request timed out before the controller decided it.")
}
