package registry

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/samsa-streaming/samsa/internal/httpserve"
)

// forwardedHeader marks a request forwarded by another registry, which the
// receiver serves itself rather than forwarding again.
const forwardedHeader = "X-Samsa-Registry-Forwarded"

// maxForwardedAnswerBytes bounds a writer's answer to a forwarded write
// (an id, a version list, a level): far above any real one.
const maxForwardedAnswerBytes = 1 << 20

// errForwarding is Confluent's 50003.
func errForwarding(err error) *apiError {
	return newError(http.StatusInternalServerError, 50003, "Error while forwarding the request to the leader: %v", err)
}

// forwardIfNeeded sends a write to the elected writer when this node is
// not it, copying the writer's answer back. It reports whether it answered.
func (r *Registry) forwardIfNeeded(w http.ResponseWriter, req *http.Request) bool {
	if r.election == nil || req.Header.Get(forwardedHeader) != "" {
		return false
	}
	ctx, cancel := context.WithTimeout(req.Context(), time.Duration(r.config.TimeoutMs)*time.Millisecond)
	defer cancel()
	writerURL, isWriter := r.election.writer()
	for writerURL == "" && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
		writerURL, isWriter = r.election.writer()
	}
	if isWriter {
		return false
	}
	fail := func(err error) bool {
		api := errForwarding(err)
		httpserve.WriteError(w, api.status, ContentType, api.code, api.message)
		return true
	}
	if writerURL == "" {
		return fail(errors.New("no writer elected yet"))
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		api := newError(http.StatusRequestEntityTooLarge, 413, "Request body too large")
		httpserve.WriteError(w, api.status, ContentType, api.code, api.message)
		return true
	}
	forward, err := http.NewRequestWithContext(ctx, req.Method, writerURL+req.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return fail(err)
	}
	for _, name := range []string{"Content-Type", "Accept", "Authorization"} {
		if value := req.Header.Get(name); value != "" {
			forward.Header.Set(name, value)
		}
	}
	forward.Header.Set(forwardedHeader, "1")
	response, err := r.forwardClient.Do(forward)
	if err != nil {
		return fail(err)
	}
	defer response.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(response.Body, maxForwardedAnswerBytes))
	if err != nil {
		return fail(err)
	}
	if response.StatusCode < 300 {
		// Read your writes: the client's next read may come here.
		if err := r.catchUp(ctx); err != nil {
			return fail(err)
		}
	}
	w.Header().Set("Content-Type", response.Header.Get("Content-Type"))
	w.WriteHeader(response.StatusCode)
	_, _ = w.Write(answer)
	return true
}
