package api

// Envelope (key 58), version 0, on the controller listener only (KIP-590).
//
// A broker that forwards a client's admin request to the active controller
// wraps it in an Envelope that carries the client's principal and address,
// so the controller authorizes the request as the client, not as the
// forwarding broker:
//
//	request_principal    DefaultPrincipalData, version-prefixed (Kafka's
//	                     DefaultKafkaPrincipalBuilder serde):
//	                       int16 version (0) | compact string type |
//	                       compact string name | bool token_authenticated |
//	                       tagged fields
//	client_host_address  the client's IP address, 4 or 16 bytes
//	request_data         the inner request: its header (v1, or v2 for
//	                     flexible versions) and body, as the client framed it
//	                     but without the size
//	response_data        the inner response: its header (correlation id,
//	                     and tagged fields for flexible versions) and body
//
// Behavior:
//   - The sender needs CLUSTER_ACTION on the cluster, else the envelope
//     answers CLUSTER_AUTHORIZATION_FAILED.
//   - A node that is not the active controller answers NOT_CONTROLLER in
//     the envelope; the forwarding broker retries until the request's
//     deadline.
//   - A principal that does not decode answers
//     PRINCIPAL_DESERIALIZATION_FAILURE; an address that is not 4 or 16
//     bytes, an inner request that does not parse, or one that is not
//     forwardable (forwardableAPIs) answers INVALID_REQUEST.
//   - The inner request is served as if the client had sent it here, with
//     its principal and host; its handler never forwards it again.
//   - An envelope error reaches the client as UNKNOWN_SERVER_ERROR on every
//     item of its request, as Kafka's ForwardingManager answers it.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/network"
)

const envelopeKey = 58

func init() {
	registerController(envelopeKey, 0, 0, handleEnvelope)
}

// forwardableAPIs are the requests a broker forwards to the active
// controller, the only ones an Envelope may carry.
var forwardableAPIs = map[int16]bool{
	19: true, // CreateTopics
	20: true, // DeleteTopics
	30: true, // CreateAcls
	31: true, // DeleteAcls
	33: true, // AlterConfigs
	37: true, // CreatePartitions
	38: true, // CreateDelegationToken
	39: true, // RenewDelegationToken
	40: true, // ExpireDelegationToken
	43: true, // ElectLeaders
	44: true, // IncrementalAlterConfigs
	45: true, // AlterPartitionReassignments
	46: true, // ListPartitionReassignments
	49: true, // AlterClientQuotas
	51: true, // AlterUserScramCredentials
	55: true, // DescribeQuorum
	57: true, // UpdateFeatures
	80: true, // AddRaftVoter
	81: true, // RemoveRaftVoter
}

func handleEnvelope(b *Broker, c *call, r kmsg.Request) {
	req := r.(*kmsg.EnvelopeRequest)
	resp := kmsg.NewPtrEnvelopeResponse()
	fail := func(err *kerr.Error) {
		resp.ErrorCode = err.Code
		c.reply(resp)
	}
	if !b.authorizeCluster(c, opClusterAction) {
		fail(kerr.ClusterAuthorizationFailed)
		return
	}
	if !b.isActiveController() {
		fail(kerr.NotController)
		return
	}
	principal, tokenAuthenticated, err := decodePrincipal(req.RequestPrincipal)
	if err != nil {
		fail(kerr.PrincipalDeserializationFailure)
		return
	}
	if len(req.ClientHostAddress) != net.IPv4len && len(req.ClientHostAddress) != net.IPv6len {
		fail(kerr.InvalidRequest)
		return
	}
	header, body, err := network.ParseRequestHeader(req.RequestData, nil)
	if err != nil || !forwardableAPIs[header.APIKey] {
		fail(kerr.InvalidRequest)
		return
	}
	h := controllerAPIs[header.APIKey]
	if h == nil || header.APIVersion < h.minVersion || header.APIVersion > h.maxVersion {
		fail(kerr.UnsupportedVersion)
		return
	}
	inner := kmsg.RequestForKey(header.APIKey)
	inner.SetVersion(header.APIVersion)
	// The inner request may be answered after this handler returns, so it
	// must not alias the envelope's body.
	body = append([]byte(nil), body...)
	if err := inner.ReadFrom(body); err != nil {
		fail(kerr.InvalidRequest)
		return
	}
	conn := *c.req.Conn
	conn.Principal, conn.TokenAuthenticated = principal, tokenAuthenticated
	conn.RemoteAddr = &net.TCPAddr{IP: net.IP(append([]byte(nil), req.ClientHostAddress...))}
	conn.SASL = nil
	innerRequest := network.NewRequest(header, body, &conn, func(answer network.Response) {
		if answer.None || answer.Close {
			// The inner handler closes the client's connection: close the
			// forwarding broker's, which then closes its client's.
			c.req.Respond(network.Response{None: true, Close: true})
			return
		}
		resp.ResponseData = appendResponseHeader(nil, header)
		for _, chunk := range answer.Chunks {
			resp.ResponseData = append(resp.ResponseData, chunk.Bytes...)
		}
		c.reply(resp)
	})
	h.handle(b, &call{req: innerRequest, version: header.APIVersion, start: b.Now(), enveloped: true}, inner)
}

