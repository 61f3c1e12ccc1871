package config

import "errors"

// Error kinds. Every error this package returns for a bad key or value is an
// *Error whose Kind is one of these, so callers can pick the Kafka error code
// with errors.Is and send Error() as the response's error message:
//
//	ErrUnknownKey, ErrInvalidValue, ErrReadOnly -> INVALID_CONFIG (40)
//	ErrInvalidRequest                            -> INVALID_REQUEST (42)
var (
	ErrUnknownKey     = errors.New("config: unknown key")
	ErrInvalidValue   = errors.New("config: invalid value")
	ErrReadOnly       = errors.New("config: key cannot be altered dynamically")
	ErrInvalidRequest = errors.New("config: invalid request")
)

// Error is a problem with one configuration key. Message reads like Apache
// Kafka's own message for the same problem, e.g.
// "Invalid value abc for configuration retention.ms: Not a number of type LONG".
type Error struct {
	Kind    error
	Key     string
	Message string
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Kind }

// invalidValue builds Kafka's ConfigException message for a bad value.
func invalidValue(key, value, reason string) *Error {
	msg := "Invalid value " + value + " for configuration " + key
	if reason != "" {
		msg += ": " + reason
	}
	return &Error{Kind: ErrInvalidValue, Key: key, Message: msg}
}
