package registry

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/httpserve"
)

// ContentType is what every answer is sent as, Confluent's v1 type.
const ContentType = "application/vnd.schemaregistry.v1+json"

// acceptedContentTypes are the request body types Confluent accepts.
var acceptedContentTypes = map[string]bool{
	"application/vnd.schemaregistry.v1+json": true,
	"application/vnd.schemaregistry+json":    true,
	"application/json":                       true,
	"application/octet-stream":               true,
}

// Handler serves Confluent's Schema Registry REST API.
func (r *Registry) Handler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, n need, h func(*http.Request) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, req *http.Request) { r.serve(w, req, n, h) })
	}
	write := func(pattern string, n need, h func(*http.Request) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, req *http.Request) {
			if (req.Method == http.MethodPost || req.Method == http.MethodPut) && checkContentType(req) != nil {
				r.serve(w, req, n, h) // answers 415 here, not at the writer
				return
			}
			// Checked here with the client's own address before a forward;
			// the writer checks the forwarded request again.
			if err := r.check(req, n); err != nil {
				api := asAPIError(err)
				httpserve.WriteError(w, api.status, ContentType, api.code, api.message)
				return
			}
			if !r.forwardIfNeeded(w, req) {
				r.serve(w, req, n, h)
			}
		})
	}
	raw := func(pattern string, n need, h func(*http.Request) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, req *http.Request) { r.serveRaw(w, req, n, h) })
	}
	// Each route's ACL is in authorize.go's table; routes with nil check
	// per item inside the handler, or need none.
	handle("GET /{$}", nil, func(*http.Request) (any, error) { return map[string]any{}, nil })
	handle("GET /subjects", nil, r.listSubjects)
	write("POST /subjects/{subject}/versions", onSubject(authz.OpWrite), r.register)
	handle("POST /subjects/{subject}", onSubject(authz.OpRead), r.lookup)
	handle("GET /subjects/{subject}/versions", onSubject(authz.OpDescribe), r.listVersions)
	handle("GET /subjects/{subject}/versions/{version}", onSubject(authz.OpRead), r.getVersion)
	handle("GET /subjects/{subject}/versions/{version}/referencedby", onSubject(authz.OpRead), r.referencedBy)
	write("DELETE /subjects/{subject}", onSubject(authz.OpDelete), r.deleteSubject)
	write("DELETE /subjects/{subject}/versions/{version}", onSubject(authz.OpDelete), r.deleteVersion)
	handle("GET /schemas", nil, r.listSchemas)
	handle("GET /schemas/types", nil, func(*http.Request) (any, error) { return []string{typeJSON, typeProtobuf, typeAvro}, nil })
	handle("GET /schemas/ids/{id}", nil, r.getSchemaByID)
	handle("GET /schemas/ids/{id}/versions", nil, r.getSchemaVersionsByID)
	handle("GET /schemas/ids/{id}/subjects", nil, r.getSchemaSubjectsByID)
	handle("POST /compatibility/subjects/{subject}/versions/{version}", onSubject(authz.OpRead), r.checkAgainstVersion)
	handle("POST /compatibility/subjects/{subject}/versions", onSubject(authz.OpRead), r.checkAgainstAll)
	for _, route := range []string{"/config", "/config/{subject}", "/mode", "/mode/{subject}"} {
		get, put, del := r.getSubjectConfig, r.putConfig, r.deleteConfig
		switch route {
		case "/config":
			get = r.getGlobalConfig
		case "/mode", "/mode/{subject}":
			get, put, del = r.getMode, r.putMode, r.deleteMode
		}
		handle("GET "+route, onConfig(authz.OpDescribeConfigs), get)
		write("PUT "+route, onConfig(authz.OpAlterConfigs), put)
		write("DELETE "+route, onConfig(authz.OpAlterConfigs), del)
	}
	// Raw schema text routes answer the schema itself, not a JSON object.
	raw("GET /subjects/{subject}/versions/{version}/schema", onSubject(authz.OpRead), r.getVersion)
	raw("GET /schemas/ids/{id}/schema", nil, r.getSchemaByID)
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		httpserve.WriteError(w, http.StatusNotFound, ContentType, 404, "HTTP 404 Not Found")
	})
	return mux
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request, n need, h func(*http.Request) (any, error)) {
	result, err := r.call(req, n, h)
	if err != nil {
		api := asAPIError(err)
		httpserve.WriteError(w, api.status, ContentType, api.code, api.message)
		return
	}
	httpserve.WriteJSON(w, http.StatusOK, ContentType, result)
}

func (r *Registry) serveRaw(w http.ResponseWriter, req *http.Request, n need, h func(*http.Request) (any, error)) {
	result, err := r.call(req, n, h)
	if err != nil {
		api := asAPIError(err)
		httpserve.WriteError(w, api.status, ContentType, api.code, api.message)
		return
	}
	var text string
	switch v := result.(type) {
	case versionAnswer:
		text = v.Schema
	case schemaAnswer:
		text = v.Schema
	}
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(text))
}

func (r *Registry) call(req *http.Request, n need, h func(*http.Request) (any, error)) (any, error) {
	if err := r.check(req, n); err != nil {
		return nil, err
	}
	if req.Method == http.MethodPost || req.Method == http.MethodPut {
		if err := checkContentType(req); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(req.Context(), time.Duration(r.config.TimeoutMs)*time.Millisecond)
	defer cancel()
	if err := r.waitReady(ctx); err != nil {
		return nil, errTimeout()
	}
	result, err := h(req.WithContext(ctx))
	if err != nil && errors.Is(err, errStore) && ctx.Err() != nil {
		return nil, errTimeout()
	}
	return result, err
}

// checkContentType accepts Confluent's four types and a missing one.
func checkContentType(req *http.Request) error {
	header := req.Header.Get("Content-Type")
	if header == "" {
		return nil
	}
	mediaType, _, err := mime.ParseMediaType(header)
	if err != nil || !acceptedContentTypes[strings.ToLower(mediaType)] {
		return newError(http.StatusUnsupportedMediaType, 415, "HTTP 415 Unsupported Media Type")
	}
	return nil
}

// readBody decodes a JSON body, mapping failures to Confluent's answers.
func readBody(req *http.Request, v any, allowEmpty bool) error {
	err := httpserve.ReadJSON(req, v, allowEmpty)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, httpserve.ErrBodyTooLarge):
		return newError(http.StatusRequestEntityTooLarge, 413, "Request body too large")
	default:
		return newError(http.StatusBadRequest, 400, "Unrecognized or malformed JSON body: %v", err)
	}
}

func queryBool(req *http.Request, name string) bool {
	value, _ := strconv.ParseBool(req.URL.Query().Get(name))
	return value
}

// parseVersion parses a version path element: a positive number, latest
// or -1 (latest). It returns 0 for latest.
func parseVersion(text string) (int, error) {
	if text == "latest" || text == "-1" {
		return 0, nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 {
		return 0, errInvalidVersion(text)
	}
	return n, nil
}
