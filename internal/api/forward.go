package api

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/network"
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
// reports whether it did; the answer is sent later. A controller that cannot
// be reached closes the connection, so the client retries elsewhere.
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

// forward sends req to the active controller and relays the answer. A
// request with a timeout_ms is bounded by it (timeout.go): it waits for an
// active controller until its deadline and for the answer a grace period
// longer, and answers REQUEST_TIMED_OUT per item when either passes.
func (b *Broker) forward(c *call, req kmsg.Request) { b.forwardThen(c, req, c.reply) }

// forwardThen is forward with the controller's answer handed to answer,
// which replies; a request that carries part of the client's (the rest
// decided here) merges the two. The request travels in an Envelope with
// the client's principal and address (58_envelope.go), so the controller
// authorizes it as the client.
func (b *Broker) forwardThen(c *call, req kmsg.Request, answer func(kmsg.Response)) {
	go func() {
		wait := forwardTimeoutMs * time.Millisecond
		timeoutMs, timed := controllerTimeoutMs(req)
		if timed {
			deadline, cancel := requestContext(timeoutMs)
			defer cancel()
			if !b.awaitController(deadline) {
				c.reply(timedOutResponse(req, c.version))
				return
			}
			wait = time.Duration(max(timeoutMs, 0))*time.Millisecond + forwardGraceMs*time.Millisecond
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		resp, err := b.forwardEnvelope(ctx, c, req, c.version)
		if err != nil {
			if timed && ctx.Err() != nil {
				c.reply(timedOutResponse(req, c.version))
				return
			}
			if errors.Is(err, errEnvelope) {
				b.Logger.Warn("the active controller refused a forwarded request", "api", kmsg.NameForKey(req.Key()), "err", err)
				if failed := errorResponse(req, c.version, kerr.UnknownServerError.Code, kerr.UnknownServerError.Message); failed != nil {
					c.reply(failed)
					return
				}
			}
			b.Logger.Warn("forwarding to the active controller failed", "api", kmsg.NameForKey(req.Key()), "err", err)
			c.req.Respond(network.Response{None: true, Close: true})
			return
		}
		answer(resp)
	}()
}

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
