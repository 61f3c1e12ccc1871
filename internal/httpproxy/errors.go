package httpproxy

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/twmb/franz-go/pkg/kerr"
)

// apiError is an answer with Confluent REST Proxy's status and error code.
type apiError struct {
	status  int
	code    int
	message string
}

func (e *apiError) Error() string { return e.message }

func newError(status, code int, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// Confluent REST Proxy's error codes (io.confluent.kafkarest.Errors and
// rest-utils' generic ones, where the code is the HTTP status).
func errTopicNotFound() *apiError {
	return newError(http.StatusNotFound, 40401, "Topic not found.")
}
func errPartitionNotFound() *apiError {
	return newError(http.StatusNotFound, 40402, "Partition not found.")
}
func errConsumerInstanceNotFound() *apiError {
	return newError(http.StatusNotFound, 40403, "Consumer instance not found.")
}
func errFormatMismatch() *apiError {
	return newError(http.StatusNotAcceptable, 40601, "The requested embedded data format does not match the deserializer for this consumer instance")
}
func errAlreadySubscribed() *apiError {
	return newError(http.StatusConflict, 40901, "Consumer cannot subscribe the the specified target because it has already subscribed to other topics.")
}
func errConsumerExists() *apiError {
	return newError(http.StatusConflict, 40902, "Consumer with specified consumer ID already exists in the specified consumer group.")
}
func errIllegalState(format string, args ...any) *apiError {
	return newError(http.StatusConflict, 40903, "Illegal state: "+format, args...)
}
func errKeySchemaMissing() *apiError {
	return newError(http.StatusUnprocessableEntity, 42201, "Request includes keys but does not include key schema")
}
func errValueSchemaMissing() *apiError {
	return newError(http.StatusUnprocessableEntity, 42202, "Request includes values but does not include value schema")
}
func errConversion(err error) *apiError {
	return newError(http.StatusUnprocessableEntity, 42203, "Conversion of JSON to Object failed: %v", err)
}
func errInvalidConsumerConfig(format string, args ...any) *apiError {
	return newError(http.StatusUnprocessableEntity, 42204, "Invalid consumer configuration: "+format, args...)
}
func errInvalidSchema(err error) *apiError {
	return newError(http.StatusUnprocessableEntity, 42205, "Invalid schema: %v", err)
}
func errMalformed(err error) *apiError {
	return newError(http.StatusBadRequest, 400, "Unrecognized or malformed JSON body: %v", err)
}
func errBadRequest(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, 40002, format, args...)
}
func errUnprocessable(format string, args ...any) *apiError {
	return newError(http.StatusUnprocessableEntity, 422, format, args...)
}
func errTooLarge() *apiError {
	return newError(http.StatusRequestEntityTooLarge, 413, "Request body too large")
}
func errUnsupportedMediaType() *apiError {
	return newError(http.StatusUnsupportedMediaType, 415, "HTTP 415 Unsupported Media Type")
}
func errNotAcceptable() *apiError {
	return newError(http.StatusNotAcceptable, 406, "HTTP 406 Not Acceptable")
}
func errNotFound() *apiError {
	return newError(http.StatusNotFound, 404, "HTTP 404 Not Found")
}
func errTooManyInstances(limit int) *apiError {
	return newError(http.StatusTooManyRequests, 429, "Too many consumer instances: http.proxy.consumer.max.instances is %d", limit)
}
func errKafka(err error) *apiError {
	return newError(http.StatusInternalServerError, 50002, "Kafka error: %v", err)
}
func errRetriable(err error) *apiError {
	return newError(http.StatusInternalServerError, 50003, "Retriable Kafka error: %v", err)
}
func errTimeout() *apiError {
	return newError(http.StatusInternalServerError, 50002, "Kafka error: operation timed out")
}

// kafkaError maps a Kafka error to the answer Confluent's exception mapper
// gives it.
func kafkaError(err error) *apiError {
	var api *apiError
	if errors.As(err, &api) {
		return api
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke {
		case kerr.UnknownTopicOrPartition:
			return newError(http.StatusNotFound, 40403, "This server does not host this topic-partition.")
		case kerr.TopicAuthorizationFailed, kerr.GroupAuthorizationFailed, kerr.ClusterAuthorizationFailed,
			kerr.TransactionalIDAuthorizationFailed, kerr.DelegationTokenAuthorizationFailed:
			return newError(http.StatusForbidden, 40301, "%s", ke.Description)
		case kerr.SaslAuthenticationFailed:
			return newError(http.StatusUnauthorized, 40101, "Authentication failed")
		case kerr.TopicAlreadyExists, kerr.InvalidReplicationFactor, kerr.InvalidPartitions,
			kerr.InvalidRequest, kerr.InvalidConfig, kerr.InvalidTopicException, kerr.InvalidReplicaAssignment,
			kerr.PolicyViolation, kerr.InvalidRecord:
			return newError(http.StatusBadRequest, 40002, "%s", ke.Description)
		case kerr.GroupIDNotFound:
			return newError(http.StatusNotFound, 404, "%s", ke.Description)
		}
		if ke.Retriable {
			return errRetriable(err)
		}
	}
	if errors.Is(err, errSessionsBusy) {
		return newError(http.StatusTooManyRequests, 429, "%v", err)
	}
	return errKafka(err)
}

// produceErrorCode is the per-record error code of a v2 produce answer:
// 50003 for retriable Kafka errors, 50002 for the rest, 40301 when the
// principal may not write.
func produceErrorCode(err error) int {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		if ke == kerr.TopicAuthorizationFailed || ke == kerr.ClusterAuthorizationFailed {
			return 40301
		}
		if ke.Retriable {
			return 50003
		}
	}
	return 50002
}
