package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

// forwardTimeoutMs bounds one request forwarded to the active controller
// (request.timeout.ms's default).
const forwardTimeoutMs = 30000

// activeControllerID is the metadata quorum leader, -1 when unknown.
func (b *Broker) activeControllerID() int32 {
	if b.MetadataLeader == nil {
		return b.NodeID
	}
	id, _ := b.MetadataLeader()
	return id
}

// controllerIDForClients is the controller id Metadata and DescribeCluster
// give clients, which send admin requests there: the active controller when
// it is also a live broker, else this node, which forwards them (Kafka's
// brokers answer a live broker for the same reason: clients cannot reach a
// dedicated controller).
func (b *Broker) controllerIDForClients() int32 {
	id := b.activeControllerID()
	if br := b.Image().Broker(id); br != nil && !br.Fenced {
		return id
	}
	return b.NodeID
}

// isActiveController reports whether this node decides metadata changes.
func (b *Broker) isActiveController() bool { return b.activeControllerID() == b.NodeID }

// forwarded answers a metadata-changing request by forwarding it to the
// active controller, as Kafka brokers do, when this node is not it. It
// reports whether it did; the answer is sent later (forwardThen).
func (b *Broker) forwarded(c *call, req kmsg.Request) bool {
	if !b.forwards(c) {
		return false
	}
	b.forward(c, req)
	return true
}

// forwards reports whether a metadata-changing request on c goes to the
// active controller rather than being decided here (forwarded). Such a
// request is authorized there, not here.
func (b *Broker) forwards(c *call) bool {
	return !b.isActiveController() && b.ForwardToController != nil && !c.enveloped
}

// forward sends req to the active controller and relays the answer.
func (b *Broker) forward(c *call, req kmsg.Request) { b.forwardThen(c, req, c.reply) }

