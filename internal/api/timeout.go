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

// errorResponse answers every item of req with code.
func errorResponse(req kmsg.Request, version int16, code int16, message string) kmsg.Response {
	switch r := req.(type) {
	case *kmsg.CreateTopicsRequest:
		resp := kmsg.NewPtrCreateTopicsResponse()
		for _, t := range r.Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic, st.ErrorCode, st.ErrorMessage = t.Topic, code, strptr(message)
			st.NumPartitions, st.ReplicationFactor = -1, -1
			resp.Topics = append(resp.Topics, st)
		}
		return resp
	case *kmsg.DeleteTopicsRequest:
		resp := kmsg.NewPtrDeleteTopicsResponse()
		add := func(name *string, id [16]byte) {
			st := kmsg.NewDeleteTopicsResponseTopic()
			st.Topic, st.TopicID, st.ErrorCode, st.ErrorMessage = name, id, code, strptr(message)
			resp.Topics = append(resp.Topics, st)
		}
		if version >= 6 {
			for _, t := range r.Topics {
				add(t.Topic, t.TopicID)
			}
		} else {
			for _, name := range r.TopicNames {
				add(strptr(name), [16]byte{})
			}
		}
		return resp
	case *kmsg.CreatePartitionsRequest:
		resp := kmsg.NewPtrCreatePartitionsResponse()
		for _, t := range r.Topics {
			st := kmsg.NewCreatePartitionsResponseTopic()
			st.Topic, st.ErrorCode, st.ErrorMessage = t.Topic, code, strptr(message)
			resp.Topics = append(resp.Topics, st)
		}
		return resp
	case *kmsg.ElectLeadersRequest:
		// The top-level code (v1+) and every named partition, as Kafka's
		// ElectLeadersRequest.getErrorResponse.
		resp := kmsg.NewPtrElectLeadersResponse()
		resp.ErrorCode = code
		for _, t := range r.Topics {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewElectLeadersResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = p, code, strptr(message)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.AlterPartitionAssignmentsRequest:
		// The top-level code and every partition, as Kafka's
		// AlterPartitionReassignmentsRequest.getErrorResponse.
		resp := kmsg.NewPtrAlterPartitionAssignmentsResponse()
		resp.ErrorCode, resp.ErrorMessage = code, strptr(message)
		for _, t := range r.Topics {
			rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, strptr(message)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	return nil
}