// appendResponseHeader is the response header of a request with header:
// the correlation id, then (response header v1) an empty tagged-field
// section for flexible versions other than ApiVersions'.
func appendResponseHeader(dst []byte, header network.RequestHeader) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(header.CorrelationID))
	if header.Flexible && header.APIKey != apiVersionsKey {
		dst = append(dst, 0)
	}
	return dst
}

// encodePrincipal is Kafka's DefaultKafkaPrincipalBuilder serialization of
// "Type:Name".
func encodePrincipal(principal string, tokenAuthenticated bool) []byte {
	data := kmsg.NewDefaultPrincipalData()
	data.Type, data.Name, _ = strings.Cut(principal, ":")
	data.TokenAuthenticated = tokenAuthenticated
	return data.AppendTo(nil)
}

// errBadPrincipal is a request_principal that does not decode.
var errBadPrincipal = errors.New("api: malformed forwarded principal")

// decodePrincipal reads a principal encodePrincipal wrote.
func decodePrincipal(encoded []byte) (principal string, tokenAuthenticated bool, err error) {
	data := kmsg.NewDefaultPrincipalData()
	if err := data.ReadFrom(encoded); err != nil {
		return "", false, fmt.Errorf("%w: %v", errBadPrincipal, err)
	}
	if data.Version != 0 || data.Type == "" || data.Name == "" {
		return "", false, errBadPrincipal
	}
	return data.Type + ":" + data.Name, data.TokenAuthenticated, nil
}

// envelopeFor wraps a request made for a client in an Envelope with the
// client's principal and address, at version (the client's own, for a
// request the client sent).
func envelopeFor(c *call, req kmsg.Request, version int16) *kmsg.EnvelopeRequest {
	req.SetVersion(version)
	data := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	data = binary.BigEndian.AppendUint16(data, uint16(version))
	data = binary.BigEndian.AppendUint32(data, uint32(c.req.CorrelationID))
	if id := c.req.ClientID; id == nil {
		data = binary.BigEndian.AppendUint16(data, 0xffff)
	} else {
		data = binary.BigEndian.AppendUint16(data, uint16(len(*id)))
		data = append(data, *id...)
	}
	if req.IsFlexible() {
		data = append(data, 0) // no tagged fields
	}
	envelope := kmsg.NewPtrEnvelopeRequest()
	envelope.RequestData = req.AppendTo(data)
	envelope.RequestPrincipal = encodePrincipal(c.principal(), c.req.Conn.TokenAuthenticated)
	ip := net.ParseIP(c.host())
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	if ip == nil {
		ip = net.IPv4zero.To4()
	}
	envelope.ClientHostAddress = ip
	return envelope
}

// errEnvelope is an Envelope the controller answered with an error.
var errEnvelope = errors.New("api: envelope refused by the controller")

// forwardEnvelope sends a request made for a client to the active
// controller in an Envelope, at version, and returns the inner response.
// NOT_CONTROLLER (leadership moved under the request) is retried until ctx
// ends; another envelope error is errEnvelope.
func (b *Broker) forwardEnvelope(ctx context.Context, c *call, req kmsg.Request, version int16) (kmsg.Response, error) {
	envelope := envelopeFor(c, req, version)
	for {
		resp, err := b.ForwardToController(ctx, envelope)
		if err != nil {
			return nil, err
		}
		er := resp.(*kmsg.EnvelopeResponse)
		switch er.ErrorCode {
		case 0:
			return decodeEnveloped(req, er.ResponseData)
		case kerr.NotController.Code:
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(controllerPollInterval):
			}
		default:
			return nil, fmt.Errorf("%w: %v", errEnvelope, kerr.ErrorForCode(er.ErrorCode))
		}
	}
}

// decodeEnveloped reads the inner response of an Envelope answer to req.
func decodeEnveloped(req kmsg.Request, data []byte) (kmsg.Response, error) {
	if len(data) < 4 {
		return nil, fmt.Errorf("%w: %d bytes of response", errEnvelope, len(data))
	}
	data = data[4:] // the correlation id
	if req.IsFlexible() && req.Key() != apiVersionsKey {
		rest, err := skipResponseTags(data)
		if err != nil {
			return nil, err
		}
		data = rest
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(data); err != nil {
		return nil, fmt.Errorf("%w: %v", errEnvelope, err)
	}
	return resp, nil
}

// skipResponseTags skips a response header's tagged fields.
func skipResponseTags(data []byte) ([]byte, error) {
	count, n := binary.Uvarint(data)
	if n <= 0 {
		return nil, fmt.Errorf("%w: bad tagged fields", errEnvelope)
	}
	data = data[n:]
	for range count {
		if _, n = binary.Uvarint(data); n <= 0 {
			return nil, fmt.Errorf("%w: bad tag", errEnvelope)
		}
		data = data[n:]
		size, n := binary.Uvarint(data)
		if n <= 0 || size > uint64(len(data)-n) {
			return nil, fmt.Errorf("%w: bad tag size", errEnvelope)
		}
		data = data[n+int(size):]
	}
	return data, nil
}
