package httpserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrorBody is the error answer Confluent's services send: an error code
// that refines the HTTP status (40401, 42201, ...) and a message.
type ErrorBody struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

// WriteJSON answers status with v encoded as JSON and the given content
// type (application/json when empty).
func WriteJSON(w http.ResponseWriter, status int, contentType string, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(ErrorBody{ErrorCode: 50001, Message: "encoding the answer: " + err.Error()})
	}
	if contentType == "" {
		contentType = "application/json"
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// WriteError answers status with Confluent's error body.
func WriteError(w http.ResponseWriter, status int, contentType string, code int, message string) {
	WriteJSON(w, status, contentType, ErrorBody{ErrorCode: code, Message: message})
}

// Errors of ReadJSON, so a service can map each to its own error code.
var (
	ErrBodyTooLarge = errors.New("httpserve: request body too large")
	ErrMalformed    = errors.New("httpserve: malformed JSON body")
)

// ReadJSON decodes the request body into v. The body is already bounded by
// the server (Config.MaxBodyBytes); exceeding the bound answers
// ErrBodyTooLarge, anything that is not one JSON value answers
// ErrMalformed. An empty body decodes as if it were "{}" when allowEmpty.
func ReadJSON(r *http.Request, v any, allowEmpty bool) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return ErrBodyTooLarge
		}
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if allowEmpty {
			return nil
		}
		return fmt.Errorf("%w: empty body", ErrMalformed)
	}
	decoder := json.NewDecoder(bytes.NewReader(body))
	if err := decoder.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if decoder.More() {
		return fmt.Errorf("%w: more than one JSON value", ErrMalformed)
	}
	return nil
}
