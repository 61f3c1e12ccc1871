package registry

import (
	"errors"
	"fmt"
	"net/http"
)

// apiError is an error answered with Confluent's status and error code.
type apiError struct {
	status  int
	code    int
	message string
}

func (e *apiError) Error() string { return e.message }

func newError(status, code int, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// Confluent's error codes.
func errSubjectNotFound(subject string) *apiError {
	return newError(http.StatusNotFound, 40401, "Subject '%s' not found.", subject)
}
func errVersionNotFound(version string) *apiError {
	return newError(http.StatusNotFound, 40402, "Version %s not found.", version)
}
func errSchemaNotFound() *apiError {
	return newError(http.StatusNotFound, 40403, "Schema not found")
}
func errSubjectSoftDeleted(subject string) *apiError {
	return newError(http.StatusNotFound, 40404, "Subject '%s' was soft deleted.Set permanent=true to delete permanently", subject)
}
func errSubjectNotSoftDeleted(subject string) *apiError {
	return newError(http.StatusNotFound, 40405, "Subject '%s' was not deleted first before being permanently deleted", subject)
}
func errVersionSoftDeleted(subject string, version int) *apiError {
	return newError(http.StatusNotFound, 40406, "Subject '%s' Version %d was soft deleted.Set permanent=true to delete permanently", subject, version)
}
func errVersionNotSoftDeleted(subject string, version int) *apiError {
	return newError(http.StatusNotFound, 40407, "Subject '%s' Version %d was not deleted first before being permanently deleted", subject, version)
}
func errSubjectLevelNotConfigured(subject string) *apiError {
	return newError(http.StatusNotFound, 40408, "Subject '%s' does not have subject-level compatibility configured", subject)
}
func errSubjectModeNotConfigured(subject string) *apiError {
	return newError(http.StatusNotFound, 40409, "Subject '%s' does not have subject-level mode configured", subject)
}
func errIncompatible(messages []string) *apiError {
	return newError(http.StatusConflict, 409, "Schema being registered is incompatible with an earlier schema for subject; %v", messages)
}
func errInvalidSchemaBody(err error) *apiError {
	return newError(http.StatusUnprocessableEntity, 42201, "Invalid schema: %v", err)
}
func errInvalidVersion(version string) *apiError {
	return newError(http.StatusUnprocessableEntity, 42202, "The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", version)
}
func errInvalidLevel(level string) *apiError {
	return newError(http.StatusUnprocessableEntity, 42203, "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive (got %q)", level)
}
func errInvalidMode(mode string) *apiError {
	return newError(http.StatusUnprocessableEntity, 42204, "Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE, IMPORT (got %q)", mode)
}
func errNotPermitted(format string, args ...any) *apiError {
	return newError(http.StatusUnprocessableEntity, 42205, format, args...)
}
func errReferenceExists(subject string, version int) *apiError {
	return newError(http.StatusUnprocessableEntity, 42206, "One or more references exist to the schema {subject=%s,version=%d}.", subject, version)
}
func errStoreFailure(err error) *apiError {
	return newError(http.StatusInternalServerError, 50001, "Error in the backend data store: %v", err)
}
func errTimeout() *apiError {
	return newError(http.StatusInternalServerError, 50002, "Operation timed out")
}

func asAPIError(err error) *apiError {
	var api *apiError
	if errors.As(err, &api) {
		return api
	}
	return errStoreFailure(err)
}
