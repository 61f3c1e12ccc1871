package registry

import (
	"net/http"
	"slices"
	"strings"

	"github.com/samsa-streaming/samsa/internal/authz"
)

// schemaAnswer is a schema by id.
type schemaAnswer struct {
	SchemaType string      `json:"schemaType,omitempty"`
	References []reference `json:"references,omitempty"`
	Schema     string      `json:"schema"`
}

type subjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

func (r *Registry) getSchemaByID(req *http.Request) (any, error) {
	id, err := parseID(req.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return r.read(func(s *state) (any, error) {
		stored := s.schemas[id]
		if stored == nil {
			return nil, errSchemaNotFound()
		}
		if !r.readableID(req, s, id) {
			return nil, errForbiddenID(id)
		}
		answer := schemaAnswer{References: stored.References, Schema: stored.Schema}
		if stored.SchemaType != typeAvro {
			answer.SchemaType = stored.SchemaType
		}
		return answer, nil
	})
}

// usesOf lists the subject versions registered with id.
func (s *state) usesOf(id int, includeDeleted bool) []subjectVersion {
	out := []subjectVersion{}
	for name := range s.subjects {
		for _, v := range s.sortedVersions(name, includeDeleted) {
			if v.ID == id {
				out = append(out, subjectVersion{Subject: name, Version: v.Version})
			}
		}
	}
	slices.SortFunc(out, func(a, b subjectVersion) int {
		if c := strings.Compare(a.Subject, b.Subject); c != 0 {
			return c
		}
		return a.Version - b.Version
	})
	return out
}

func (r *Registry) getSchemaVersionsByID(req *http.Request) (any, error) {
	id, err := parseID(req.PathValue("id"))
	if err != nil {
		return nil, err
	}
	includeDeleted := queryBool(req, "deleted")
	return r.read(func(s *state) (any, error) {
		if s.schemas[id] == nil {
			return nil, errSchemaNotFound()
		}
		if !r.readableID(req, s, id) {
			return nil, errForbiddenID(id)
		}
		out := []subjectVersion{}
		for _, use := range s.usesOf(id, includeDeleted) {
			if r.allowed(req, authz.ResourceSubject, use.Subject, authz.OpDescribe) {
				out = append(out, use)
			}
		}
		return out, nil
	})
}

func (r *Registry) getSchemaSubjectsByID(req *http.Request) (any, error) {
	id, err := parseID(req.PathValue("id"))
	if err != nil {
		return nil, err
	}
	includeDeleted := queryBool(req, "deleted")
	return r.read(func(s *state) (any, error) {
		if s.schemas[id] == nil {
			return nil, errSchemaNotFound()
		}
		if !r.readableID(req, s, id) {
			return nil, errForbiddenID(id)
		}
		out := []string{}
		for _, use := range s.usesOf(id, includeDeleted) {
			if !slices.Contains(out, use.Subject) && r.allowed(req, authz.ResourceSubject, use.Subject, authz.OpDescribe) {
				out = append(out, use.Subject)
			}
		}
		return out, nil
	})
}

func (r *Registry) listSchemas(req *http.Request) (any, error) {
	includeDeleted, latestOnly := queryBool(req, "deleted"), queryBool(req, "latestOnly")
	prefix := req.URL.Query().Get("subjectPrefix")
	return r.read(func(s *state) (any, error) {
		out := []versionAnswer{}
		// Subjects the principal may not read are left out.
		for _, name := range r.visible(req, s.subjectNames(includeDeleted, false, prefix), authz.OpRead) {
			versions := s.sortedVersions(name, includeDeleted)
			if latestOnly && len(versions) > 0 {
				versions = versions[len(versions)-1:]
			}
			for _, v := range versions {
				out = append(out, answerFor(s, v))
			}
		}
		return out, nil
	})
}

// compatibilityAnswer is a compatibility check's answer.
type compatibilityAnswer struct {
	IsCompatible bool     `json:"is_compatible"`
	Messages     []string `json:"messages,omitempty"`
}

func (r *Registry) checkAgainstVersion(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	number, err := parseVersion(req.PathValue("version"))
	if err != nil {
		return nil, err
	}
	var body registerRequest
	if err := readBody(req, &body, false); err != nil {
		return nil, err
	}
	verbose := queryBool(req, "verbose")
	return r.read(func(s *state) (any, error) {
		if len(s.sortedVersions(subjectName, false)) == 0 {
			return nil, errSubjectNotFound(subjectName)
		}
		v := s.findVersion(subjectName, number, false)
		if v == nil {
			return nil, errVersionNotFound(req.PathValue("version"))
		}
		parsed, _, err := s.parseRequest(body)
		if err != nil {
			return nil, err
		}
		stored := s.schemas[v.ID]
		dependencies, err := s.dependencies(stored.References, 0)
		if err != nil {
			return nil, errStoreFailure(err)
		}
		old, err := parseSchema(stored.SchemaType, stored.Schema, dependencies)
		if err != nil {
			return nil, errStoreFailure(err)
		}
		level := strings.TrimSuffix(s.compatibilityLevel(subjectName), "_TRANSITIVE")
		return compatibilityResult(checkCompatibility(level, parsed, []parsedSchema{old}), verbose), nil
	})
}

func (r *Registry) checkAgainstAll(req *http.Request) (any, error) {
	subjectName := req.PathValue("subject")
	var body registerRequest
	if err := readBody(req, &body, false); err != nil {
		return nil, err
	}
	verbose := queryBool(req, "verbose")
	return r.read(func(s *state) (any, error) {
		parsed, _, err := s.parseRequest(body)
		if err != nil {
			return nil, err
		}
		previous, err := s.parsedVersions(subjectName)
		if err != nil {
			return nil, errStoreFailure(err)
		}
		return compatibilityResult(checkCompatibility(s.compatibilityLevel(subjectName), parsed, previous), verbose), nil
	})
}

func compatibilityResult(issues []string, verbose bool) compatibilityAnswer {
	answer := compatibilityAnswer{IsCompatible: len(issues) == 0}
	if verbose {
		answer.Messages = append([]string{}, issues...)
	}
	return answer
}