// forwardThen is forward with the controller's answer, or the error answer
// given in its place, handed to answer, which replies; a request that
// carries part of the client's (the rest decided here) merges the two. The request travels in an Envelope with
// the client's principal and address (58_envelope.go), so the controller
// authorizes it as the client.
//
// As Kafka's ForwardingManager, the broker keeps trying while no controller
// is known or it cannot be reached, and answers every item of the request
// REQUEST_TIMED_OUT once the request's time is up: request.timeout.ms's
// default, or for a request with a timeout_ms (timeout.go) that timeout to
// find a controller and a grace period longer for its answer. A controller
// that refuses the Envelope itself gets the client UNKNOWN_SERVER_ERROR.
func (b *Broker) forwardThen(c *call, req kmsg.Request, answer func(kmsg.Response)) {
	go func() {
		wait := forwardTimeoutMs * time.Millisecond
		if timeoutMs, timed := controllerTimeoutMs(req); timed {
			deadline, cancel := requestContext(timeoutMs)
			defer cancel()
			if !b.awaitController(deadline) {
				answer(timedOutResponse(req, c.version))
				return
			}
			wait = time.Duration(max(timeoutMs, 0))*time.Millisecond + forwardGraceMs*time.Millisecond
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		resp, err := b.forwardRetrying(ctx, c, req)
		switch {
		case err == nil:
			answer(resp)
		case errors.Is(err, errEnvelope):
			b.Logger.Warn("the active controller refused a forwarded request", "api", kmsg.NameForKey(req.Key()), "err", err)
			answer(errorResponse(req, c.version, kerr.UnknownServerError.Code, kerr.UnknownServerError.Message))
		default:
			b.Logger.Warn("forwarding to the active controller timed out", "api", kmsg.NameForKey(req.Key()), "err", err)
			answer(timedOutResponse(req, c.version))
		}
	}()
}

// forwardRetrying forwards req until the controller answers or refuses the
// Envelope, retrying every controllerRetryBackoff while none is known or
// reachable, until ctx ends (with the last failure).
func (b *Broker) forwardRetrying(ctx context.Context, c *call, req kmsg.Request) (kmsg.Response, error) {
	for {
		resp, err := b.forwardEnvelope(ctx, c, req, c.version)
		if err == nil || errors.Is(err, errEnvelope) {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(controllerRetryBackoff):
		}
	}
}

// controllerRetryBackoff is how long a forwarding broker waits before it
// tries an unreachable controller again (retry.backoff.ms's default).
const controllerRetryBackoff = 100 * time.Millisecond

// controllerPollInterval is how often a forwarding broker looks for an
// active controller while none is known.
const controllerPollInterval = 20 * time.Millisecond

// awaitController reports whether an active controller is known before ctx
// ends.
func (b *Broker) awaitController(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	ticker := time.NewTicker(controllerPollInterval)
	defer ticker.Stop()
	for b.activeControllerID() < 0 {
		select {
		case <-ctx.Done():
			return false
		case <-ticker.C:
		}
	}
	return true
}

// autoCreateTopicsVersion is the CreateTopics version of auto-creations
// forwarded in an Envelope: the newest 19_create_topics.go serves.
const autoCreateTopicsVersion = 7

// createTopics creates topics on the active controller, here or by
// forwarding a CreateTopics request. This node's image may lag behind the
// creation by a moment. A creation a client's request asked for (c, a
// Metadata request's auto-creation) is forwarded in an Envelope as that
// client, as Kafka's AutoTopicCreationManager does; internal topics (c nil)
// are created as this broker.
func (b *Broker) createTopics(c *call, topics []controller.CreateTopic) []controller.TopicResult {
	if b.isActiveController() || b.ForwardToController == nil {
		ctx, cancel := requestContext(forwardTimeoutMs)
		defer cancel()
		return b.Controller.CreateTopics(ctx, topics, false)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = forwardTimeoutMs
	for _, t := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t.Name, t.NumPartitions, t.ReplicationFactor
		for name, value := range t.Configs {
			rc := kmsg.NewCreateTopicsRequestTopicConfig()
			rc.Name, rc.Value = name, value
			rt.Configs = append(rt.Configs, rc)
		}
		req.Topics = append(req.Topics, rt)
	}
	results := make([]controller.TopicResult, len(topics))
	ctx, cancel := context.WithTimeout(context.Background(), forwardTimeoutMs*time.Millisecond)
	defer cancel()
	var resp kmsg.Response
	var err error
	if c != nil {
		resp, err = b.forwardEnvelope(ctx, c, req, autoCreateTopicsVersion)
	} else {
		resp, err = b.ForwardToController(ctx, req)
	}
	for i, t := range topics {
		results[i] = controller.TopicResult{Name: t.Name, ErrorCode: kerr.NotController.Code}
		if err != nil {
			continue
		}
		for _, rt := range resp.(*kmsg.CreateTopicsResponse).Topics {
			if rt.Topic == t.Name {
				results[i] = controller.TopicResult{Name: rt.Topic, TopicID: metadata.UUID(rt.TopicID), ErrorCode: rt.ErrorCode,
					NumPartitions: rt.NumPartitions, ReplicationFactor: rt.ReplicationFactor}
			}
		}
	}
	return results
}

// allocateProducerIDs takes a block of producer ids from the active
// controller, here or with an AllocateProducerIds request.
func (b *Broker) allocateProducerIDs() (first, size int64, err error) {
	if b.isActiveController() || b.ForwardToController == nil {
		return b.Controller.AllocateProducerIDs(b.NodeID)
	}
	req := kmsg.NewPtrAllocateProducerIDsRequest()
	req.BrokerID = b.NodeID
	ctx, cancel := context.WithTimeout(context.Background(), forwardTimeoutMs*time.Millisecond)
	defer cancel()
	resp, err := b.ForwardToController(ctx, req)
	if err != nil {
		return 0, 0, err
	}
	ar := resp.(*kmsg.AllocateProducerIDsResponse)
	if err := kerr.ErrorForCode(ar.ErrorCode); err != nil {
		return 0, 0, err
	}
	return ar.ProducerIDStart, int64(ar.ProducerIDLen), nil
}

// controllerErrorCode is the top-level code for a controller write that
// failed: NOT_CONTROLLER when this node is not (or no longer) the active
// controller, so the client retries at the right one; REQUEST_TIMED_OUT
// when the request's deadline passed; else UNKNOWN_SERVER_ERROR.
func controllerErrorCode(err error) int16 {
	switch {
	case errors.Is(err, controller.ErrNotActive):
		return kerr.NotController.Code
	case controller.IsTimeout(err):
		return kerr.RequestTimedOut.Code
	}
	return kerr.UnknownServerError.Code
}
